"""Health's prompt-binding check: drift reported, the binding recorded only when it
reads back whole and stable, a blocker otherwise; nothing else written. Real SQLite journals and real
prompt folders in tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factory_schedule.core import ManualClock
from factory_schedule.core.health.bindings import BindingRead
from factory_schedule.core.health.records import HEALTH_AGGREGATE
from factory_schedule.tui.host import bindings
from factory_schedule.tui.host.providers.prompts import read_binding
from tests.tui.runner_support import cli

from .test_health import _commissioned

LANE = "alpha/basic"
BY = "health-reconciler@test-host"


def _folder(tmp_path: Path, prompt: bytes = b"Scan the repository.\n") -> Path:
    prompts = tmp_path / "prompts"
    lane = prompts / "alpha" / "basic"
    (lane / "scan").mkdir(parents=True, exist_ok=True)
    (lane / "lane.toml").write_bytes(b'provider = "claude"\n')
    (lane / "scan" / "10-repo.md").write_bytes(prompt)
    return prompts


def _kinds(journal: Any, prompts: Path, read: Any = read_binding) -> list[str]:
    return [f.kind for f in bindings.binding_findings(bindings.check_bindings(journal, [LANE], str(prompts), read))]


def _repair(world: tuple[Any, Any, ManualClock], prompts: Path, read: Any = read_binding) -> list[str]:
    journal, _schedule, clock = world
    return [r.kind for r in bindings.repair_bindings(journal, [LANE], str(prompts), BY, clock.now(), read)]


def test_a_binding_is_recorded_once_read_back_whole_and_a_resave_is_not_drift(
    world: tuple[Any, Any, ManualClock], tmp_path: Path
) -> None:
    journal, schedule, _clock = world
    _commissioned(world)
    prompts = _folder(tmp_path)
    assert bindings.commission_lanes(schedule.read()) == [LANE]
    assert _kinds(journal, prompts) == ["binding-unrecorded"]
    schedule_version = journal.head("discovery/schedule")
    assert _repair(world, prompts) == ["recorded-binding"]
    assert _kinds(journal, prompts) == []
    _folder(tmp_path, b"\xef\xbb\xbfScan the repository.\r\n\r\n")  # an editor's re-save
    assert _kinds(journal, prompts) == [] and _repair(world, prompts) == []
    assert journal.head("discovery/schedule") == schedule_version  # no decision, no commission touched


def test_an_edited_prompt_is_drift_that_repair_records(world: tuple[Any, Any, ManualClock], tmp_path: Path) -> None:
    journal, _schedule, _clock = world
    _commissioned(world)
    prompts = _folder(tmp_path)
    _repair(world, prompts)
    _folder(tmp_path, b"Scan the repository and its dependencies.\n")
    [finding] = bindings.binding_findings(bindings.check_bindings(journal, [LANE], str(prompts)))
    assert (finding.kind, finding.severity, finding.evidence["drifted"]) == ("binding-drift", "warning", ["snapshot"])
    assert _repair(world, prompts) == ["recorded-binding"]
    assert _kinds(journal, prompts) == []
    recorded = [e for e in journal.iter_history(HEALTH_AGGREGATE) if e.type == "binding-recorded"]
    assert len(recorded) == 2 and recorded[-1].data["recordedBy"] == BY


def test_a_folder_that_cannot_be_read_is_a_blocker_recorded_once(
    world: tuple[Any, Any, ManualClock], tmp_path: Path
) -> None:
    journal, _schedule, _clock = world
    _commissioned(world)
    assert _kinds(journal, tmp_path / "nowhere") == ["binding-blocked"]
    assert _repair(world, tmp_path / "nowhere") == ["recorded-binding-blocker"]
    assert _repair(world, tmp_path / "nowhere") == []
    assert bindings.recorded_bindings(journal) == {}


def test_a_folder_that_keeps_changing_is_read_again_once_then_left_to_the_owner(
    world: tuple[Any, Any, ManualClock], tmp_path: Path
) -> None:
    journal, _schedule, _clock = world
    _commissioned(world)
    reads = []

    def changing(source: str, lane: str) -> BindingRead:
        reads.append(lane)
        return BindingRead(lane, source, "/resolved", f"{len(reads):064d}")

    assert _kinds(journal, tmp_path, changing) == ["binding-blocked"] and len(reads) == 4
    assert _repair(world, tmp_path, changing) == ["recorded-binding-blocker"]
    assert bindings.recorded_bindings(journal) == {}


def test_a_concurrent_writer_makes_repair_read_again_and_retry_once(
    world: tuple[Any, Any, ManualClock], tmp_path: Path
) -> None:
    journal, _schedule, _clock = world
    _commissioned(world)
    prompts = _folder(tmp_path)
    interfered: list[bool] = []

    def racing(source: str, lane: str) -> BindingRead:
        if not interfered:  # another health run records a blocker between our read and our write
            interfered.append(True)
            bindings._record_blocker(journal, "beta/basic", "another writer", {})
        return read_binding(source, lane)

    assert _repair(world, prompts, racing) == ["recorded-binding"]
    assert list(bindings.recorded_bindings(journal)) == [LANE]


def test_health_checks_and_repairs_bindings_when_a_prompt_folder_is_named(
    world: tuple[Any, Any, ManualClock], tmp_path: Path
) -> None:
    journal = world[0]
    _commissioned(world)
    prompts = _folder(tmp_path)
    _code, report, _ = cli(journal.url, "health", "--json", "--prompts", str(prompts))
    assert "binding-unrecorded" in [f["kind"] for f in report["findings"]]
    _code, report, _ = cli(journal.url, "health", "--json", "--repair", FACTORY_PROMPTS=str(prompts))
    assert "recorded-binding" in [r["kind"] for r in report["repairs"]]
    _folder(tmp_path, b"Changed.\n")
    _code, report, _ = cli(journal.url, "health", "--json", FACTORY_PROMPTS=str(prompts))
    assert "binding-drift" in [f["kind"] for f in report["findings"]]
    _code, report, _ = cli(journal.url, "health", "--json")  # no folder named: not checked
    assert not [f for f in report["findings"] if f["kind"].startswith("binding-")]
