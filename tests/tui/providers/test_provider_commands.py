"""The command lines the real CLIs take for any prompt, and a provider's output read within bounds.

The fakes parse their command lines as the real CLIs do (tests/fakes/replay.py): a prompt passed where an
option may stand is refused with the real words, so a command line that only works for tame prompts fails here.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from factory_schedule.tui.host.providers.calls import command, make_call
from tests.tui.host.test_provider_call_outlives_no_runner import living
from tests.tui.provider_support import FAKE_SETTINGS, FAKES, REPO, TRANSCRIPTS, fake_env

BOUND = 150_000
TIMEOUT = 20.0
WILD_PROMPTS = [
    "---\ntitle: \"front matter\"\n---\nScan the repository.\n",
    "- a list item\n- another 'quoted' one\n",
    "--help me scan the repository",
    "-p",
    "--",
]


def _sent(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("provider", ["claude", "codex"])
@pytest.mark.parametrize("prompt", WILD_PROMPTS)
def test_a_prompt_that_looks_like_options_reaches_the_model_as_written(provider: str, prompt: str,
                                                                       tmp_path: Path) -> None:
    log = tmp_path / "contacts.log"
    made = make_call(provider, provider, prompt, BOUND, TIMEOUT,  # type: ignore[arg-type]
                     env=fake_env(log, FAKE_TRANSCRIPT="normal"), passed=FAKE_SETTINGS, cwd=tmp_path)
    assert made.outcome.report["kind"] == "result", made.outcome.detail
    assert [entry["sent"] for entry in _sent(log)] == [prompt]


@pytest.mark.parametrize("provider", ["claude", "codex"])
def test_an_owners_variadic_option_cannot_swallow_the_prompt(provider: str, tmp_path: Path) -> None:
    extra = ["--allowedTools", "Read", "Grep"] if provider == "claude" else ["--add-dir", str(tmp_path)]
    log = tmp_path / "contacts.log"
    made = make_call(provider, provider, "Scan.", BOUND, TIMEOUT, extra_args=extra,  # type: ignore[arg-type]
                     env=fake_env(log, FAKE_TRANSCRIPT="normal"), passed=FAKE_SETTINGS, cwd=tmp_path)
    assert made.outcome.report["kind"] == "result"
    assert [entry["sent"] for entry in _sent(log)] == ["Scan."]


def test_codex_runs_in_a_workdir_that_is_no_git_repository(tmp_path: Path) -> None:
    assert not any((folder / ".git").exists() for folder in (tmp_path, *tmp_path.parents))
    made = make_call("codex", "codex", "Scan.", BOUND, TIMEOUT, env=fake_env(FAKE_TRANSCRIPT="normal"),
                     passed=FAKE_SETTINGS, cwd=tmp_path)
    assert made.outcome.report == {"kind": "result", "tokens": 24_885, "output": "ok"}


def test_an_owners_own_skip_git_repo_check_is_not_given_twice() -> None:
    line = command("codex", "codex", ["--skip-git-repo-check", "--sandbox", "read-only"])
    assert line.count("--skip-git-repo-check") == 1
    assert line[-2:] == ["--", "-"]


@pytest.mark.parametrize(("argv", "code", "words"), [
    (["claude", "-p", "---\ntitle: x", "--output-format", "stream-json"], 1, "error: unknown option '---"),
    (["claude", "-p", "--help me", "--output-format", "stream-json"], 1, "error: unknown option '--help me'"),
    (["codex", "exec", "--json", "--skip-git-repo-check", "---x"], 2, "error: unexpected argument '---x' found"),
    (["codex", "exec", "--json", "-"], 1, "Not inside a trusted directory and --skip-git-repo-check was not"),
    (["codex", "exec", "--json", "--skip-git-repo-check", "--skip-git-repo-check", "-"], 2,
     "cannot be used multiple times"),
])
def test_the_fakes_refuse_a_command_line_as_the_real_clis_do(argv: list[str], code: int, words: str,
                                                             tmp_path: Path) -> None:
    done = subprocess.run([str(FAKES / argv[0]), *argv[1:]], input="x", capture_output=True, text=True,
                          cwd=tmp_path, env=fake_env(), timeout=30)
    assert (done.returncode, done.stdout) == (code, "")
    assert words in done.stderr


# -- bounded reading -----------------------------------------------------------------------------------------------

MEMORY_CAP_MB = 200
LINE_BYTES = 400_000_000


def test_a_provider_line_past_the_limit_ends_the_call_lost_within_a_memory_cap(tmp_path: Path) -> None:
    """A 400 MB line read whole would take twice the cap; read within bounds, the call ends `lost`."""
    script = (
        "import json, resource, sys\n"
        "from factory_schedule.tui.host.providers.calls import make_call\n"
        "from tests.tui.provider_support import fake_env\n"
        f"cap = {MEMORY_CAP_MB} * 1024 * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
        f"made = make_call('claude', 'claude', '[transcript: huge-line]', {BOUND}, 120, env=fake_env())\n"
        "print(json.dumps({'report': made.outcome.report, 'detail': made.outcome.detail}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["report"] == {"kind": "lost"}
    assert "a line of its output passed" in answer["detail"]


def test_a_transcript_is_written_line_by_line_while_the_call_runs(tmp_path: Path) -> None:
    copy = tmp_path / "call.jsonl"
    seen: list[int] = []

    from factory_schedule.tui.host.providers import process

    def feed(line: str) -> bool:
        seen.append(copy.stat().st_size)
        return True

    argv = [str(FAKES / "claude"), "-p", "--output-format", "stream-json", "--verbose"]
    process.run_call(argv, feed, TIMEOUT, env=fake_env(FAKE_TRANSCRIPT="normal"), transcript=copy,
                     stdin_text="Scan.")
    assert seen[0] > 0  # the first line was on disk before the parser read it



@pytest.mark.parametrize("tool", ["spawn", "detach"])
@pytest.mark.parametrize("provider", ["claude", "codex"])
def test_nothing_a_provider_started_outlives_its_call(provider: str, tool: str, tmp_path: Path) -> None:
    """A tool process the provider left running when it answered (its output closed, still at work), in the
    call's process group or in a session of its own (Claude Code's shell tool), is the call's: it stops when
    the call ends, in a process that works as `run` does, so the next unit of work never runs beside it and
    nothing of a settled night works on unseen."""
    lines = (TRANSCRIPTS / provider / "normal.jsonl").read_text().splitlines()
    (tmp_path / "transcripts" / provider).mkdir(parents=True)
    (tmp_path / "transcripts" / provider / "lingering-tool.jsonl").write_text(
        "\n".join([f"#{tool} 120", *lines]) + "\n")
    log = tmp_path / "contacts.log"
    env = fake_env(log, FAKE_TRANSCRIPTS=str(tmp_path / "transcripts"))
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from factory_schedule.tui.host.providers.calls import make_call\n"
        "from factory_schedule.tui.host.providers.leftovers import orphans_adopted\n"
        "from tests.tui.provider_support import FAKE_SETTINGS\n"
        "with orphans_adopted():\n"
        f"    made = make_call({provider!r}, {provider!r}, 'Scan. [transcript: lingering-tool]', {BOUND}, {TIMEOUT},"
        f" passed=FAKE_SETTINGS, cwd=Path({str(tmp_path)!r}))\n"
        "print(json.dumps(made.outcome.report))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**env, "PYTHONPATH": str(REPO)})
    tools = [int(pid) for pid in Path(f"{log}.children").read_text().split()]
    try:
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout)["kind"] == "result"
        assert tools and [pid for pid in tools if living(pid)] == []
    finally:
        for pid in tools:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="adopting orphans is a Linux switch")
def test_a_process_that_ran_a_segment_is_left_adopting_nothing() -> None:
    from factory_schedule.tui.host.providers.leftovers import adopting, orphans_adopted

    assert not adopting()
    with orphans_adopted():
        assert adopting()
    assert not adopting()
