"""Each recorded transcript, replayed by the fake `claude` or `codex` on PATH, comes to exactly one report.

The fakes are real processes (tests/fakes): these tests run the adapters' process
handling (deadline, bound, kill) as well as their parsing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.tui.host.providers import claude, claude_text, codex
from factory_schedule.tui.host.providers.calls import make_call
from factory_schedule.tui.host.providers.ending import ProcessEnd
from tests.tui.provider_support import FAKE_SETTINGS, TRANSCRIPTS, fake_env

BOUND = 150_000
HANG_TIMEOUT = 3.0
SOON = "SOON"  # stands for "the reset the fake wrote: about an hour from now"
WITHIN_A_DAY = "WITHIN_A_DAY"  # stands for "a reset a limit's text named: a local time in the next day"

CLAUDE_EXPECTED: dict[str, tuple[dict[str, Any], str | None]] = {
    "normal": ({"kind": "result", "tokens": 3000, "output": "ok",
                "observation": {"status": "allowed", "rateLimitType": "five_hour", "resetsAt": SOON}}, None),
    "warning": ({"kind": "result", "tokens": 3000, "output": "ok",
                 "observation": {"status": "allowed_warning", "rateLimitType": "five_hour", "resetsAt": SOON,
                                 "isUsingOverage": False}}, None),
    "rejected": ({"kind": "usage-limit", "tokens": 0,
                  "observation": {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": SOON,
                                  "isUsingOverage": False}}, "usage-limit"),
    "overage": ({"kind": "result", "tokens": 3000, "output": "ok",
                 "observation": {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": SOON,
                                 "isUsingOverage": True}}, "overage"),
    "unauthorized-401": ({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}, "sign-in"),
    "forbidden-403": ({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 403}, "sign-in"),
    "crash": ({"kind": "lost"}, None),
    "hang": ({"kind": "lost"}, None),
    "hang-with-tool": ({"kind": "lost"}, None),
    "hang-with-detached-tool": ({"kind": "lost"}, None),
    "malformed": ({"kind": "lost"}, None),
    "cut-off": ({"kind": "lost"}, None),
    "unknown-event": ({"kind": "result", "tokens": 3000, "output": "ok",
                       "observation": {"status": "allowed", "rateLimitType": "five_hour", "resetsAt": SOON}}, None),
    "over-bound": ({"kind": "result", "tokens": 183_500, "output": "malformed"}, None),
    "sparse-window": ({"kind": "result", "tokens": 3000, "output": "ok", "observation": {"status": "allowed"}}, None),
    # Captured from the real CLI (tests/real_clis/capture.sh): logged out, and an API on a closed port.
    "real-logged-out": ({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}, "sign-in"),
    "real-unreachable": ({"kind": "unreachable"}, "unreachable"),
    # Derived from public reports of the real CLI's words (anthropics/claude-code#59637, #18078, #51981 for the
    # limit texts; #69023 for a 429 without a reset; the 2.1.x `overageInUse` field; `errors[]` on
    # error_during_execution):
    "limit-text": ({"kind": "usage-limit", "tokens": 0,
                    "observation": {"status": "rejected", "resetsAt": WITHIN_A_DAY}}, "usage-limit"),
    "limit-text-no-reset": ({"kind": "lost"}, "limit-unread"),
    "overage-in-use": ({"kind": "result", "tokens": 3000, "output": "ok",
                        "observation": {"status": "allowed", "rateLimitType": "five_hour", "resetsAt": SOON,
                                        "isUsingOverage": True}}, "overage"),
    "error-during-execution": ({"kind": "lost"}, None),
    "unauthorized-not-error": ({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}, "sign-in"),
    "fractional-reset": ({"kind": "result", "tokens": 3000, "output": "ok",
                          "observation": {"status": "allowed", "rateLimitType": "five_hour"}}, None),
    "huge-tokens": ({"kind": "lost"}, None),
    "huge-line": ({"kind": "lost"}, None),
    "normal-with-stderr": ({"kind": "result", "tokens": 3000, "output": "ok",
                            "observation": {"status": "allowed", "rateLimitType": "five_hour", "resetsAt": SOON}},
                           None),
}

CODEX_LIMIT = {"status": "rejected", "rateLimitType": "codex", "resetsAt": SOON}
CODEX_EXPECTED: dict[str, tuple[dict[str, Any], str | None]] = {
    "normal": ({"kind": "result", "tokens": 24_885, "output": "ok"}, None),
    "usage-limit": ({"kind": "usage-limit", "tokens": 0, "observation": CODEX_LIMIT}, "usage-limit"),
    "usage-limit-relative": ({"kind": "usage-limit", "tokens": 0, "observation": CODEX_LIMIT}, "usage-limit"),
    "usage-limit-no-reset": ({"kind": "lost"}, "limit-unread"),
    "unauthorized-401": ({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}, "sign-in"),
    "forbidden-403": ({"kind": "sign-in-needed", "tokens": 0, "httpStatus": 403}, "sign-in"),
    "crash": ({"kind": "lost"}, None),
    "hang": ({"kind": "lost"}, None),
    "malformed": ({"kind": "lost"}, None),
    "cut-off": ({"kind": "lost"}, None),
    "unknown-event": ({"kind": "result", "tokens": 24_885, "output": "ok"}, None),
    "over-bound": ({"kind": "result", "tokens": 241_000, "output": "malformed"}, None),
    # Captured from the real CLI (tests/real_clis/capture.sh): offline, it reconnects until it is killed.
    "real-offline": ({"kind": "unreachable"}, "unreachable"),
    # Derived from the real CLI's words (openai/codex event_processor_with_jsonl_output.rs prints an `error`
    # per reconnect; the account messages as its users quote them):
    "reconnect-then-completed": ({"kind": "result", "tokens": 24_885, "output": "ok"}, None),
    "spend-cap": ({"kind": "lost"}, "limit-unread"),
    "plan-upgrade": ({"kind": "lost"}, "limit-unread"),
    "quota": ({"kind": "lost"}, "limit-unread"),
    "huge-tokens": ({"kind": "lost"}, None),
    "huge-line": ({"kind": "lost"}, None),
}




def _assert_report(got: dict[str, Any], expected: dict[str, Any], before: float) -> None:
    wanted = expected.get("observation", {}).get("resetsAt")
    if wanted in (SOON, WITHIN_A_DAY):
        reset = got.get("observation", {}).get("resetsAt")
        earliest, latest = (before + 3500, time.time() + 3600) if wanted == SOON else (before, time.time() + 90000)
        assert isinstance(reset, int) and earliest <= reset <= latest, got
        expected = {**expected, "observation": {**expected["observation"], "resetsAt": reset}}
    assert got == expected


def test_every_transcript_has_its_expected_report() -> None:
    recorded = {(p.parent.name, p.stem) for p in TRANSCRIPTS.glob("*/*.jsonl")}
    expected = {("claude", n) for n in CLAUDE_EXPECTED} | {("codex", n) for n in CODEX_EXPECTED}
    assert recorded == expected


@pytest.mark.parametrize(("provider", "name"), [("claude", n) for n in CLAUDE_EXPECTED]
                         + [("codex", n) for n in CODEX_EXPECTED])
def test_a_replayed_transcript_is_reported_exactly_as_the_provider_said(
        provider: str, name: str, tmp_path: Path) -> None:
    expected, stop = (CLAUDE_EXPECTED if provider == "claude" else CODEX_EXPECTED)[name]
    log = tmp_path / "contacts.log"
    before = time.time()
    made = make_call(provider, provider, f"Scan the repository. [transcript: {name}]", BOUND,  # type: ignore[arg-type]
                     HANG_TIMEOUT, env=fake_env(log), passed=FAKE_SETTINGS, transcript=tmp_path / "call.jsonl")
    _assert_report(made.outcome.report, expected, before)
    assert made.outcome.stop == stop
    assert len(log.read_text().splitlines()) == 1  # one contact, once
    if name in ("hang", "real-offline"):
        assert made.run.end.timed_out == (name == "hang")
    if name == "over-bound":
        assert made.run.end.stopped
        assert time.time() - before < HANG_TIMEOUT  # stopped at the bound, not left to its deadline


def test_a_hung_provider_and_everything_it_started_are_stopped_at_the_deadline(tmp_path: Path) -> None:
    made = make_call("claude", "claude", "[transcript: hang]", BOUND, 1.0, env=fake_env(), passed=FAKE_SETTINGS)
    assert made.outcome.report == {"kind": "lost"}
    assert made.run.pid is not None
    with pytest.raises(ProcessLookupError):
        import os

        os.killpg(made.run.pid, 0)


def test_the_transcript_copy_is_the_providers_bytes_and_stderr_is_kept_only_as_data(tmp_path: Path) -> None:
    copy = tmp_path / "call.jsonl"
    made = make_call("claude", "claude", "[transcript: crash]", BOUND, HANG_TIMEOUT, env=fake_env(),
                     passed=FAKE_SETTINGS, transcript=copy)
    assert copy.read_text().count("\n") == 3
    assert "something went wrong" in made.run.stderr_tail


def test_a_provider_that_cannot_start_is_lost_never_assumed_unsent(tmp_path: Path) -> None:
    made = make_call("codex", str(tmp_path / "no-such-codex"), "x", BOUND, HANG_TIMEOUT)
    assert made.outcome.report == {"kind": "lost"}


# -- parsing alone -------------------------------------------------------------------------


def _claude(lines: list[str], end: ProcessEnd | None = None, now: float = 1_000_000.0) -> Any:
    stream = claude.ClaudeStream(BOUND)
    for line in lines:
        stream.feed(line)
    return stream.outcome(end or ProcessEnd(exit_code=0), now)


RESULT = '{"type":"result","subtype":"success","is_error":false,"usage":{"input_tokens":10,"output_tokens":5}}'


def test_claude_decides_an_api_error_by_is_error_never_by_subtype() -> None:
    line = '{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"usage":{"input_tokens":9}}'
    assert _claude([line]).report == {"kind": "lost"}


def test_claude_a_window_event_of_an_unknown_shape_makes_the_call_lost() -> None:
    odd = '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","isUsingOverage":"no"}}'
    assert _claude([odd, RESULT]).report == {"kind": "lost"}


def test_claude_a_reset_that_is_not_whole_seconds_is_no_reset_and_never_loses_a_completed_call() -> None:
    odd = '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":"soon"}}'
    assert _claude([odd, RESULT]).report == {"kind": "result", "tokens": 15, "output": "ok",
                                             "observation": {"status": "allowed"}}


def test_claude_a_closed_window_with_an_unreadable_reset_stops_the_segment_unguessed() -> None:
    odd = '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1.5}}'
    limited = '{"type":"result","subtype":"success","is_error":true,"usage":{"input_tokens":0}}'
    outcome = _claude([odd, limited])
    assert (outcome.report, outcome.stop) == ({"kind": "lost"}, "limit-unread")


def test_claude_a_closed_window_whose_reset_the_schedule_would_refuse_is_never_sent() -> None:
    far = '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":99999999999}}'
    limited = '{"type":"result","subtype":"success","is_error":true,"usage":{"input_tokens":0,"output_tokens":0}}'
    outcome = _claude([far, limited])
    assert outcome.report == {"kind": "lost"}
    assert outcome.stop == "limit-unread"


def test_claude_an_unknown_event_type_after_the_result_does_not_fail_the_call() -> None:
    assert _claude([RESULT, '{"type":"telemetry","x":1}']).report == {"kind": "result", "tokens": 15, "output": "ok"}


def test_claude_a_clean_result_from_a_process_that_exited_non_zero_is_lost() -> None:
    assert _claude([RESULT], ProcessEnd(exit_code=2)).report == {"kind": "lost"}


def test_claude_streamed_usage_counts_each_message_once() -> None:
    stream = claude.ClaudeStream(bound=1000)
    message = '{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":600,"output_tokens":1}}}'
    assert stream.feed(message) and stream.feed(message)  # the same message repeated for each content block
    assert not stream.feed('{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":400}}}')


# `claude auth status` as the 2.1.197 binary builds it: {loggedIn, authMethod, apiProvider, apiKeySource?} and,
# for a claude.ai sign-in, email, orgId, orgName, subscriptionType (each `?? null`); exit 1 when logged out.
REAL_LOGGED_OUT = '{\n  "loggedIn": false,\n  "authMethod": "none",\n  "apiProvider": "firstParty"\n}\n'
REAL_SIGNED_IN = ('{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty", '
                  '"email": "owner@example.com", "orgId": "0f0e", "orgName": "Owner", "subscriptionType": "max"}')
REAL_API_KEY = '{"loggedIn": true, "authMethod": "api_key", "apiProvider": "firstParty", "apiKeySource": "X"}'


@pytest.mark.parametrize(("text", "read"), [
    (REAL_LOGGED_OUT, (False, None)),
    (REAL_SIGNED_IN, (True, "owner@example.com")),
    (REAL_SIGNED_IN.replace('"owner@example.com"', "null"), (True, None)),
    (REAL_API_KEY, (True, None)),
])
def test_claude_auth_status_is_read_in_the_real_clis_shape(text: str, read: tuple[Any, Any]) -> None:
    assert claude.sign_in_from_auth_status(text) == read


def test_claude_auth_status_gives_the_session_email_when_it_has_one() -> None:
    assert claude.sign_in_from_auth_status('{"loggedIn":true,"email":"me@example.com"}') == (True, "me@example.com")
    assert claude.sign_in_from_auth_status('{"loggedIn":false}') == (False, None)
    assert claude.sign_in_from_auth_status("Logged in") == (None, None)


@pytest.mark.parametrize(("message", "kind"), [
    ("You've hit your usage limit. Try again later.", "usage-limit"),
    ('{"error":{"type":"usage_limit_reached","resets_at":1777936568}}', "usage-limit"),
    ("unexpected status 401 Unauthorized", "sign-in-401"),
    ("Your access token could not be refreshed. Please log out and sign in again.", "sign-in-401"),
    ("unexpected status 403 Forbidden", "sign-in-403"),
    ("stream disconnected before completion", "other"),
    ("read 4010 bytes", "other"),
])
def test_codex_failures_are_classified_by_their_own_words(message: str, kind: str) -> None:
    assert codex.classify_failure(message) == kind


def test_codex_reads_each_reset_form_and_never_guesses_one() -> None:
    now = 1_796_000_000.0
    assert codex.reset_from_message('"resets_at":1796003600', now, "UTC") == 1_796_003_600
    assert codex.reset_from_message("try again in 1 hour 30 minutes.", now, "UTC") == 1_796_005_400
    assert codex.reset_from_message("try again at Dec 1st, 2026 3:30 PM.", now, "UTC") == 1_796_139_000
    assert codex.reset_from_message("try again at Dec 1st, 2026 3:30 PM.", now, "Etc/GMT-1") == 1_796_135_400
    assert codex.reset_from_message("purchase more credits", now, "UTC") is None


def test_codex_an_error_event_the_turn_recovers_from_is_a_completed_turn() -> None:
    stream = codex.CodexStream(BOUND)
    for line in ('{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}',
                 '{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1}}'):
        stream.feed(line)
    assert stream.outcome(ProcessEnd(exit_code=0), 0.0).report == {"kind": "result", "tokens": 6, "output": "ok"}


def test_codex_an_error_event_that_ends_the_turn_is_lost() -> None:
    stream = codex.CodexStream(BOUND)
    stream.feed('{"type":"error","message":"stream disconnected before completion"}')
    assert stream.outcome(ProcessEnd(exit_code=1), 0.0).report == {"kind": "lost"}


def test_codex_a_connection_that_failed_after_the_turn_acted_is_lost_not_unsent() -> None:
    stream = codex.CodexStream(BOUND)
    for line in ('{"type":"item.completed","item":{"id":"i0","type":"command_execution","command":"ls"}}',
                 '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: x)"}'):
        stream.feed(line)
    outcome = stream.outcome(ProcessEnd(exit_code=None, stopped=True), 0.0)
    assert (outcome.report, outcome.stop) == ({"kind": "lost"}, "unreachable")


@pytest.mark.parametrize(("text", "verdict"), [
    ("API Error: Unable to connect to API (ConnectionRefused)", "nothing-sent"),
    ("API Error: Unable to connect to API (FailedToOpenSocket)", "nothing-sent"),
    ("API Error: Unable to connect to API (ENOTFOUND)", "nothing-sent"),
    ("API Error: Unable to connect to API (ECONNRESET)", "unknown"),
    ("API Error: Unable to connect to API", "unknown"),
    ("API Error: 500 Internal server error", None),
])
def test_claude_an_unreachable_api_is_conclusive_only_before_any_byte_was_sent(text: str, verdict: Any) -> None:
    assert claude_text.unreachable(text) == verdict


def test_claude_errors_of_a_failed_run_are_kept_for_the_owner(tmp_path: Path) -> None:
    made = make_call("claude", "claude", "[transcript: error-during-execution]", BOUND, HANG_TIMEOUT,
                     env=fake_env())
    assert "the Bash tool is not allowed" in made.outcome.extra["provider_message"]


@pytest.mark.parametrize(("provider", "name", "words"), [
    ("claude", "unauthorized-401", "Invalid API key"),
    ("codex", "usage-limit", "hit your usage limit"),
    ("codex", "forbidden-403", "403 Forbidden"),
])
def test_a_refusal_keeps_the_providers_message_as_data(provider: str, name: str, words: str) -> None:
    made = make_call(provider, provider, f"[transcript: {name}]", BOUND, HANG_TIMEOUT,  # type: ignore[arg-type]
                     env=fake_env(), passed=FAKE_SETTINGS)
    assert words in made.outcome.extra["provider_message"]
