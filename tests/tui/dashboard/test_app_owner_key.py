"""The dashboard's owner forms in a journal that holds an owner key: after the confirm step, the passphrase
step opens the key (a wrong passphrase writes nothing and asks again), the decision is recorded signed, and
the key stays open in this process for the owner-set minutes only."""

from __future__ import annotations

from pathlib import Path

from factory_schedule.core import ManualClock
from factory_schedule.core.owner import OwnerKeys
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import open_journal
from factory_schedule.tui.dashboard.app import build_app
from factory_schedule.tui.dashboard.owner_signing import OwnerSigning
from factory_schedule.tui.dashboard.screens.approval import ApprovalForm
from factory_schedule.tui.dashboard.screens.passphrase import PassphraseStep
from factory_schedule.tui.host.demo import DEMO_END, DEMO_HOST
from factory_schedule.tui.host.demo_lanes import APPROVAL
from factory_schedule.tui.host.owner_key import KdfCost, KeySigner, new_journal_id, seal, write_key_file

from .test_app_journeys import confirm_write, synchronously
from .test_app_lifecycle import type_into

PASSPHRASE = "owner passphrase"
LIGHT = KdfCost(memory_kib=8 * 1024, iterations=1, lanes=1)  # a test's own key: cheap to open, same code


class Minutes:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _protected(demo_url: str, tmp_path: Path) -> Path:
    signer = KeySigner.generate()
    OwnerKeys(open_journal(demo_url), ManualClock(DEMO_END)).init(
        journal_id=new_journal_id(), signer=signer, recovery_key=KeySigner.generate().public_key)
    key_path = tmp_path / "owner-key.json"
    write_key_file(key_path, seal(signer, PASSPHRASE, LIGHT))
    return key_path


@synchronously
async def test_approving_in_a_protected_journal_asks_the_passphrase_once_and_records_a_signed_decision(
        demo_url: str, tmp_path: Path) -> None:
    key_path, clock = _protected(demo_url, tmp_path), Minutes()
    app = build_app(demo_url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///journal.db",
                    owner_signing=OwnerSigning(key_path, minutes=5, now=clock, hint="(The demo's passphrase: x)"))
    before = open_journal(demo_url).head(PIPELINE_AGGREGATE)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalForm)
        await type_into(pilot, "#decision", "approve")
        await pilot.press("enter")
        await confirm_write(pilot)
        assert isinstance(app.screen, PassphraseStep)
        why = str(app.screen.query_one("#passphrase-why").render())
        assert "stays open in this dashboard for 5 minutes" in why  # the owner knows the next decisions are signed
        assert why.endswith("(The demo's passphrase: x)")  # the demo's owner sees the passphrase it made
        await type_into(pilot, "#passphrase", "not it")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PassphraseStep)  # asked again, nothing written
        assert "does not open" in str(app.screen.query_one("#passphrase-error").render())
        assert open_journal(demo_url).head(PIPELINE_AGGREGATE) == before
        await type_into(pilot, "#passphrase", PASSPHRASE)
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, (PassphraseStep, ApprovalForm))
        key = OwnerKeys(app.journal, app.clock).state()
        assert key is not None
        assert app.owner_signing.kept(key.current.public_key) is not None  # kept for the owner-set minutes
        clock.now += 5 * 60
        assert app.owner_signing.kept(key.current.public_key) is None  # and no longer
    state = PipelineLanes(open_journal(demo_url), ManualClock(DEMO_END)).state()
    assert state is not None
    approval = next(a for a in state.approvals if a.id == APPROVAL)
    assert (approval.approved, approval.decided_by) == (True, "owner")
    decision = open_journal(demo_url).receipt(f"pipeline/approval/{APPROVAL}/decision")
    assert decision is not None


@synchronously
async def test_going_back_from_the_passphrase_step_writes_nothing(demo_url: str, tmp_path: Path) -> None:
    key_path = _protected(demo_url, tmp_path)
    app = build_app(demo_url, ManualClock(DEMO_END), None, host=DEMO_HOST, journal_label="sqlite:///journal.db",
                    owner_signing=OwnerSigning(key_path))
    before = open_journal(demo_url).head(PIPELINE_AGGREGATE)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        await type_into(pilot, "#decision", "approve")
        await pilot.press("enter")
        await confirm_write(pilot)
        assert isinstance(app.screen, PassphraseStep)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalForm)
    assert open_journal(demo_url).head(PIPELINE_AGGREGATE) == before
