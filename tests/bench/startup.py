"""Benchmark: how long the command line takes to start, beside the floor its own libraries set.

    .venv/bin/python tests/bench/startup.py [--runs 9]

Times, as fresh processes, `factory-schedule --help`, `plan` and `call admit` (a replay of an
admitted call, so every run does the same work and writes nothing) on a small journal, beside
`python -c "import pydantic, pendulum"` (what any run that reads a schedule must load) and
`python -c pass` (the interpreter alone). The rounds interleave the commands so that drift on a
busy machine hits each alike; it prints each one's median wall time and its ratio to the baseline,
and the median CPU time (user + system) of the process, which a machine shared with other work
inflates far less than the wall time.

The commands run with Python's bytecode cache on, as an installed program runs (pip compiles a
wheel's modules at install; an editable install writes them on first use), even where the calling
environment sets PYTHONDONTWRITEBYTECODE (this project's sandboxes do): without the cache every
run compiles the project's fifty-odd modules again, about 70 ms that no user pays. One untimed
round runs first, so the cache exists.
Targets: `plan` and `call admit` at 250 ms or less, `--help` at 150 ms or less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.tui.runner_support import commission_due_now

CLI = [sys.executable, "-m", "factory_schedule.tui.cli"]


def _run(command: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[int, str]:
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env)
    return done.returncode, done.stdout


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def small_journal(folder: Path, env: dict[str, str]) -> list[str]:
    """A commissioned journal with one admitted call; the `call admit` arguments that replay it."""
    commission = folder / "commission.json"
    commission.write_text(json.dumps(commission_due_now()))
    steps = [
        ["record-commission", str(commission)],
        ["record-account", "--account", "claude", "--sequence", "1", "--sign-in", "me", "--overage", "off",
         "--recorded-by", "owner"],
    ]
    for step in steps:
        code, out = _run([*CLI, *step], env)
        assert code == 0, out
    code, out = _run([*CLI, "start", "--lane", "alpha/basic", "--runner", "r-bench"], env)
    occurrence = json.loads(out)["occurrence"]["id"]
    admit = ["call", "admit", "--occurrence", occurrence, "--runner", "r-bench", "--task", "scan", "--work", "w1",
             "--bound", "1000", "--sign-in", "me"]
    code, out = _run([*CLI, *admit], env)
    assert code == 0, out
    return admit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (default 9)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "FACTORY_JOURNAL": f"sqlite:///{Path(folder) / 'journal.db'}"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        admit = small_journal(Path(folder), env)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            'python -c "import pydantic, pendulum"': [sys.executable, "-c", "import pydantic, pendulum"],
            "factory-schedule --help": [*CLI, "--help"],
            "factory-schedule plan": [*CLI, "plan"],
            "factory-schedule call admit (replay)": [*CLI, *admit],
        }
        expected = {"factory-schedule call admit (replay)": 10}  # a replay licenses no second contact
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():  # the untimed round: bytecode cached, files in the page cache
            _run(command, env)
        for _ in range(options.runs):
            for name, command in commands.items():
                used = _children_cpu()
                started = time.perf_counter()
                code, out = _run(command, env)
                times[name].append(time.perf_counter() - started)
                cpu[name].append(_children_cpu() - used)
                assert code == expected.get(name, 0), (name, code, out)
    baseline_name = 'python -c "import pydantic, pendulum"'
    baseline, cpu_baseline = statistics.median(times[baseline_name]), statistics.median(cpu[baseline_name])
    if "PYTHONDONTWRITEBYTECODE" in os.environ:
        print("(PYTHONDONTWRITEBYTECODE is set here; the commands ran without it, as installed programs run)")
    print(f"{'command':<40}{'wall':>8}{'min':>8}{'x base':>8}{'cpu':>8}{'x base':>8}   (medians of {options.runs})")
    for name, samples in times.items():
        median, cpu_median = statistics.median(samples), statistics.median(cpu[name])
        print(f"{name:<40}{median * 1000:>6.0f}ms{min(samples) * 1000:>6.0f}ms{median / baseline:>8.2f}"
              f"{cpu_median * 1000:>6.0f}ms{cpu_median / cpu_baseline:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
