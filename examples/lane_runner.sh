#!/usr/bin/env bash
# An example run of a staged lane: what `factory-schedule tick -- RUNNER` fires for a portfolio/<run> lane
# (portfolio/promotion, portfolio/promotion-reviewer, portfolio/maturation, portfolio/maturation-reviewer).
#
# One run works ONE task of its lane, inside the occurrence the schedule admitted for it:
#   1. `lanes claim --occurrence` takes the lane's next task for this run (exit 50: nothing to take, so it
#      settles "completed", or "partial" when an earlier segment's task was handed back or a call's effect is
#      unknown); the claim is refused (exit 67) unless the occurrence runs for this token;
#   2. `call admit` before the one provider contact, against the same weekly ceiling and account stops
#      as every discovery call (it defers on a closed window, a sign-in refusal, an exhausted week);
#   3. the provider answers with the stage's report JSON (its final answer), and `call end` reports the
#      contact as every runner does;
#   4. `lanes report` sends the stage's report (the task's artifact contract; exit 61 when the answer
#      does not meet it), which releases the run's locks, and the run settles its occurrence.
#
# The tick provides FACTORY_JOURNAL, FACTORY_OCCURRENCE, FACTORY_RUNNER and FACTORY_LANE. Settings
# (environment): RUNNER_BOUND (tokens for the call; default 150000), RUNNER_SIGN_IN, PROVIDER (takes
# --work KEY --bound N --answer FILE, prints the call's report JSON and writes the stage's report to FILE;
# the claimed task is in $LANE_TASK for its prompt; it starts through `factory-schedule provider-env`, with an
# allow-listed environment, LANE_TASK and the names in PROVIDER_ENV, never a FACTORY_* variable),
# FACTORY_SCHEDULE, PYTHON.
set -uo pipefail

FS=${FACTORY_SCHEDULE:-factory-schedule}
PROVIDER=${PROVIDER:-"python3 $(dirname "$0")/fake_provider.py"}
PASS=${PROVIDER_ENV:-}   # more variables the provider needs, by name; it never gets FACTORY_* (provider-env)
BOUND=${RUNNER_BOUND:-150000}
SIGN_IN=${RUNNER_SIGN_IN:-owner@example.com}
OCC=${FACTORY_OCCURRENCE:?run me from factory-schedule tick}
RUNNER=${FACTORY_RUNNER:?run me from factory-schedule tick}
RUN=${FACTORY_LANE:?run me from factory-schedule tick}
RUN=${RUN#portfolio/}   # the run's identity is its lane's rhythm
LANE=${RUN%%-*}          # promotion-reviewer works the promotion lane
case $RUN in *-reviewer) TASK=review ;; *) TASK=stage ;; esac  # the commission's task of the run's lane
PY=${PYTHON:-python3}

log() { echo "lane run $RUNNER ($RUN): $*" >&2; }

field() {  # field NAME <<<JSON: one field of a JSON answer (a.b for a nested one), "" when absent
  "$PY" -c 'import json, sys
try:
    value = json.load(sys.stdin)
    for part in sys.argv[1].split("."):
        value = value.get(part, "")
except Exception:
    value = ""
print(str(value).lower() if isinstance(value, bool) else value)' "$1"
}

LOCKS=()
release_locks() {  # the lane's locks this run took with its claim (a report releases them itself)
  local scope
  for scope in ${LOCKS[@]+"${LOCKS[@]}"}; do
    $FS lease release --scope "$scope" --owner "$RUNNER" >/dev/null || log "could not release $scope"
  done
}

settle() {  # settle STATUS REASON
  $FS settle --occurrence "$OCC" --settled-by "$RUNNER" --status "$1" --reason "$2" >/dev/null
  local rc=$?
  log "settled $1 ($2), exit $rc"
  exit $rc
}

defer() {  # defer REASON [BOUND]: the claimed task stays this occurrence's; a supervisor returns it
  local extra=()
  [ -n "${2:-}" ] && extra=(--bound "$2")
  release_locks
  $FS defer --occurrence "$OCC" --runner "$RUNNER" --reason "$1" ${extra[@]+"${extra[@]}"} >/dev/null
  local rc=$?
  log "deferred ($1), exit $rc"
  exit $rc
}

