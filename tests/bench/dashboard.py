"""Benchmark: the dashboard's three figures on an existing journal, without simulating the year again.

    .venv/bin/python tests/bench/dashboard.py /path/to/year.db                 # three runs, each on a fresh copy
    .venv/bin/python tests/bench/dashboard.py /path/to/year.db --runs 5
    .venv/bin/python tests/bench/dashboard.py /path/to/year.db --cpu          # the same intervals in CPU time
    .venv/bin/python tests/bench/dashboard.py /path/to/year.db --profile /tmp/dash   # /tmp/dash-{paint,rerender}.prof

The journal (a SQLite file, with its `-wal` and `-shm` when present) is copied into a temporary folder before
each run and never written: a run records one account and leaves a checkpoint beside its copy. Each run first
checks every chain once, untimed, as a morning's `health` or the tick leaves the checkpoint beside the journal,
then measures with `year.py`'s `dashboard_times` (first paint, Health shown, re-render after one command, each
timed to the screen's refresh; with `--cpu`, the same intervals in the process's CPU time). The clock stands six
hours after the newest admission in the journal, the morning after its last night.

`--profile PREFIX` profiles, on the first copy, what the first paint runs on the UI thread (the app's start,
compose, styles and rendering; `PREFIX-paint.prof`) and what a re-render after one command runs (`read_now` and
`apply_reading` to the next refresh; `PREFIX-rerender.prof`), and the first paint's reading (which the poll
worker takes on its own thread; `PREFIX-reading.prof`), and prints each one's top functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pendulum

from factory_schedule.core import LifecycleSchedule, ManualClock, parse_instant
from factory_schedule.store import open_journal
from tests.bench.year import OWNER, SIGN_IN, ZONE, dashboard_times

ACCOUNT = "claude"


@contextmanager
def copied(source: Path) -> Iterator[str]:
    """A SQLite URL of a copy of `source` (with its WAL), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as folder:
        target = Path(folder) / "journal.db"
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{source}{suffix}").exists():
                shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
        yield f"sqlite:///{target}"


def morning_after(url: str) -> tuple[ManualClock, int]:
    """A clock six hours after the journal's newest admission, and the next sequence of the account's record."""
    journal = open_journal(url)
    view = LifecycleSchedule(journal, ManualClock(pendulum.datetime(2000, 1, 1))).read()
    if view is None:
        raise SystemExit("the journal has no commission: nothing for the dashboard to show")
    newest = max(parse_instant(occurrence.admitted_at) for occurrence in view.occurrences)
    account = next(state for state in view.accounts if state.account == ACCOUNT)
    sequence = (account.record.sequence if account.record is not None else 0) + 1
    journal.close()
    return ManualClock(newest.add(hours=6)), sequence


def checked_once(url: str, clock: ManualClock) -> None:
    """What a morning's `health` leaves beside the journal: every chain checked, the checkpoint written."""
    from factory_schedule.tui.host.health import ChainCheck, HealthScope, check_health

    journal = open_journal(url)
    check_health(journal, LifecycleSchedule(journal, clock), clock.now(), "bench-host",
                 HealthScope(chains=ChainCheck(keep=True), count_history=True))
    journal.close()


def profiled(url: str, clock: ManualClock, sequence: int, prefix: str) -> None:
    """Profiles of a first paint's UI thread, of the first reading (off that thread), and of a re-render."""
    from factory_schedule.tui.dashboard.app import build_app
    from factory_schedule.tui.dashboard.reading import take_reading

    journal = open_journal(url)
    app = build_app(url, clock, 3600.0, ZONE, journal=journal, host="bench-host", journal_label="bench")
    paint, rerender = cProfile.Profile(), cProfile.Profile()

    async def painted() -> None:
        drawn = asyncio.Event()
        app.call_after_refresh(drawn.set)
        await drawn.wait()

    async def measure() -> None:
        paint.enable()
        async with app.run_test(size=(160, 50)):
            while app.reading is None:
                await asyncio.sleep(0.001)
            await painted()
            paint.disable()
            while app.reading.health is None:
                await asyncio.sleep(0.001)
            await painted()
            await app.views_up()
            LifecycleSchedule(journal, clock).record_account(account=ACCOUNT, sequence=sequence, sign_in=SIGN_IN,
                                                             overage=False, recorded_by=OWNER)
            rerender.enable()
            app.apply_reading(app.read_now())
            await painted()
            rerender.disable()

    asyncio.run(measure())
    reading = cProfile.Profile()
    reading.runcall(take_reading, journal, LifecycleSchedule(journal, clock), clock.now(), None, host="bench-host",
                    complete=False)
    for name, profile in (("paint", paint), ("reading", reading), ("rerender", rerender)):
        path = f"{prefix}-{name}.prof"
        profile.dump_stats(path)
        print(f"\n== {name} ({path})")
        pstats.Stats(path).sort_stats("cumulative").print_stats(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("journal", type=Path, help="a SQLite journal file (copied, never written)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", metavar="PREFIX", help="write PREFIX-{paint,reading,rerender}.prof instead")
    parser.add_argument("--cpu", action="store_true",
                        help="time the same intervals in the process's CPU time (every thread's), not wall time")
    args = parser.parse_args()
    if not args.journal.exists():
        raise SystemExit(f"no journal at {args.journal}")
    if args.profile:
        with copied(args.journal) as url:
            clock, sequence = morning_after(url)
            checked_once(url, clock)
            profiled(url, clock, sequence, args.profile)
        return 0
    figures: list[tuple[float, float, float]] = []
    for run in range(args.runs):
        with copied(args.journal) as url:
            clock, sequence = morning_after(url)
            checked_once(url, clock)
            times = dashboard_times(url, clock, ACCOUNT, sequence, time.process_time if args.cpu else time.perf_counter)
            if times is None:
                raise SystemExit("the dashboard is not in this tree")
            figures.append(times)
            print(f"run {run + 1}: first paint {1000 * times[0]:.0f} ms, Health shown {1000 * times[1]:.0f} ms, "
                  f"re-render after one command {1000 * times[2]:.0f} ms (load {os.getloadavg()[0]:.1f})",
                  flush=True)
    unit = "ms of CPU" if args.cpu else "ms"
    for index, name in enumerate(("first paint", "Health shown", "re-render after one command")):
        print(f"{name}: median {1000 * statistics.median(times[index] for times in figures):.0f} {unit}")
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    sys.exit(code)
