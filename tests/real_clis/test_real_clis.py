"""The pinned Claude Code and Codex CLIs themselves, run for real: HOME an empty folder, no credentials, and
every address a provider could be reached at a closed port on this machine (the API base URLs, the proxies,
Codex's model provider), so nothing can reach a provider.

tests/real_clis/install.sh puts the CLIs in a per-machine cache (`.ci/run` and `./dev test` run it); without
them (no npm, no registry) every test here is skipped with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.providers.calls import make_call
from tests.tui.host.test_run import BOUND, lanes_commission, occurrence_of, record, write_lane
from tests.tui.runner_support import CLI, REPO, json_lines, run_logs

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there
# Passed to the CLIs beyond the provider environment's allow-list (which passes the proxies and HOME).
PASSED = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")
INSTALL = Path(__file__).resolve().parent / "install.sh"
TIMEOUT = 120.0


def _bin() -> Path:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed: the real CLIs' cache cannot be found")
    folder = Path(subprocess.run(["bash", str(INSTALL), "--print-bin"], capture_output=True, text=True,
                                 check=True).stdout.strip())
    if not ((folder / "claude").exists() and (folder / "codex").exists()):
        pytest.skip(f"the pinned CLIs are not installed in {folder}: run `bash tests/real_clis/install.sh` "
                    "(it needs npm and the npm registry)")
    return folder


@pytest.fixture(scope="module")
def bin_folder() -> Path:
    return _bin()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, but for a Codex config whose only model provider is the closed port."""
    folder = tmp_path / "home"
    (folder / ".codex").mkdir(parents=True)
    (folder / ".codex" / "config.toml").write_text(
        f'model_provider = "closed"\n[model_providers.closed]\nname = "closed"\nbase_url = "{CLOSED}/v1"\n'
        'wire_api = "responses"\n')
    return folder


def isolated(home: Path, **extra: str) -> dict[str, str]:
    """An environment made from nothing (no variable of this machine's, so none of its sign-ins), with every
    way out a closed port."""
    return {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]), "HOME": str(home),
            "ANTHROPIC_BASE_URL": CLOSED, "OPENAI_BASE_URL": f"{CLOSED}/v1", "HTTPS_PROXY": CLOSED,
            "HTTP_PROXY": CLOSED, "ALL_PROXY": CLOSED, "NO_PROXY": "", "PYTHONPATH": str(REPO), **extra}


def tick(url: str, prompts: Path, env: dict[str, str]) -> tuple[int, list[dict[str, Any]], str]:
    """`factory-schedule tick -- factory-schedule run` in `env` alone."""
    done = subprocess.run([*CLI, "--journal", url, "tick", "--ttl", "1", "--", *CLI, "run", "--prompts",
                           str(prompts)], capture_output=True, text=True, cwd=REPO, timeout=600,
                          env={**env, "FACTORY_JOURNAL": url})
    lines = json_lines(done.stdout)
    return done.returncode, lines, done.stderr + run_logs(lines)


def first_event(transcript: Path) -> dict[str, Any]:
    return dict(json.loads(transcript.read_text().splitlines()[0]))


