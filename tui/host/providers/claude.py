"""Claude Code (`claude -p --output-format stream-json --verbose`, the prompt on stdin): its JSON lines, read.

What the stream carries, and what this reads (docs/guides/real-clis.md cites the sources):

- `rate_limit_event` with `rate_limit_info`: `status` (allowed, allowed_warning, rejected), `resetsAt` (epoch
  seconds), `rateLimitType`, `overageStatus`, `isUsingOverage` and `overageInUse` (either may be absent; either
  true is paid overage, whatever `status` says): the call's usage-window observation;
- `assistant` messages with `message.id` and `message.usage`: the usage streamed while the call runs, which is
  what the call's bound is enforced against;
- an `assistant` message's `error` (`authentication_failed`, `rate_limit`, ...): what a synthetic answer means;
- the final `result` message: `is_error`, `subtype`, `api_error_status` (401 or 403 is a refused sign-in, 429 a
  limit), `result` (or `errors[]` when the run itself failed) and `usage` (input, output, cache-creation and
  cache-read tokens: all four are counted). Claude Code can end an API error with `subtype: "success"` and exit
  0, so `is_error` and `api_error_status` decide, never `subtype`: either one set is an error. What an error's
  text says (logged out, a limit and its reset, an unreachable API) is read by `claude_text`.

Any other event type is ignored. A line that is not a JSON object, or an event this reads in a shape it does not
know, makes the call `lost`: the adapter never guesses what a provider said. A reset that is not a whole number
of seconds is read as no reset (a window that closes without one stops the segment, never guessed), and a token
count beyond any usage a call can have (`MAX_SANE_TOKENS`) makes the call's effect unknown (`lost`).
"""

from __future__ import annotations

import json
from typing import Any

from factory_schedule.core import SCHEDULE_LIMITS
from factory_schedule.tui.host.providers import claude_text, windows
from factory_schedule.tui.host.providers.ending import ProcessEnd
from factory_schedule.tui.host.providers.lines import EventLines
from factory_schedule.tui.host.providers.outcome import CallOutcome, lost

SIGN_IN_STATUSES = (401, 403)
LIMIT_STATUS = 429
MESSAGE_KEPT = 500  # characters of an error result's text the runner prints, as a JSON string
MAX_SANE_TOKENS = SCHEDULE_LIMITS.max_usage_tokens  # the most the journal takes as one call's usage
USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def command(executable: str, extra_args: list[str]) -> list[str]:
    """The command line of one call; the prompt goes on stdin (a prompt starting with `-` is never an option,
    and an owner's variadic option such as `--allowedTools` cannot swallow it)."""
    return [executable, "-p", "--output-format", "stream-json", "--verbose", *extra_args]


def auth_status_command(executable: str) -> list[str]:
    """`claude auth status` prints JSON (`loggedIn`, `authMethod`, and the account's `email` where it has one)."""
    return [executable, "auth", "status"]


def sign_in_from_auth_status(text: str) -> tuple[bool | None, str | None]:
    """(logged in?, the account's email) from `claude auth status`; (None, None) when its output says neither."""
    try:
        document = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(document, dict):
        return None, None
    logged_in = document.get("loggedIn")
    email = document.get("email")
    return (logged_in if isinstance(logged_in, bool) else None,
            email.strip() if isinstance(email, str) and email.strip() else None)


def _tokens(usage: Any) -> int | None:
    """The tokens a usage object counts; None when it is not one (a shape this does not know)."""
    if not isinstance(usage, dict):
        return None
    total = 0
    for name in USAGE_FIELDS:
        value = usage.get(name, 0)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return None
        total += value
    return total


