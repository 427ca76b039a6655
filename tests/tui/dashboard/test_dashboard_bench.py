"""`tests/bench/dashboard.py` keeps working: it times the dashboard on a copy of a journal and never writes the
journal it is given."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests" / "bench" / "dashboard.py"


def test_the_dashboard_bench_prints_the_three_figures_and_leaves_the_journal_as_it_was(demo_file: Path) -> None:
    before = hashlib.sha256(demo_file.read_bytes()).hexdigest()
    printed = subprocess.run([sys.executable, str(SCRIPT), str(demo_file), "--runs", "1"], cwd=ROOT,
                             capture_output=True, text=True, timeout=300, check=True).stdout
    for figure in ("first paint", "Health shown", "re-render after one command"):
        assert re.search(f"^{figure}: median \\d+ ms$", printed, re.MULTILINE), printed
    assert hashlib.sha256(demo_file.read_bytes()).hexdigest() == before, "the bench wrote to the journal it read"