@pytest.mark.parametrize("prompt", ["---\ntitle: \"front matter\"\n---\n- a list item\n", "--help me"])
def test_the_real_claude_takes_a_prompt_that_starts_with_dashes(bin_folder: Path, home: Path, tmp_path: Path,
                                                                prompt: str) -> None:
    transcript = tmp_path / "call.jsonl"
    made = make_call("claude", str(bin_folder / "claude"), prompt, BOUND, TIMEOUT, cwd=tmp_path,
                     env=isolated(home), transcript=transcript, passed=PASSED)
    assert first_event(transcript)["subtype"] == "init"  # the command line was accepted: the stream started
    assert made.outcome.report == {"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}  # logged out
    assert made.outcome.stop == "sign-in"


def test_the_real_codex_takes_a_prompt_that_starts_with_dashes_outside_a_git_repository(
        bin_folder: Path, home: Path, tmp_path: Path) -> None:
    workdir = tmp_path / "lane"
    workdir.mkdir()
    transcript = tmp_path / "call.jsonl"
    made = make_call("codex", str(bin_folder / "codex"), "---\n- a list item\n", BOUND, TIMEOUT, cwd=workdir,
                     env=isolated(home), transcript=transcript, passed=PASSED)
    assert first_event(transcript)["type"] == "thread.started"
    # Its provider is a closed port: it says it waits for a network, and the call stops there, unsent.
    assert (made.outcome.report, made.outcome.stop) == ({"kind": "unreachable"}, "unreachable")
    assert not made.run.end.timed_out


def real_lane(prompts: Path, lane: str, provider: str, executable: Path, units: int,
              passed: tuple[str, ...] = PASSED) -> None:
    task = "scan" if provider == "claude" else "review"
    write_lane(prompts, lane, f'provider = "{provider}"\nsign_in = "owner@example.com"\nbound = {BOUND}\n'
               f'timeout_minutes = 2\nexecutable = "{executable}"\nenv = {json.dumps(list(passed))}\n',
               {task: {f"{i}0-unit.md": f"---\nunit: {i}\n---\n- scan part {i}\n" for i in range(1, units + 1)}})


@pytest.fixture
def schedule(sqlite_url: str) -> LifecycleSchedule:
    return LifecycleSchedule(open_journal(sqlite_url), SystemClock())


def test_a_logged_out_night_defers_logged_out_with_nothing_sent(
        bin_folder: Path, home: Path, sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    real_lane(prompts, "alpha/basic", "claude", bin_folder / "claude", 2)
    real_lane(prompts, "beta/basic", "codex", bin_folder / "codex", 2)
    record(schedule, lanes_commission(("alpha", "scan", "claude"), ("beta", "review", "chatgpt")))
    code, lines, err = tick(sqlite_url, prompts, isolated(home))
    assert code == 0, (lines, err)
    for lane in ("alpha/basic", "beta/basic"):
        occurrence = occurrence_of(schedule, lane)
        assert (occurrence.state, occurrence.deferrals[-1].reason, occurrence.calls) == ("deferred", "logged-out",
                                                                                          [])


def test_a_claude_whose_api_is_a_closed_port_costs_one_call_and_debits_nothing(
        bin_folder: Path, home: Path, sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    real_lane(prompts, "alpha/basic", "claude", bin_folder / "claude", 3,
              (*PASSED, "ANTHROPIC_API_KEY", "CLAUDE_CODE_MAX_RETRIES"))
    record(schedule, lanes_commission(("alpha", "scan", "claude")))
    # A placeholder key (not a credential) signs the CLI in as far as it can tell, so it tries the API; no
    # retries, so the one call takes a second instead of Claude Code's ten retries (about three minutes).
    env = isolated(home, ANTHROPIC_API_KEY="placeholder-not-a-credential", CLAUDE_CODE_MAX_RETRIES="0")
    code, lines, err = tick(sqlite_url, prompts, env)
    assert code == 0, (lines, err)
    alpha = occurrence_of(schedule, "alpha/basic")
    assert [(c.outcome, c.debit, c.unsent) for c in alpha.calls] == [("unreachable", 0, True)]
    assert alpha.settlement.status == "unavailable"
    assert alpha.settlement.reason.startswith("provider unreachable: ")
    assert "ConnectionRefused" in alpha.settlement.reason


def test_run_check_asks_the_real_clis_and_says_in_one_line_that_they_are_signed_out(
        bin_folder: Path, home: Path, sqlite_url: str, schedule: LifecycleSchedule, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    real_lane(prompts, "alpha/basic", "claude", bin_folder / "claude", 1)
    real_lane(prompts, "beta/basic", "codex", bin_folder / "codex", 1)
    record(schedule, lanes_commission(("alpha", "scan", "claude"), ("beta", "review", "chatgpt")))
    done = subprocess.run([*CLI, "--journal", sqlite_url, "run", "--check", "--prompts", str(prompts)],
                          capture_output=True, text=True, env=isolated(home), cwd=REPO, timeout=180)
    assert done.returncode == 2, done.stderr
    alpha, beta = json_lines(done.stdout)
    assert (alpha["version"], alpha["error"].split(":")[0]) == ("2.1.197 (Claude Code)", "claude is not signed in")
    assert (beta["version"], beta["error"].split(":")[0]) == ("codex-cli 0.171.0", "codex is not signed in")