class ClaudeStream(EventLines):
    """Reads one call's stream line by line; `feed` says when streamed usage has passed the bound."""

    def __init__(self, bound: int) -> None:
        super().__init__()
        self.bound = bound
        self.session: str | None = None
        self.observations: list[dict[str, Any]] = []
        self.streamed: dict[str, int] = {}  # assistant message ID -> its latest usage
        self.result: dict[str, Any] | None = None
        self.assistant_error: str | None = None  # the `error` of a synthetic assistant answer

    @property
    def tokens_streamed(self) -> int:
        return sum(self.streamed.values())

    def feed(self, line: str) -> bool:
        """Read one line; False once streamed usage passes the bound (the caller stops the process)."""
        event = self.event(line)
        if event is None:
            return True
        if isinstance(event.get("session_id"), str) and self.session is None:
            self.session = event["session_id"]
        kind = event["type"]
        if kind == "rate_limit_event":
            self._read_window(event.get("rate_limit_info"))
        elif kind == "assistant":
            if isinstance(event.get("error"), str):
                self.assistant_error = event["error"]
            self._read_streamed_usage(event.get("message"))
        elif kind == "result":
            if self.result is not None:
                self._doubt(f"line {self.lines} is a second result")
            self.result = event
        return self.tokens_streamed <= self.bound

    def _read_window(self, info: Any) -> None:
        if not isinstance(info, dict) or not isinstance(info.get("status"), str) or not info["status"]:
            self._doubt(f"line {self.lines}: a rate_limit_event without a rate_limit_info status")
            return
        reset = info.get("resetsAt")
        kind = info.get("rateLimitType")
        overage = [info.get(name) for name in ("isUsingOverage", "overageInUse")]
        if (kind is not None and not isinstance(kind, str)) or any(
                value is not None and not isinstance(value, bool) for value in overage):
            self._doubt(f"line {self.lines}: a rate_limit_info field of an unknown shape")
            return
        if isinstance(reset, float) and reset.is_integer():
            reset = int(reset)
        if isinstance(reset, bool) or not isinstance(reset, int):
            reset = None  # not a whole number of seconds: no reset this can read
        using = True if True in overage else (False if False in overage else None)
        self.observations.append(windows.observation(info["status"], reset, kind, using))

    def _read_streamed_usage(self, message: Any) -> None:
        if not isinstance(message, dict) or "usage" not in message:
            return  # a message without usage counts nothing; the result's usage is what is reported
        tokens = _tokens(message["usage"])
        if tokens is None:
            self._doubt(f"line {self.lines}: an assistant message's usage of an unknown shape")
            return
        identity = message.get("id")
        key = identity if isinstance(identity, str) else f"line-{self.lines}"
        self.streamed[key] = tokens

    def _observation(self) -> dict[str, Any] | None:
        """The observation to report: a closed window first, then overage, else the latest seen."""
        for wanted in (windows.closes, windows.overage):
            for document in reversed(self.observations):
                if wanted(document):
                    return dict(document)
        return dict(self.observations[-1]) if self.observations else None

    def _message(self, result: dict[str, Any]) -> str:
        """The provider's own words for an error: the result's text, else its `errors[]`."""
        if isinstance(result.get("result"), str) and result["result"].strip():
            return str(result["result"])
        errors = result.get("errors")
        if isinstance(errors, list):
            return "; ".join(str(error) for error in errors if isinstance(error, str | int | float))
        return ""

    def outcome(self, end: ProcessEnd, now: float) -> CallOutcome:
        """The report for this call, from what the stream said and how the process ended."""
        window = windows.Window.of(self._observation(), now)
        common: dict[str, Any] = {"session": self.session, "tokens_seen": self.tokens_streamed, "stop": window.stop}
        if self.doubt is not None:
            return lost(self.doubt, window.for_lost, **common)
        if end.cut is not None:
            return lost(f"the provider was {end.describe()}", window.for_lost, **common)
        if end.stopped:
            if self.tokens_streamed > MAX_SANE_TOKENS:
                return lost(f"the stream claimed {self.tokens_streamed} tokens, beyond any call's usage",
                            window.for_lost, **common)
            return CallOutcome({"kind": "result", "tokens": self.tokens_streamed, "output": "malformed"},
                               detail=f"stopped at {self.tokens_streamed} tokens, past the bound {self.bound}",
                               **common)
        if end.timed_out or end.exit_code is None:
            return lost(f"the provider was {end.describe()}", window.for_lost, **common)
        if self.result is None:
            return lost(f"the stream ended without a result; the provider {end.describe()}", window.for_lost,
                        **common)
        return self._result_outcome(self.result, end, now, window, common)

    def _result_outcome(self, result: dict[str, Any], end: ProcessEnd, now: float, window: windows.Window,
                        common: dict[str, Any]) -> CallOutcome:
        tokens = _tokens(result.get("usage", {}))
        status = result.get("api_error_status")
        is_error = result.get("is_error")
        if tokens is None or not isinstance(is_error, bool) or (
                status is not None and (isinstance(status, bool) or not isinstance(status, int))):
            return lost("a result message of an unknown shape", window.for_lost, **common)
        if tokens > MAX_SANE_TOKENS:
            return lost(f"the result claimed {tokens} tokens, beyond any call's usage", window.for_lost, **common)
        failed = is_error or status is not None
        if not failed:
            if end.exit_code != 0:
                return lost(f"the result was clean but the provider {end.describe()}", window.for_lost, **common)
            answer = result.get("result") if isinstance(result.get("result"), str) else None
            return CallOutcome({"kind": "result", "tokens": tokens, "output": "ok", **window.for_report},
                               detail="completed", answer=answer, **common)
        message = self._message(result)
        common["extra"] = {"provider_message": message[:MESSAGE_KEPT]}
        if status in SIGN_IN_STATUSES or claude_text.says_sign_in(message, self.assistant_error):
            http = status if status in SIGN_IN_STATUSES else SIGN_IN_STATUSES[0]
            return CallOutcome({"kind": "sign-in-needed", "tokens": tokens, "httpStatus": http, **window.for_report},
                               detail=f"the provider refused the sign-in ({message[:80] or f'HTTP {http}'})",
                               **{**common, "stop": "overage" if window.overage else "sign-in"})
        if window.stop == "usage-limit":
            return CallOutcome({"kind": "usage-limit", "tokens": tokens, **window.for_report},
                               detail="the usage window is closed", **common)
        if window.stop is None and (status == LIMIT_STATUS or claude_text.says_limit(message, self.assistant_error)):
            return self._limit_from_text(message, tokens, now, window, common)
        reach = claude_text.unreachable(message)
        if reach == "nothing-sent" and tokens == 0 and window.stop is None:
            return CallOutcome({"kind": "unreachable"}, stop="unreachable",
                               detail=f"the provider could not be reached; nothing was sent ({message[:120]})",
                               **{k: v for k, v in common.items() if k != "stop"})
        if reach is not None:
            return lost(f"the provider could not be reached, and the request may have gone out ({message[:120]})",
                        window.for_lost, **{**common, "stop": window.stop or "unreachable"})
        return lost(f"the provider reported an error ({result.get('subtype')!s}, status {status!s}) and "
                    f"{end.describe()}", window.for_lost, **common)

    def _limit_from_text(self, message: str, tokens: int, now: float, window: windows.Window,
                         common: dict[str, Any]) -> CallOutcome:
        """A limit the stream gave no window event for: closed until the reset its text names, if any."""
        reset = claude_text.reset_from_text(message, now)
        document = windows.observation("rejected", reset, None, None)
        if reset is None or not windows.reset_usable(document, now):
            return lost("the provider's usage limit was reached and its message gives no reset this can read",
                        window.for_lost, **{**common, "stop": "limit-unread"})
        return CallOutcome({"kind": "usage-limit", "tokens": tokens, "observation": document},
                           detail="the usage limit was reached", **{**common, "stop": "usage-limit"})
