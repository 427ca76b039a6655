"""Codex (`codex exec --json --skip-git-repo-check -- -`, the prompt on stdin): its JSON lines, read into one report.

What `codex exec --json` prints (docs/guides/real-clis.md cites the sources), one event a line:
`thread.started` (`thread_id`), `turn.started`, `item.started` / `item.updated` / `item.completed` (an `item` with
its `type`; an `error` item is a non-fatal notice), `turn.completed` (`usage`: `input_tokens`,
`cached_input_tokens`, `output_tokens`, and in newer versions `reasoning_output_tokens`), `turn.failed`
(`error.message`) and `error` (`message`). An `error` event is not always the end: Codex prints one for each
reconnect it recovers from ("Reconnecting... 2/5") and the turn goes on to `turn.completed`, so an `error`
decides only a turn that never completed.

`--skip-git-repo-check`: Codex refuses to start outside a git repository unless told, a guard for a person who
might let an agent edit files no version control keeps. A scheduled call runs in the workdir the owner named in
lane.toml (the lane's own folder by default), under the sandbox its `args` choose (Codex's default for `exec`
is read-only), so the check would only make every unit of a lane outside a repository fail.

An unreachable provider: offline, Codex reconnects until it is killed, printing "Reconnecting... waiting for
network (Connection failed: ...)"; that line stops the call. When every error of the call is a connection that
never opened (a failed name lookup, a refused connection, Codex's "Connection failed") and the turn did
nothing else, no request left the machine and the call is `unreachable`; otherwise its effect is unknown.

Cached input is part of the input and reasoning part of the output (OpenAI's usage accounting), so a turn's
tokens are `input_tokens + output_tokens`. The stream carries no usage-window event and no HTTP status: a
usage limit and a refused sign-in are known only by the failure's message ("You've hit your usage limit ...
try again at ...", "... 401 Unauthorized", "... sign in again"). A usage limit's reset is read from the message
when it gives one (`resets_at` seconds, "try again in 2 days 3 hours", or "try again at Sep 18th, 2026 12:04
AM", which Codex writes in this machine's local time); a limit without a readable reset is never guessed.
"""

from __future__ import annotations

import re
from typing import Any

import pendulum

from factory_schedule.core import SCHEDULE_LIMITS
from factory_schedule.tui.host.providers import windows
from factory_schedule.tui.host.providers.ending import ProcessEnd
from factory_schedule.tui.host.providers.lines import EventLines
from factory_schedule.tui.host.providers.outcome import CallOutcome, lost

USAGE_LIMIT_WORDS = ("usage limit", "usage_limit", "quota exceeded", "rate limit reached", "spend cap",
                     "upgrade to plus", "upgrade to pro", "wait for limits to reset", "insufficient_quota",
                     "purchase more credits")
NOTHING_SENT_WORDS = ("failed to lookup address information", "connection refused", "dns error",
                      "no route to host", "network is unreachable", "connection failed:")
OFFLINE_WORDS = ("waiting for network",)
SIGN_IN_WORDS = ("unauthorized", "sign in again", "log in again", "login again", "not logged in",
                 "logged out", "refresh token", "access token could not be refreshed")
FORBIDDEN_WORDS = ("forbidden",)
_STATUS_401 = re.compile(r"\b401\b")
_STATUS_403 = re.compile(r"\b403\b")
RATE_LIMIT_TYPE = "codex"
MESSAGE_KEPT = 500  # characters of a failure's message the runner prints, as a JSON string
MAX_SANE_TOKENS = SCHEDULE_LIMITS.max_usage_tokens  # the most the journal takes as one call's usage

_RESETS_AT = re.compile(r'"?resets_at"?\s*[:=]\s*(\d{9,11})')
_RESETS_IN_SECONDS = re.compile(r'"?resets_in_seconds"?\s*[:=]\s*(\d+)')
_TRY_AGAIN_IN = re.compile(r"try again in ((?:\s*\d+\s*(?:days?|hours?|minutes?|mins?|seconds?|secs?),?(?:\s*and)?)+)",
                           re.IGNORECASE)
_DURATION_PART = re.compile(r"(\d+)\s*(day|hour|min|sec)", re.IGNORECASE)
_TRY_AGAIN_AT = re.compile(
    r"try again at ([A-Z][a-z]{2,8})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? (\d{1,2}):(\d{2})\s*([AaPp][Mm])?")
