"""What health's count check costs over a year of the staged lanes: reading the state alone (what every
check and the dashboard read; the baseline, measured in the same run) against reading it with its whole
event history and counting it (only `health` does that), and whether a year's real history agrees with its
state (it must: no finding).

    .venv/bin/python tests/bench/pipeline_history_counts.py [--weeks 52] [--seed 7] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from factory_schedule.core.health import count_findings
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE
from factory_schedule.store import open_journal
from factory_schedule.tui.host.health import read_pipeline, read_pipeline_history
from tests.bench.pipeline_year import Year


def _best_ms(call: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        year = Year(Path(folder), args.seed)
        year.go(args.weeks)
        journal = open_journal(f"sqlite:///{Path(folder) / 'journal.db'}")  # the same file, as health opens it
        now = year.clock.now()
        events = journal.head(PIPELINE_AGGREGATE)
        baseline = _best_ms(lambda: read_pipeline(journal, now), args.repeat)
        counted = _best_ms(lambda: read_pipeline_history(journal)[0], args.repeat)
        history = read_pipeline_history(journal)[0]
        assert history is not None
        findings = count_findings(history)
        print(f"{args.weeks} weeks, {events} pipeline events")
        print(f"read the state (baseline):          {baseline:8.1f} ms (best of {args.repeat})")
        print(f"read it with its history, counted:  {counted:8.1f} ms ({counted / baseline:.1f} x)")
        print(f"count findings over a real year:    {len(findings)} {[f.message for f in findings]}")


if __name__ == "__main__":
    main()
