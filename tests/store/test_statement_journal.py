"""A command's head update keeps SQLite's statement journal in memory, however large the state.

Inside a transaction of several statements, SQLite keeps a statement journal of the pages
each statement changes, so that one statement can fail alone. By default that journal goes
to a temporary file once it passes 64 KiB, and a schedule state grows past 64 KB with nine
Products: every command then created, wrote and deleted a file in /var/tmp, and the head
update took three to four times as long (0.04 ms against 0.14-0.21 ms). The journal
opens its connections with `temp_store=MEMORY`, which keeps it in memory.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factory_schedule.store import open_journal
from tests.store.support import pooled_driver

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = """
import random, sys
from factory_schedule.store import Decision, NewEvent, open_journal
journal = open_journal(sys.argv[1])
noise = random.Random(1)
def decide(state, version):  # a state of about 90 KB: more pages than the 64 KiB a statement journal keeps
    return Decision(events=[NewEvent("grew", {"version": version})],
                    state={"blob": noise.randbytes(45_000).hex()}, result={})
for version in range(5):
    journal.execute("test/large", f"large/{version}", {"version": version}, version, decide)
"""


def test_a_journal_connection_keeps_temporary_storage_in_memory(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    with pooled_driver(journal) as conn:
        assert conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to watch the files SQLite opens")
def test_commands_with_a_state_above_64_kib_open_no_temporary_file(tmp_path):
    trace = tmp_path / "trace"
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    subprocess.run(["strace", "-f", "-e", "trace=openat,open", "-o", str(trace), sys.executable, "-c", COMMANDS, url],
                   cwd=ROOT, check=True, timeout=120, capture_output=True)
    opened = trace.read_text()
    assert "journal.db-wal" in opened, "the trace saw the journal's own files"
    assert open_journal(url).head("test/large") == 5
    assert "etilqs_" not in opened, [line for line in opened.splitlines() if "etilqs_" in line][:3]
