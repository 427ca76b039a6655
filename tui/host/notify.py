"""Telling the owner when a finding needs them: once per finding, through a command they configure.

Health's findings wait in the dashboard; a 401 at 02:20 should not. A finding
whose kind needs the owner (`NEEDS_OWNER`: a sign-in, an overage record, an
expired or missing owner record, a dead runner the evidence cannot settle, a
run that is alive but makes no progress (stopped or hung), a segment
still running with no lease well past its deadline, a
LaunchAgent that is not loaded, a broken hash chain, a prompt binding that cannot
be read whole, a security-approve request or an escalation of a staged lane
waiting for the owner's decision, a staged lane stalled past the owner's
`stallHours`, a staged lanes' state that does not read, a scheduled run that
failed or whose exit, output and record disagree, a lane whose CLI is signed out,
a provider that could not be reached, an account a provider's message stopped, a
sign-in the runner observes that the account's record does not name, an owner key
replaced with the recovery code, a record carrying instants from a clock that was
ahead, staged lanes holding older settings than the commission in force carries)
is sent to the notifier,
and remembered so it is sent once: its key is its kind and its evidence (without
what changes every second), kept in a small owner-only (0600) state file beside
the journal (`<journal file>.notified.json`; for a server journal, in the user
data folder). A send that fails is not remembered, so the next run tries again.
A state file that cannot be written (a folder in its place, a full disk) never
costs the report: it is one more finding, `notify-state-unwritable`.

The notifier is `FACTORY_NOTIFY` (or health's `--notify`): a command line, split
as a shell would split words but never run through a shell, to which the text is
appended as ONE argument. On a Mac the default is `osascript`, with the text
passed as the script's argument (never spliced into AppleScript); elsewhere there
is none unless configured. The text has every control character escaped
(`\\x1b`), so a runner name in the journal cannot drive the owner's terminal or
notifier, and is at most `MAX_TEXT` characters.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from factory_schedule.core.health import Finding
from factory_schedule.tui.host.files import MIB, read_regular_text
from factory_schedule.tui.host.paths import beside_journal
from factory_schedule.tui.terminal_text import printable

ENV_NOTIFY = "FACTORY_NOTIFY"
MAX_TEXT = 400
MAX_STATE_BYTES = 4 * MIB  # a key and a short text per notified finding
SEND_TIMEOUT_SECONDS = 30
NEEDS_OWNER = frozenset({
    "account-sign-in-needed", "account-overage", "account-overage-on", "account-record-expired",
    "account-no-record", "owner-key-recovered", "stale-lease-live-process", "stale-lease-other-host",
    "lease-heartbeat-in-future",
    "launch-agent-not-loaded", "journal-chain-broken", "binding-blocked", "security-approve-waiting",
    "escalation-waiting", "lane-stalled", "pipeline-unreadable", "run-failed", "run-outcome-disagrees",
    "run-hung", "run-unleased-past-deadline",
    "lane-logged-out", "provider-unreachable", "provider-stopped-account", "sign-in-mismatch", "pipeline-clock-ahead",
    "schedule-clock-ahead", "pipeline-settings-behind", "owner-key-replaced",
})  # fmt: skip
VOLATILE_EVIDENCE = frozenset({"seconds_since_heartbeat", "confirmation", "living_pids"})
MAC_NOTIFIER = ("osascript", "-e", "on run argv", "-e",
                'display notification (item 1 of argv) with title "factory-schedule"', "-e", "end run")


@dataclass(frozen=True)
class Notice:
    key: str
    kind: str
    text: str
    at: str


@dataclass(frozen=True)
class NotifyResult:
    notifier: tuple[str, ...] | None  # None: no notifier on this host (`why_none` says why)
    sent: tuple[Notice, ...] = ()
    failed: tuple[str, ...] = ()  # why each failed send failed
    why_none: str | None = None
    unremembered: str | None = None  # why what was sent could not be remembered (it may be sent again)

    def findings(self, state: Path) -> list[Finding]:
        """What went wrong with the notifications themselves, as findings of the report they belong to."""
        if self.unremembered is None:
            return []
        return [Finding(
            "notify-state-unwritable", "warning",
            f"what was notified could not be remembered in {state}: {self.unremembered}; each finding that needs "
            "you may be sent again on every run until the file can be written",
            {"path": str(state), "detail": self.unremembered})]


def safe_text(text: str) -> str:
    """`text` with every control, format or separator character escaped, cut to MAX_TEXT characters."""
    joined = printable(text)
    return joined if len(joined) <= MAX_TEXT else joined[: MAX_TEXT - 1] + "…"


def finding_key(finding: Finding) -> str:
    """The same finding on every run gets the same key; a new occurrence of it (a later refusal, another
    lease) gets another."""
    evidence = {k: v for k, v in finding.evidence.items() if k not in VOLATILE_EVIDENCE}
    text = json.dumps([finding.kind, evidence], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def notifier_command(configured: str | None, platform: str = sys.platform) -> tuple[tuple[str, ...] | None, str | None]:
    """(the command, or None and why none): `configured` (FACTORY_NOTIFY or --notify), else a Mac's
    osascript; an empty configuration turns notifications off."""
    if configured is not None:
        if not configured.strip():
            return None, f"{ENV_NOTIFY} is empty: notifications are off"
        try:
            words = tuple(shlex.split(configured))
        except ValueError as error:
            return None, f"{ENV_NOTIFY} cannot be split into words: {error}"
        return words, None
    if platform == "darwin":
        return MAC_NOTIFIER, None
    return None, f"no notifier on {platform} unless {ENV_NOTIFY} (or --notify) names one"


def state_path(journal_url: str) -> Path:
    """Beside a SQLite journal (`<file>.notified.json`); for a server journal, `notified-<digest>.json` in the
    user data folder."""
    return beside_journal(journal_url, ".notified.json", "notified", ".json")


def read_state(path: Path) -> dict[str, Any]:
    """What was notified, by key; an unreadable or tampered file counts as nothing notified (at worst the
    owner hears of a finding twice, never not at all)."""
    try:
        document = json.loads(read_regular_text(path, MAX_STATE_BYTES))
    except (OSError, ValueError):
        return {}
    notified = document.get("notified") if isinstance(document, dict) else None
    return {k: v for k, v in notified.items() if isinstance(v, dict)} if isinstance(notified, dict) else {}


def write_state(path: Path, notified: Mapping[str, Any]) -> None:
    """Replace the state file atomically, owner-only (0600) from its first byte."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(prefix=path.name, dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"notified": dict(notified)}, out, sort_keys=True, indent=1)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _send(command: Sequence[str], text: str) -> str | None:
    """Run the notifier with the text as its last argument; why it failed, or None."""
    try:
        completed = subprocess.run([*command, text], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=SEND_TIMEOUT_SECONDS)
    except (OSError, subprocess.SubprocessError) as error:
        return f"{command[0]}: {error}"
    if completed.returncode != 0:
        return f"{command[0]} exited {completed.returncode}: {safe_text(completed.stderr.strip())[:200]}"
    return None


def notify_owner(findings: Sequence[Finding], journal_url: str, now: datetime,
                 configured: str | None = None) -> NotifyResult:
    """Send each finding that needs the owner and was not sent before; remember what was sent."""
    command, why_none = notifier_command(configured if configured is not None else os.environ.get(ENV_NOTIFY))
    if command is None:
        return NotifyResult(None, why_none=why_none)
    path = state_path(journal_url)
    notified = read_state(path)
    sent: list[Notice] = []
    failed: list[str] = []
    for finding in findings:
        if finding.kind not in NEEDS_OWNER:
            continue
        key = finding_key(finding)
        if key in notified:
            continue
        text = safe_text(f"factory-schedule: {finding.message}")
        problem = _send(command, text)
        if problem is not None:
            failed.append(problem)
            continue
        notice = Notice(key, finding.kind, text, now.isoformat())
        notified[key] = {"kind": notice.kind, "text": notice.text, "at": notice.at}
        sent.append(notice)
    unremembered = None
    if sent:
        try:
            write_state(path, notified)
        except OSError as error:  # the notices went out: the report and its findings stand regardless
            unremembered = f"{type(error).__name__}: {error.strerror or error}"
    return NotifyResult(command, tuple(sent), tuple(failed), unremembered=unremembered)
