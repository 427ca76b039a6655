"""Benchmark: `Journal.execute` against a raw sqlite3 loop with the same durability, in one run.

    .venv/bin/python tests/bench/journal.py [--commands 2000] [--rounds 3] [--url postgresql+psycopg://...]

Both sides write a file in WAL mode with synchronous=FULL and commit once per unit of
work: the raw loop commits one small row per transaction, the journal one command
(receipt lookup, head read, decision, event, state and receipt) per transaction. The
rounds alternate raw and journal so that disk and CPU drift hit both alike. The figure
that matters is the ratio: journal commands per second over raw commits per second.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from store import Decision, NewEvent, open_journal

AGGREGATE = "bench/counter"


def decide(state: dict[str, Any] | None, version: int) -> Decision:
    count = (state or {}).get("count", 0) + 1
    return Decision(events=[NewEvent("bumped", {"count": count})], state={"count": count}, result={"count": count})


def raw_loop(path: Path, commits: int) -> float:
    """Raw sqlite3 commits per second: one small row per transaction, WAL, synchronous=FULL."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    started = time.perf_counter()
    for index in range(commits):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO rows (body) VALUES (?)", (f'{{"count":{index}}}',))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return commits / elapsed


def journal_loop(url: str, commands: int, prefix: str) -> float:
    """`execute` calls per second, each a fresh command at the head the caller last saw."""
    journal = open_journal(url)
    version = journal.head(AGGREGATE)
    started = time.perf_counter()
    for index in range(commands):
        outcome = journal.execute(AGGREGATE, f"{prefix}-{index}", {"i": index}, version, decide)
        version = outcome.version
    elapsed = time.perf_counter() - started
    journal.close()
    return commands / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commands", type=int, default=2000, help="commits per round on each side")
    parser.add_argument("--rounds", type=int, default=3, help="alternating raw/journal rounds")
    parser.add_argument("--dir", default=None, help="folder for the files (default: a temporary folder here)")
    parser.add_argument("--url", default=None, help="also time execute against this PostgreSQL journal URL")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-journal-", dir=args.dir or os.getcwd()) as folder:
        raw_path = Path(folder) / "raw.db"
        journal_url = f"sqlite:///{Path(folder) / 'journal.db'}"
        raw_rates, journal_rates = [], []
        for round_ in range(args.rounds):
            raw_rates.append(raw_loop(raw_path, args.commands))
            journal_rates.append(journal_loop(journal_url, args.commands, f"r{round_}"))
            print(
                f"round {round_ + 1}: raw sqlite3 {raw_rates[-1]:8.0f} commits/s   "
                f"execute {journal_rates[-1]:8.0f} commands/s"
            )
        open_journal(journal_url).verify(AGGREGATE)

    raw = statistics.median(raw_rates)
    journal = statistics.median(journal_rates)
    raw_line = f"{raw:7.0f} commits/s  ({1000 / raw:.3f} ms each)"
    journal_line = f"{journal:7.0f} commands/s ({1000 / journal:.3f} ms each)"
    print(f"raw sqlite3 (WAL, synchronous=FULL, 1 row/commit): {raw_line}")
    print(f"Journal.execute, file journal (same settings):     {journal_line}")
    print(f"ratio execute/raw: {journal / raw:.2f} (target >= 0.50)")

    if args.url:
        rate = journal_loop(args.url, args.commands, f"pg{os.getpid()}")
        open_journal(args.url).verify(AGGREGATE)
        where = args.url.split("@")[-1]
        print(f"Journal.execute on PostgreSQL ({where}): {rate:8.0f} commands/s ({1000 / rate:.3f} ms each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