_UNIT_SECONDS = {"day": 86400, "hour": 3600, "min": 60, "sec": 1}


def command(executable: str, extra_args: list[str]) -> list[str]:
    """The command line of one call; the prompt goes on stdin (`-`, after `--`: never read as an option)."""
    skip = [] if "--skip-git-repo-check" in extra_args else ["--skip-git-repo-check"]
    return [executable, "exec", "--json", *skip, *extra_args, "--", "-"]


def reset_from_message(message: str, now: float, local_zone: str) -> int | None:
    """The reset (epoch seconds) a usage-limit message states; None when it states none this can read."""
    found = _RESETS_AT.search(message)
    if found:
        return int(found.group(1))
    found = _RESETS_IN_SECONDS.search(message)
    if found:
        return int(now) + int(found.group(1))
    found = _TRY_AGAIN_IN.search(message)
    if found:
        seconds = sum(int(n) * _UNIT_SECONDS[unit.lower()] for n, unit in _DURATION_PART.findall(found.group(1)))
        return int(now) + seconds if seconds > 0 else None
    found = _TRY_AGAIN_AT.search(message)
    if found:
        month, day, year, hour, minute, half = found.groups()
        try:
            month_number = pendulum.from_format(month[:3], "MMM").month
        except ValueError:
            return None
        hour_24 = int(hour) % 12 + (12 if half and half.lower() == "pm" else 0) if half else int(hour)
        try:
            zone = pendulum.now().timezone if local_zone == "local" else local_zone
            local = pendulum.datetime(int(year), month_number, int(day), hour_24, int(minute), tz=zone)
        except ValueError:  # an impossible date, or a zone name pendulum does not know
            return None
        return int(local.timestamp())
    return None


def classify_failure(message: str) -> str:
    """`usage-limit`, `sign-in-401`, `sign-in-403` or `other`, from a failure's own words."""
    lowered = message.lower()
    if any(word in lowered for word in USAGE_LIMIT_WORDS):
        return "usage-limit"
    if _STATUS_403.search(lowered) or any(word in lowered for word in FORBIDDEN_WORDS):
        return "sign-in-403"
    if _STATUS_401.search(lowered) or any(word in lowered for word in SIGN_IN_WORDS):
        return "sign-in-401"
    return "other"


def _tokens(usage: Any) -> int | None:
    if not isinstance(usage, dict):
        return None
    total = 0
    for name in ("input_tokens", "output_tokens"):
        value = usage.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return None
        total += value
    for name in ("cached_input_tokens", "reasoning_output_tokens"):
        value = usage.get(name, 0)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            return None
    return total


