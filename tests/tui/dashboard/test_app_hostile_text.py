"""Journal text is shown, never obeyed: escape sequences and Rich markup recorded in a journal reach the
owner's terminal as visible characters, in a real pseudo-terminal.

The engine refuses control characters in what it records (on later builds), but journals written before
that rule may hold them; the dashboard escapes whatever it shows anyway. The hostile journal is written by
the real engine with placeholder texts into a first journal, whose commits are recorded; the same commands
are then committed through the store into a second journal with the placeholders swapped for hostile texts
in each command's payload, events, state and result (so the store seals them, the hash chain is whole and
the state reads), which is how such a journal looks had an older engine accepted them.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pendulum
import pytest

from factory_schedule.core import CallAdmission, LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.store import Decision, Journal, NewEvent, canonical_json, leases, open_journal
from factory_schedule.store.canonical import CanonicalText
from factory_schedule.tui.dashboard.safety import printable
from tests.tui.dashboard.terminal_support import read_terminal

ROOT = Path(__file__).resolve().parents[3]
CLEAR, HOME_ALL_GOOD, CONCEAL, MARKUP = "\x1b[2J", "\x1b[1;1Hall good", "\x1b[8m", "[bold]"
INJECTED = (CLEAR, HOME_ALL_GOOD, CONCEAL)


def hostile(tag: str) -> str:
    return f"{tag}{CLEAR}{HOME_ALL_GOOD}{CONCEAL}{MARKUP}"


# placeholder -> what the journal ends up holding
SWAPS = {
    "PLACEHOLDER-RUNNER-ONE": hostile("r1"),
    "PLACEHOLDER-RUNNER-TWO": hostile("r2"),
    "PLACEHOLDER-RUNNER-THREE": hostile("r3"),
    "PLACEHOLDER-WORK": hostile("wk"),
    "PLACEHOLDER-SIGN-IN": hostile("si"),
    "PLACEHOLDER-RECORDED-BY": hostile("rb"),
    "PLACEHOLDER-CONFIRMED-BY": hostile("cb"),
    "PLACEHOLDER-EVIDENCE": hostile("ev"),
    "PLACEHOLDER-REASON": hostile("re"),
}
NOW = pendulum.datetime(2026, 12, 8, 2, 30, tz="UTC")
DEAD_PID = 4_194_999


def _swap_text(text: str) -> str:
    for placeholder, value in SWAPS.items():
        text = text.replace(placeholder, canonical_json(value)[1:-1])
    return text


def _swap(document: Any) -> Any:
    return json.loads(_swap_text(canonical_json(document)))


class RecordingWrites:
    """The journal, recording each command it commits: its ID, payload and decision."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self.commands: list[tuple[str, str, dict[str, Any], Decision]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def execute(self, aggregate: str, command_id: str, payload: dict[str, Any], expected_version: int,
                decide: Any, *, as_text: bool = False) -> Any:
        decided: list[Decision] = []

        def recorded(state: Any, version: int) -> Decision:
            decided.append(decide(state, version))
            return decided[-1]

        outcome = self._journal.execute(aggregate, command_id, payload, expected_version, recorded, as_text=as_text)
        if not outcome.replayed:
            self.commands.append((aggregate, command_id, payload, decided[-1]))
        return outcome


def replay_swapped(commands: list[tuple[str, str, dict[str, Any], Decision]], journal: Journal) -> None:
    """Commit the same commands to `journal` through the store, the placeholders swapped for hostile texts."""
    for aggregate, command_id, payload, decision in commands:
        state: Any = decision.state
        state = CanonicalText(_swap_text(state)) if isinstance(state, str) else _swap(state)
        swapped = Decision(events=[NewEvent(e.type, _swap(e.data)) for e in decision.events], state=state,
                           result=_swap(decision.result))
        journal.execute(aggregate, command_id, _swap(payload), journal.head(aggregate), _deciding(swapped))


def _deciding(decision: Decision) -> Callable[[Any, int], Decision]:
    """A decide callback for `Journal.execute` that returns `decision` whatever the state."""
    return lambda _state, _version: decision