# The lane's locks take the tick's lease TTL, and are heartbeated while the provider call runs (below): a lock
# gone stale under a live call would read as a dead run in health.
TTL=${FACTORY_LEASE_TTL:-60}
claim=$($FS lanes claim --lane "$LANE" --occurrence "$OCC" --runner "$RUNNER" --ttl "$TTL")
rc=$?
case $rc in
  0) ;;
  50) why=$(field reason <<<"$claim")
      # An earlier segment's task a supervisor handed back was not worked: never "completed".
      [ "$why" = occurrence-handed-back ] && settle partial "handed back: $(field detail <<<"$claim")"
      $FS settle --occurrence "$OCC" --settled-by "$RUNNER" --status completed --reason "nothing to claim: $why" \
        >/dev/null
      rc=$?
      [ $rc -eq 45 ] && settle partial "nothing to claim: $why (a call's effect is unknown)"  # RULE
      log "settled completed (nothing to claim: $why), exit $rc"
      exit $rc ;;
  *) log "claim refused (exit $rc): $claim"; settle unavailable "claim refused: exit $rc" ;;
esac
mapfile -t LOCKS < <("$PY" -c 'import json, sys; print("\n".join(json.load(sys.stdin).get("leases", [])))' <<<"$claim")
N=$(field result.task <<<"$claim")
export LANE_TASK
LANE_TASK=$("$PY" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["result"]))' <<<"$claim")
log "claimed task $N ($(field result.stage <<<"$claim"))"

answer=$($FS call admit --occurrence "$OCC" --runner "$RUNNER" --task "$TASK" --work "task-$N" \
         --bound "$BOUND" --sign-in "$SIGN_IN")
rc=$?
case $rc in
  0) ;;                                   # one contact licensed
  20) defer usage-limit ;;
  26) defer sign-in-needed ;;
  28) defer budget-exhausted "$BOUND" ;;
  23|24|25)  # call-bound, unknown-effect, duplicate-work: an earlier segment of this occurrence sent the task's
             # work, never sent again in it: hand the task back (counted against its retry cap), as `run` does
    release_locks
    $FS lanes abandon --lane "$LANE" --task "$N" --runner "$RUNNER" --confirmed-by "$RUNNER" \
        --evidence "$OCC: the work of task $N went out in an earlier segment (exit $rc) and is not sent again in it" \
        >/dev/null || log "could not hand task $N back"
    settle partial "handed back: task $N: its call refused (exit $rc) after an earlier segment sent it" ;;
  *) log "admission refused (exit $rc): $answer"; release_locks; settle partial "call refused: exit $rc" ;;
esac
call=$(field call <<<"$answer")
final=$(mktemp)
beat=$("$PY" -c "print($TTL / 3)")
( while sleep "$beat"; do $FS lanes heartbeat --lane "$LANE" --runner "$RUNNER" >/dev/null || exit; done ) &
heartbeats=$!
trap 'kill "$heartbeats" 2>/dev/null; rm -f "$final"' EXIT
report=$($FS provider-env --pass "LANE_TASK $PASS" -- $PROVIDER --work "task-$N" --bound "$BOUND" --answer "$final")
kill "$heartbeats" 2>/dev/null
if [ $? -ne 0 ] || [ -z "$(field kind <<<"$report")" ]; then
  report='{"kind": "lost"}'
fi
if ! echo "$report" | $FS call end --occurrence "$OCC" --runner "$RUNNER" --call "$call" >/dev/null; then
  log "could not report call $call; leaving the segment for a supervisor"
  exit 1
fi
case $(field kind <<<"$report") in
  usage-limit) defer usage-limit ;;
  sign-in-needed) defer sign-in-needed ;;
  lost) release_locks; settle partial "the call's effect is unknown" ;;
esac

$FS lanes report --lane "$LANE" --task "$N" --runner "$RUNNER" <"$final" >/dev/null
rc=$?
[ $rc -eq 0 ] && settle completed "task $N reported"
[ $rc -eq 5 ] && settle completed "task $N reported (a lock had moved on meanwhile)"
release_locks
settle partial "the stage's report was refused (exit $rc)"
