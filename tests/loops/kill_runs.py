"""A kill loop, run by hand (never collected by pytest): kill a real tick, its `run` runner, or both, at a random
moment of a night whose calls take a moment and leave a tool process behind, then let health and the next tick
do their work, and count what happened.

    .venv/bin/python -m tests.loops.kill_runs --kills 36 [--journal-url-base postgresql+psycopg://.../kill]

(with --journal-url-base, kill N uses the database `<base>_N`, which must exist and be empty.)

For every kill it checks: the occurrence ends settled or resumable (and a resumed night settles); no process of
the run's provider call (the provider or its tool) is alive when health reconciles the run; no unit of work was
sent twice. It prints one JSON line per kill and a summary; exit 1 on any violation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.host.test_provider_call_outlives_no_runner import kill_session, living
from tests.tui.host.test_run import lanes_commission, record, write_lane
from tests.tui.provider_support import FAKE_LANE_ENV, TRANSCRIPTS, fake_path
from tests.tui.runner_support import CLI, REPO, cli_env

UNITS = 3
TTL = 1.0


def _transcripts(folder: Path) -> Path:
    """The `normal` claude transcript made slow (a call of about a second) with a tool process of its own."""
    lines = (TRANSCRIPTS / "claude" / "normal.jsonl").read_text().splitlines()
    slow = [*lines[:-1], "#spawn 1.5", "#sleep 1", lines[-1]]
    (folder / "claude").mkdir(parents=True)
    (folder / "claude" / "slow.jsonl").write_text("\n".join(slow) + "\n")
    return folder


def _night(folder: Path, url: str) -> tuple[Path, dict[str, str]]:
    prompts = folder / "prompts"
    write_lane(prompts, "alpha/basic",
               'provider = "claude"\nsign_in = "owner@example.com"\nbound = 150000\ntimeout_minutes = 1\n'
               + FAKE_LANE_ENV,
               {"scan": {f"{i}0-unit-{i}.md": f"Scan part {i}. [transcript: slow]\n" for i in range(1, UNITS + 1)}})
    record(LifecycleSchedule(open_journal(url), SystemClock()), lanes_commission(("alpha", "scan", "claude")))
    env = cli_env(url, FAKE_PROVIDER_LOG=str(folder / "contacts.log"),
                  FAKE_TRANSCRIPTS=str(_transcripts(folder / "transcripts")))
    env["PATH"] = fake_path(env["PATH"])
    return prompts, env


def _tick(url: str, prompts: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*CLI, "--journal", url, "tick", "--ttl", f"{TTL:g}", "--", *CLI, "run", "--prompts",
                             str(prompts)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO,
                            start_new_session=True)


def _call_pids(folder: Path) -> list[int]:
    log, children = folder / "contacts.log", folder / "contacts.log.children"
    pids = [json.loads(line)["pid"] for line in log.read_text().splitlines()] if log.exists() else []
    return pids + ([int(pid) for pid in children.read_text().split()] if children.exists() else [])


def _sent(folder: Path) -> list[str]:
    log = folder / "contacts.log"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []


def _health_repair(url: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([*CLI, "--journal", url, "health", "--repair", "--json"], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)
    return json.loads(done.stdout.splitlines()[-1])


def one_kill(index: int, arrangement: str, base: str | None) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix=f"kill-{index}-"))
    url = f"{base}_{index}" if base else f"sqlite:///{folder}/journal.db"
    prompts, env = _night(folder, url)
    journal = open_journal(url)
    schedule = LifecycleSchedule(journal, SystemClock())
    tick = _tick(url, prompts, env)
    time.sleep(random.uniform(1.5, 6.0))
    segment = [lease for lease in leases.list_leases(journal) if lease.scope.startswith("segment/")]
    runner = int(segment[0].info["pid"]) if segment and segment[0].info.get("pid") != tick.pid else None
    if arrangement in ("tick", "both"):
        kill_session(tick.pid)
    if arrangement in ("run", "both") and runner is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(runner, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        tick.wait(timeout=120)
    violations: list[str] = []
    repairs: list[str] = []
    findings: list[str] = []
    deadline = time.monotonic() + 180
    occurrence = None
    while time.monotonic() < deadline:
        view = schedule.read()
        occurrences = view.occurrences if view is not None else []
        occurrence = occurrences[0] if occurrences else None
        if occurrence is None or (occurrence.state != "running" and not leases.list_leases(journal)):
            break
        time.sleep(2 * TTL + 0.2)
        alive_before = [pid for pid in _call_pids(folder) if living(pid)]
        report = _health_repair(url, env)
        kinds = [repair["kind"] for repair in report["repairs"]]
        repairs += kinds
        findings = [finding["kind"] for finding in report["findings"]]
        if "reconciled-dead-runner" in kinds and alive_before:
            violations.append(f"reconciled while call processes {alive_before} lived")
    admitted = occurrence is not None
    if occurrence is None or occurrence.state == "interrupted":  # killed before its admission, or resumable
        resumed = _tick(url, prompts, env)
        resumed.wait(timeout=180)
        view = schedule.read()
        occurrence = view.occurrences[0] if view is not None and view.occurrences else None
    status = schedule.status(occurrence.id) if occurrence is not None else None
    sent = _sent(folder)
    if status is None or status.state not in ("settled", "deferred"):
        violations.append(f"occurrence ended {getattr(status, 'state', None)}; health said {findings}")
    if len(sent) != len(set(sent)):
        violations.append(f"a unit was sent twice: {sent}")
    for pid in _call_pids(folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return {"kill": index, "arrangement": arrangement, "admitted_before_kill": admitted,
            "runner_killed": runner is not None or arrangement == "tick",
            "state": status.state if status else None, "status": getattr(status, "status", None),
            "sent": len(sent), "repairs": repairs, "violations": violations}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--journal-url-base", help="a PostgreSQL URL prefix (one database per kill), else SQLite")
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    random.seed(args.seed)
    arrangements = ("run", "tick", "both")
    results = []
    for index in range(args.kills):
        result = one_kill(index, arrangements[index % 3], args.journal_url_base)
        print(json.dumps(result), flush=True)
        results.append(result)
    summary = {"kills": len(results), "by_arrangement": Counter(r["arrangement"] for r in results),
               "ended": Counter(f"{r['state']}/{r['status']}" for r in results),
               "reconciled": sum("reconciled-dead-runner" in r["repairs"] for r in results),
               "violations": [v for r in results for v in r["violations"]]}
    print(json.dumps(summary, default=dict), flush=True)
    return 1 if summary["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