class CodexStream(EventLines):
    """Reads one `codex exec --json` call line by line; `feed` says when its usage has passed the bound."""

    def __init__(self, bound: int, local_zone: str = "local") -> None:
        super().__init__()
        self.bound = bound
        self.local_zone = local_zone
        self.session: str | None = None
        self.turn_tokens: list[int] = []
        self.failures: list[str] = []   # turn.failed: fatal
        self.errors: list[str] = []     # error events: fatal only to a turn that never completes
        self.notices: list[str] = []    # error items: non-fatal, read only to explain a failure
        self.acted = False              # the turn did something (an item other than an error notice)
        self.offline = False            # Codex said it waits for a network: the call was stopped
        self.completed = False
        self.answer: str | None = None  # the last agent message: the call's final answer

    @property
    def tokens(self) -> int:
        return sum(self.turn_tokens)

    def feed(self, line: str) -> bool:
        event = self.event(line)
        if event is None:
            return True
        kind = event["type"]
        if kind == "thread.started":
            if isinstance(event.get("thread_id"), str):
                self.session = event["thread_id"]
            else:
                self._doubt(f"line {self.lines}: thread.started without a thread_id")
        elif kind == "turn.completed":
            tokens = _tokens(event.get("usage"))
            if tokens is None:
                self._doubt(f"line {self.lines}: turn.completed with a usage of an unknown shape")
            else:
                self.turn_tokens.append(tokens)
                self.completed = True
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            if not isinstance(message, str):
                self._doubt(f"line {self.lines}: turn.failed without an error message")
            else:
                self.failures.append(message)
        elif kind == "error":
            if not isinstance(event.get("message"), str):
                self._doubt(f"line {self.lines}: an error event without a message")
            else:
                self.errors.append(event["message"])
                if any(word in event["message"].lower() for word in OFFLINE_WORDS) and not self.completed:
                    self.offline = True
                    return False
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            if not isinstance(item, dict):
                self._doubt(f"line {self.lines}: {kind} without an item")
            elif item.get("type") == "error" and isinstance(item.get("message"), str):
                self.notices.append(item["message"])
            else:
                self.acted = True
                if kind == "item.completed" and item.get("type") == "agent_message" and isinstance(
                        item.get("text"), str):
                    self.answer = item["text"]
        return self.tokens <= self.bound

    def _nothing_sent(self) -> bool:
        """Every error of the call is a connection that never opened, and the turn did nothing else."""
        said = self.errors + self.notices
        return (not self.acted and not self.completed and not self.failures and bool(said)
                and all(any(word in text.lower() for word in NOTHING_SENT_WORDS) for text in said))

    def _failure_outcome(self, failures: list[str], end: ProcessEnd, now: float,
                         common: dict[str, Any]) -> CallOutcome:
        common = {**common, "extra": {"provider_message": failures[-1][:MESSAGE_KEPT]}}
        # The failure names the cause; earlier failures of the same call may carry more (the reset).
        classes = [classify_failure(text) for text in failures]
        if "usage-limit" in classes:
            text = " ".join(t for t, c in zip(failures, classes, strict=True) if c == "usage-limit")
            reset = reset_from_message(text, now, self.local_zone)
            document = windows.observation("rejected", reset, RATE_LIMIT_TYPE, None)
            if reset is None or not windows.reset_usable(document, now):
                return lost("the provider's usage limit was reached and its message gives no reset this can read",
                            stop="limit-unread", **common)
            return CallOutcome({"kind": "usage-limit", "tokens": self.tokens, "observation": document},
                               stop="usage-limit", detail="the usage limit was reached", **common)
        for status, name in ((403, "sign-in-403"), (401, "sign-in-401")):
            if name in classes:
                return CallOutcome({"kind": "sign-in-needed", "tokens": self.tokens, "httpStatus": status},
                                   stop="sign-in", detail=f"the provider refused the sign-in ({status})", **common)
        if self._nothing_sent():
            return CallOutcome({"kind": "unreachable"}, stop="unreachable",
                               detail=f"the provider could not be reached; nothing was sent ({failures[-1][:120]})",
                               **common)
        if self.offline or any(any(w in t.lower() for w in NOTHING_SENT_WORDS) for t in failures):
            return lost("the provider could not be reached, and a request may have gone out", stop="unreachable",
                        **common)
        return lost(f"the turn failed; the provider {end.describe()}", **common)

    def outcome(self, end: ProcessEnd, now: float) -> CallOutcome:
        common: dict[str, Any] = {"session": self.session, "tokens_seen": self.tokens}
        if self.doubt is not None:
            return lost(self.doubt, **common)
        if end.cut is not None:
            return lost(f"the provider was {end.describe()}", **common)
        if self.offline:
            return self._failure_outcome(self.errors, end, now, common)
        if end.stopped:
            if self.tokens > MAX_SANE_TOKENS:
                return lost(f"the stream claimed {self.tokens} tokens, beyond any call's usage", **common)
            return CallOutcome({"kind": "result", "tokens": self.tokens, "output": "malformed"},
                               detail=f"stopped at {self.tokens} tokens, past the bound {self.bound}", **common)
        if end.timed_out or end.exit_code is None:
            return lost(f"the provider was {end.describe()}", **common)
        if self.tokens > MAX_SANE_TOKENS:
            return lost(f"the stream claimed {self.tokens} tokens, beyond any call's usage", **common)
        if self.failures:
            return self._failure_outcome(self.errors + self.failures, end, now, common)
        if not self.completed:
            if self.errors:
                return self._failure_outcome(self.errors, end, now, common)
            return lost(f"the stream ended without turn.completed; the provider {end.describe()}", **common)
        if end.exit_code != 0:
            return lost(f"the turn completed but the provider {end.describe()}", **common)
        return CallOutcome({"kind": "result", "tokens": self.tokens, "output": "ok"}, detail="completed",
                           answer=self.answer, **common)
