#!/usr/bin/env bash
# An example runner: what `factory-schedule tick -- RUNNER` fires for each admitted segment.
#
# It follows the schedule's contract through the CLI: ask (`call admit`) before
# every provider contact, contact the provider only when the answer says
# "dispatch": true, report every contact (`call end`), report "lost" whenever it
# cannot be sure what happened, defer on a usage limit or a sign-in failure,
# and settle at the end. It never sends a unit of work whose effect is unknown.
#
# The tick provides FACTORY_JOURNAL, FACTORY_OCCURRENCE, FACTORY_RUNNER and
# FACTORY_SEGMENT. Settings (environment): RUNNER_TASK (scan), RUNNER_WORK (the
# work keys, space-separated), RUNNER_BOUND (tokens per call), RUNNER_SIGN_IN (the
# sign-in the provider session uses), PROVIDER (the provider command; it takes
# --work KEY --bound N and prints the report JSON; it starts through `factory-schedule
# provider-env`, with an allow-listed environment and the names in PROVIDER_ENV, never
# a FACTORY_* variable), FACTORY_SCHEDULE (how to run
# the CLI), PYTHON (reads the CLI's JSON answers; default python3).
set -uo pipefail

FS=${FACTORY_SCHEDULE:-factory-schedule}
PROVIDER=${PROVIDER:-"python3 $(dirname "$0")/fake_provider.py"}
PASS=${PROVIDER_ENV:-}   # more variables the provider needs, by name; it never gets FACTORY_* (provider-env)
TASK=${RUNNER_TASK:-scan}
WORK=${RUNNER_WORK:-"item-1 item-2"}
BOUND=${RUNNER_BOUND:-150000}
SIGN_IN=${RUNNER_SIGN_IN:-owner@example.com}
OCC=${FACTORY_OCCURRENCE:?run me from factory-schedule tick}
RUNNER=${FACTORY_RUNNER:?run me from factory-schedule tick}

PY=${PYTHON:-python3}

log() { echo "runner $RUNNER: $*" >&2; }

field() {  # field NAME <<<JSON: one top-level field of a JSON answer, "" when absent or not JSON
  "$PY" -c 'import json, sys
try:
    value = json.load(sys.stdin).get(sys.argv[1], "")
except Exception:
    value = ""
print(str(value).lower() if isinstance(value, bool) else value)' "$1"
}

defer() {  # defer REASON [BOUND]: stop this segment; the schedule says when it resumes
  local extra=()
  [ -n "${2:-}" ] && extra=(--bound "$2")
  $FS defer --occurrence "$OCC" --runner "$RUNNER" --reason "$1" ${extra[@]+"${extra[@]}"} >/dev/null
  local rc=$?
  log "deferred ($1), exit $rc"
  exit $rc
}

settle() {  # settle STATUS REASON
  $FS settle --occurrence "$OCC" --settled-by "$RUNNER" --status "$1" --reason "$2" >/dev/null
  local rc=$?
  log "settled $1 ($2), exit $rc"
  exit $rc
}

end_call() {  # end_call CALL REPORT_JSON: report a contact, retrying a failed report
  # The same report for the same call is the same command: a retry after a lost answer replays it, so
  # trying again is always safe, and a report given up on would leave a contact that happened unreported.
  local attempt delay=1
  for attempt in 1 2 3 4 5 6; do
    if echo "$2" | $FS call end --occurrence "$OCC" --runner "$RUNNER" --call "$1" >/dev/null; then
      return 0
    fi
    [ "$attempt" -lt 6 ] || break
    log "reporting call $1 failed (attempt $attempt); trying again in ${delay}s"
    sleep "$delay"
    delay=$((delay * 2))
  done
  return 1
}

unsure=0
done_any=0
for work in $WORK; do
  answer=$($FS call admit --occurrence "$OCC" --runner "$RUNNER" --task "$TASK" --work "$work" \
           --bound "$BOUND" --sign-in "$SIGN_IN")
  rc=$?
  case $rc in
    0) ;;                                   # admitted, dispatch: true — one contact is licensed
    10)                                     # a replay: no contact is licensed
       if [ "$(field in_flight <<<"$answer")" = "true" ]; then
         end_call "$(field call <<<"$answer")" '{"kind": "lost"}'  # we cannot know if it went out
         unsure=1
       fi
       continue ;;
    20) defer usage-limit ;;                # this segment's or the account's window is closed
    26) defer sign-in-needed ;;             # the owner must sign in and record the account
    28) defer budget-exhausted "$BOUND" ;;  # the week's ceiling cannot fit this call
    24|25) unsure=1; continue ;;            # unknown-effect / duplicate-work: never sent again
    22) break ;;                            # the night's deadline: stop asking
    *) log "admission refused or failed (exit $rc): $answer"; exit "$rc" ;;
  esac
  call=$(field call <<<"$answer")
  report=$($FS provider-env --pass "$PASS" -- $PROVIDER --work "$work" --bound "$BOUND")
  if [ $? -ne 0 ] || [ -z "$(field kind <<<"$report")" ]; then
    report='{"kind": "lost"}'                # no trustworthy answer: the effect is unknown
  fi
  if ! end_call "$call" "$report"; then
    log "could not report call $call; leaving the segment for a supervisor"
    exit 1
  fi
  case $(field kind <<<"$report") in
    usage-limit) defer usage-limit ;;
    sign-in-needed) defer sign-in-needed ;;
    lost) unsure=1 ;;
    result) done_any=1 ;;
  esac
done

if [ $unsure -eq 0 ] && [ $done_any -eq 1 ]; then
  settle completed "all work reported"
elif [ $done_any -eq 1 ]; then
  settle partial "some work of unknown effect"
else
  settle unavailable "no work completed"
fi