def build_hostile_journal(path: Path, host: str) -> str:
    """Settled alpha with a hostile runner, work, sign-in, recorder and reason; beta reconciled with a hostile
    confirmer and evidence; alpha running tonight under a dead runner whose lease names it."""
    clean = RecordingWrites(open_journal(f"sqlite:///{path.with_name('placeholders.db')}"))
    clock = ManualClock("2026-12-06T12:00:00Z")
    schedule = LifecycleSchedule(clean, clock)  # type: ignore[arg-type]
    schedule.record_commission(proposed_commission(products=["alpha", "beta"], effective_from="2026-12-07",
                                                   weekly_tokens=40_000_000))
    schedule.record_account(account="claude", sequence=1, sign_in="PLACEHOLDER-SIGN-IN", overage=False,
                            recorded_by="PLACEHOLDER-RECORDED-BY")
    clock.set("2026-12-07T02:00:00Z")
    tick = schedule.start(lane="alpha/basic", runner="PLACEHOLDER-RUNNER-ONE")
    assert tick.occurrence is not None
    admission = schedule.admit_call(occurrence_id=tick.occurrence.id, runner="PLACEHOLDER-RUNNER-ONE",
                                    task="scan", work="PLACEHOLDER-WORK", bound=150_000,
                                    sign_in="PLACEHOLDER-SIGN-IN")
    assert isinstance(admission, CallAdmission), admission
    schedule.end_call(occurrence_id=tick.occurrence.id, runner="PLACEHOLDER-RUNNER-ONE", call=admission.call,
                      report={"kind": "result", "tokens": 91_234, "output": "ok"})
    schedule.settle(occurrence_id=tick.occurrence.id, settled_by="PLACEHOLDER-RUNNER-ONE", status="completed",
                    reason="PLACEHOLDER-REASON")
    clock.set("2026-12-07T02:20:00Z")
    tick = schedule.start(lane="beta/basic", runner="PLACEHOLDER-RUNNER-TWO")
    assert tick.occurrence is not None
    schedule.admit_call(occurrence_id=tick.occurrence.id, runner="PLACEHOLDER-RUNNER-TWO", task="scan",
                        work="PLACEHOLDER-WORK", bound=150_000, sign_in="PLACEHOLDER-SIGN-IN")
    clock.set("2026-12-07T02:40:00Z")
    schedule.reconcile(occurrence_id=tick.occurrence.id, confirmation={
        "runner": "PLACEHOLDER-RUNNER-TWO", "confirmedBy": "PLACEHOLDER-CONFIRMED-BY",
        "evidence": "PLACEHOLDER-EVIDENCE"})
    clock.set("2026-12-08T02:00:00Z")
    tick = schedule.start(lane="alpha/basic", runner="PLACEHOLDER-RUNNER-THREE")
    assert tick.occurrence is not None
    clean.close()
    url = f"sqlite:///{path}"
    journal = open_journal(url)
    replay_swapped(clean.commands, journal)
    leases.acquire(journal, f"segment/{tick.occurrence.id}/1", SWAPS["PLACEHOLDER-RUNNER-THREE"], 60.0,
                   clock.now(), {"host": host, "pid": DEAD_PID, "runner": SWAPS["PLACEHOLDER-RUNNER-THREE"],
                                 "occurrence": tick.occurrence.id, "segment": 1,
                                 "command": SWAPS["PLACEHOLDER-WORK"]})
    journal.close()
    return url


def test_the_hostile_journal_holds_the_raw_texts(tmp_path: Path) -> None:
    """The fixture is what it claims: the state and the events hold raw escape sequences, and they read."""
    url = build_hostile_journal(tmp_path / "journal.db", "pty-host")
    journal = open_journal(url)
    try:
        view = LifecycleSchedule(journal, ManualClock(NOW)).read()
        journal.verify("discovery/schedule")
        events = json.dumps([e.data for e in journal.history("discovery/schedule")], ensure_ascii=False)
    finally:
        journal.close()
    assert view is not None
    claude = next(account for account in view.accounts if account.account == "claude")
    assert claude.record is not None
    assert claude.record.sign_in == SWAPS["PLACEHOLDER-SIGN-IN"]
    assert claude.record.recorded_by == SWAPS["PLACEHOLDER-RECORDED-BY"]
    assert "PLACEHOLDER" not in events and "\\u001b[2J" in events


CHILD = """
import sys
from factory_schedule.core import ManualClock
from factory_schedule.tui.dashboard.app import build_app
build_app(sys.argv[1], ManualClock(sys.argv[2]), 0.5, host=sys.argv[3], journal_label=sys.argv[4]).run()
"""

# What the owner presses: every view, the detail of every occurrence, every form, then quit. Occurrences opens
# in its ID box: the first Down moves to the list.
DOWN, ESCAPE = "\x1b[B", "\x1b"
WALK = ("o", DOWN, DOWN, DOWN, DOWN, "l", "a", "h", "e", DOWN, DOWN, DOWN, "t", "s", ESCAPE, "r", ESCAPE, "c", ESCAPE,
        "\x11")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_journal_text_reaches_the_terminal_as_visible_characters(tmp_path: Path) -> None:
    host = "pty-host"
    url = build_hostile_journal(tmp_path / "journal.db", host)
    label = "sqlite:///" + hostile("label")
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="40", PYTHONPATH=str(ROOT))
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard on a real terminal of 120x40
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.execvpe(sys.executable, [sys.executable, "-c", CHILD, url, NOW.isoformat(), host, label], env)
    output = b""
    try:
        started = time.monotonic()
        while b"revision" not in output and time.monotonic() - started < 30:
            output += read_terminal(fd, 0.2)
        output += read_terminal(fd, 2.0)  # the health check's reading
        for key in WALK:
            os.write(fd, key.encode())
            output += read_terminal(fd, 0.6)
        output += read_terminal(fd, 2.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
    shown = output.decode("utf-8", errors="replace")
    assert "revision 1" in shown, shown[-2000:]
    for sequence in INJECTED:
        assert sequence not in shown, f"{sequence!r} reached the terminal raw"
    # ... and the texts were shown, as visible characters (markup included, not obeyed)
    assert printable(CLEAR) in shown and printable(HOME_ALL_GOOD) in shown
    assert MARKUP in shown
    for tag in ("r1", "r2", "r3", "wk", "si", "rb", "cb", "ev", "re", "label"):
        assert f"{tag}{printable(CLEAR)}" in shown, f"{tag}: not shown"
