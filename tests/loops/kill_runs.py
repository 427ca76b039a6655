"""A kill loop, run by hand (never collected by pytest): kill a real tick, its `run` runner, or both, at a random
moment of a night whose calls take a moment and leave a tool process behind (in the call's process group, or
detached in a session of its own as Claude Code's shell tool starts commands), then let health and the next
tick do their work, and count what happened.

    .venv/bin/python -m tests.loops.kill_runs --kills 300 --minutes 40 [--postgres ADMIN_URL]

(with --postgres, each kill gets a new database on that server, dropped after; without, a SQLite file.)

For every kill it checks: the occurrence ends settled or resumable (and a resumed night settles); no process of
the run's provider call (the provider or its tool) is alive when health reconciles the run, nor after; no unit of
work was sent twice, and no unit has two calls that may have gone out (each admitted call is debited once, so
two would be a unit paid twice). It prints one JSON line per kill and a summary; exit 1 on any violation.
tests/tui/host/test_kill_loop.py runs a few of these kills in the suite.
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

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.conftest import postgres_database
from tests.tui.host.test_provider_call_outlives_no_runner import kill_session, living
from tests.tui.host.test_run import lanes_commission, record, write_lane
from tests.tui.provider_support import FAKE_LANE_ENV, TRANSCRIPTS, fake_path
from tests.tui.runner_support import CLI, REPO, cli_env

UNITS = 3
TTL = 1.0


def _transcripts(folder: Path, tool: str) -> Path:
    """The `normal` claude transcript made slow (a call of about a second) with a tool process of its own
    (`spawn`: in the call's group; `detach`: in a session of its own)."""
    lines = (TRANSCRIPTS / "claude" / "normal.jsonl").read_text().splitlines()
    slow = [*lines[:-1], f"#{tool} 1.5", "#sleep 1", lines[-1]]
    (folder / "claude").mkdir(parents=True)
    (folder / "claude" / "slow.jsonl").write_text("\n".join(slow) + "\n")
    return folder


def _night(folder: Path, url: str, tool: str) -> tuple[Path, dict[str, str]]:
    prompts = folder / "prompts"
    write_lane(prompts, "alpha/basic",
               'provider = "claude"\nsign_in = "owner@example.com"\nbound = 150000\ntimeout_minutes = 1\n'
               + FAKE_LANE_ENV,
               {"scan": {f"{i}0-unit-{i}.md": f"Scan part {i}. [transcript: slow]\n" for i in range(1, UNITS + 1)}})
    record(LifecycleSchedule(open_journal(url), SystemClock()), lanes_commission(("alpha", "scan", "claude")))
    env = cli_env(url, FAKE_PROVIDER_LOG=str(folder / "contacts.log"),
                  FAKE_TRANSCRIPTS=str(_transcripts(folder / "transcripts", tool)))
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


def _calls(journal: Any) -> tuple[dict[int, str], dict[int, int]]:
    """Each admitted call's unit (`task/work`) and each ended call's debit, from the schedule's history (a
    settled occurrence keeps only its calls' totals)."""
    admitted: dict[int, str] = {}
    debits: dict[int, int] = {}
    for event in journal.iter_history(SCHEDULE_AGGREGATE):
        if event.type == "call-admitted":
            admitted[event.data["call"]] = f"{event.data['task']}/{event.data['work']}"
        elif event.type == "call-ended":
            debits[event.data["call"]] = event.data["debit"]
    return admitted, debits


def _health_repair(url: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([*CLI, "--journal", url, "health", "--repair", "--json"], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)
    lines = done.stdout.splitlines()
    try:
        return dict(json.loads(lines[-1])) if lines else {"exit": done.returncode, "stderr": done.stderr[-300:]}
    except ValueError:
        return {"exit": done.returncode, "stdout": lines[-1][-300:]}


def _runner_leases(journal: Any, tick: int) -> list[Any]:
    return [lease for lease in leases.list_leases(journal)
            if lease.scope.startswith("segment/") and lease.info.get("pid") not in (None, tick)]


def one_kill(index: int, arrangement: str, url: str | None = None, tool: str = "spawn",
             runner_started: bool = False) -> dict[str, Any]:
    """Kill `arrangement` ("run", "tick" or "both") of a night on the journal at `url` (None: a new SQLite
    file) at a random moment (with `runner_started`, a random moment after its runner holds its lease), then
    let health and the next tick finish it; the kill's outcome and any violation."""
    folder = Path(tempfile.mkdtemp(prefix=f"kill-{index}-"))
    url = url or f"sqlite:///{folder}/journal.db"
    prompts, env = _night(folder, url, tool)
    journal = open_journal(url)
    schedule = LifecycleSchedule(journal, SystemClock())
    tick = _tick(url, prompts, env)
    if runner_started:
        deadline = time.monotonic() + 120
        while not _runner_leases(journal, tick.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(random.uniform(0.0, 3.0))
    else:
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
    health_errors: list[str] = []
    deadline = time.monotonic() + 180
    occurrence = None
    while time.monotonic() < deadline:
        view = schedule.read()
        occurrences = view.occurrences if view is not None else []
        occurrence = occurrences[0] if occurrences else None
        if (occurrence is None or occurrence.state != "running") and not leases.list_leases(journal):
            break  # (a tick killed before its admission leaves its worker lease: health clears it first)
        time.sleep(2 * TTL + 0.2)
        alive_before = [pid for pid in _call_pids(folder) if living(pid)]
        report = _health_repair(url, env)
        if "repairs" not in report:  # health could not run its pass (said in its one JSON line): try again
            health_errors.append(str(report)[:300])
            continue
        kinds = [repair["kind"] for repair in report["repairs"]]
        repairs += kinds
        findings = [finding["kind"] for finding in report["findings"]]
        alive_after = [pid for pid in _call_pids(folder) if living(pid)]
        if "reconciled-dead-runner" in kinds and (alive_before or alive_after):
            violations.append(f"reconciled while call processes {sorted({*alive_before, *alive_after})} lived")
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
    calls, debits = _calls(journal)
    paid = Counter(unit for k, unit in calls.items() if debits.get(k) != 0)
    if any(count > 1 for count in paid.values()):
        violations.append(f"a unit has two calls that may have gone out (debited twice): {dict(paid)}")
    if len(sent) > len(calls):
        violations.append(f"{len(sent)} contacts but {len(calls)} admitted calls: a call went out unadmitted")
    for pid in _call_pids(folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return {"kill": index, "arrangement": arrangement, "tool": tool, "admitted_before_kill": admitted,
            "runner_killed": runner is not None or arrangement == "tick",
            "state": status.state if status else None, "status": getattr(status, "status", None),
            "sent": len(sent), "repairs": repairs, "health_errors": health_errors, "violations": violations}


def kill_on(index: int, arrangement: str, tool: str, postgres: str | None) -> dict[str, Any]:
    if postgres is None:
        return one_kill(index, arrangement, None, tool)
    with postgres_database(postgres, f"fs_kill_{os.getpid()}_{index}") as url:
        return one_kill(index, arrangement, url, tool)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--minutes", type=float, default=60.0, help="stop starting kills after this long")
    parser.add_argument("--postgres", help="a PostgreSQL admin URL (a new database per kill), else SQLite")
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    random.seed(args.seed)
    arrangements, tools = ("run", "tick", "both"), ("spawn", "detach")
    stop_at = time.monotonic() + args.minutes * 60
    results = []
    for index in range(args.kills):
        if time.monotonic() > stop_at:
            break
        result = kill_on(index, arrangements[index % 3], tools[(index // 3) % 2], args.postgres)
        print(json.dumps(result), flush=True)
        results.append(result)
    summary = {"backend": "postgresql" if args.postgres else "sqlite", "kills": len(results),
               "by_arrangement": Counter(f"{r['arrangement']}/{r['tool']}" for r in results),
               "ended": Counter(f"{r['state']}/{r['status']}" for r in results),
               "reconciled": sum("reconciled-dead-runner" in r["repairs"] for r in results),
               "violations": [v for r in results for v in r["violations"]]}
    print(json.dumps(summary, default=dict), flush=True)
    return 1 if summary["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
