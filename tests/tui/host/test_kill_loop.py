"""A few kills of the kill loop (tests/loops/kill_runs.py, run by hand for hundreds) on each backend: a real tick
and its `run` runner killed mid-night (the runner, the tick's session, or both) while a call and its tool work,
then health and the next tick finish the night. Every kill ends with the occurrence settled or resumable, no
process of the call alive when health reconciles the run, and nothing sent or paid twice. Here each kill lands
after the runner holds its segment's lease (the loop by hand also kills earlier)."""

from __future__ import annotations

import random

import pytest

from tests.loops.kill_runs import one_kill

KILLS = [("run", "detach"), ("tick", "spawn"), ("both", "detach")]


@pytest.mark.parametrize(("arrangement", "tool"), KILLS)
def test_a_killed_night_on_sqlite_settles_with_nothing_done_twice(
    sqlite_url: str, arrangement: str, tool: str
) -> None:
    random.seed(f"{arrangement}/{tool}")
    result = one_kill(0, arrangement, sqlite_url, tool, runner_started=True)
    assert result["violations"] == [], result
    assert result["state"] in ("settled", "deferred"), result


@pytest.mark.postgres
@pytest.mark.parametrize(("arrangement", "tool"), KILLS)
def test_a_killed_night_on_postgresql_settles_with_nothing_done_twice(
    postgres_url: str, arrangement: str, tool: str
) -> None:
    random.seed(f"{arrangement}/{tool}")
    result = one_kill(0, arrangement, postgres_url, tool, runner_started=True)
    assert result["violations"] == [], result
    assert result["state"] in ("settled", "deferred"), result
