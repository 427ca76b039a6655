"""Owner records are the owner's: once a journal holds an owner key, a commission revision, an account record,
staged-lane settings, an escalation or an approval decision is written only with the owner's signature over
that record for that journal. Unsigned, mis-signed, signed for another journal, or an approval decided by its
own requester: refused, nothing written. On SQLite, and PostgreSQL when FACTORY_TEST_POSTGRES_URL names one."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ManualClock, ScheduleError
from factory_schedule.core.owner import OWNER_AGGREGATE, OwnerKeys, signed_message
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineError, PipelineLanes
from factory_schedule.store import canonical_json, open_journal
from factory_schedule.tui.host.owner_key import KeySigner, new_journal_id
from tests.core.pipeline.pipeline_support import commission

OWNER = KeySigner.generate()
RECOVERY = KeySigner.generate()
STRANGER = KeySigner.generate()


class ClaimsToBe:
    """A forger: names the owner's public key, signs with its own."""

    def __init__(self, claimed: KeySigner, signing: KeySigner) -> None:
        self.public_key, self._signing = claimed.public_key, signing

    def sign(self, message: bytes) -> str:
        return self._signing.sign(message)


class ForAnotherJournal:
    """The owner's real signature over the same record, made for another journal (a replay across journals)."""

    public_key = OWNER.public_key

    def __init__(self, journal_id: str) -> None:
        self.journal_id = journal_id

    def sign(self, message: bytes) -> str:
        document = json.loads(message)
        return OWNER.sign(signed_message(self.journal_id, document["command"], document["payload"]))


class Tampering:
    """The owner's signature over the record with one field changed: a signature for another payload."""

    public_key = OWNER.public_key

    def sign(self, message: bytes) -> str:
        document = json.loads(message)
        body = {**document["payload"], "tampered": 1}
        return OWNER.sign(signed_message(document["journal"], document["command"], body))


FORGERS: dict[str, Any] = {
    "unsigned": None,
    "another key": STRANGER,
    "another key claiming the owner's": ClaimsToBe(OWNER, STRANGER),
    "for another journal": ForAnotherJournal(new_journal_id()),
    "for another payload": Tampering(),
}


@dataclass
class Factory:
    journal: Any
    schedule: LifecycleSchedule
    lanes: PipelineLanes
    keys: OwnerKeys

    def heads(self) -> tuple[int, int, int]:
        return tuple(self.journal.head(a) for a in (SCHEDULE_AGGREGATE, PIPELINE_AGGREGATE, OWNER_AGGREGATE))  # type: ignore[return-value]


@pytest.fixture
def factory(journal_url: str) -> Iterator[Factory]:
    """A journal with a commission, its settings and an approval request recorded unsigned, then an owner key."""
    journal = open_journal(journal_url)
    clock = ManualClock("2026-12-05T12:00:00Z")
    schedule, lanes = LifecycleSchedule(journal, clock), PipelineLanes(journal, clock)
    record_commission(schedule, commission())
    lanes.request_approval(approval="pub-1", candidate="alpha-one", action="public-publish", requested_by="run-7",
                           reason="store listing")
    keys = OwnerKeys(journal, clock)
    keys.init(journal_id=new_journal_id(), signer=OWNER, recovery_key=RECOVERY.public_key)
    yield Factory(journal, schedule, lanes, keys)
    journal.close()


OwnerCommand = Callable[[Factory, Any], Any]
OWNER_COMMANDS: dict[str, OwnerCommand] = {
    "record-commission": lambda f, s: f.schedule.record_commission(commission(revision=2), signer=s),
    "record-commission with its settings": lambda f, s: record_commission(f.schedule, commission(revision=2),
                                                                          signer=s),
    "record-account": lambda f, s: f.schedule.record_account(account="claude", sequence=1, sign_in="me@example.com",
                                                             overage=False, recorded_by="owner", signer=s),
    "lanes settings": lambda f, s: f.lanes.record_settings(commission(revision=2, threshold=3), signer=s),
    "lanes escalation": lambda f, s: f.lanes.decide_escalation(lane="promotion", task=1, decided_by="owner",
                                                               decision="park", reason="enough", signer=s),
    "lanes approval-decide": lambda f, s: f.lanes.decide_approval(approval="pub-1", decided_by="owner",
                                                                  approved=True, signer=s),
}


def _refused_writing_nothing(f: Factory, act: Callable[[], Any]) -> str:
    before = f.heads()
    with pytest.raises((ScheduleError, PipelineError)) as refused:
        act()
    assert f.heads() == before
    return str(refused.value.code)  # type: ignore[attr-defined]


# One journal serves every example: each is refused and writes nothing (the test checks it), so the
# function-scoped fixture is the same journal for all of them.
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(sorted(OWNER_COMMANDS)), forger=st.sampled_from(sorted(FORGERS)))
def test_an_owner_record_not_signed_by_the_journals_owner_key_is_refused_and_writes_nothing(
        factory: Factory, command: str, forger: str) -> None:
    code = _refused_writing_nothing(factory, lambda: OWNER_COMMANDS[command](factory, FORGERS[forger]))
    assert code == ("UNSIGNED" if forger == "unsigned" else "BAD_SIGNATURE")


def test_each_owner_record_signed_by_the_owner_key_is_written(factory: Factory) -> None:
    approved = OWNER_COMMANDS["lanes approval-decide"](factory, OWNER)
    assert approved.result["approval"]["approved"] is True
    recorded = OWNER_COMMANDS["record-commission with its settings"](factory, OWNER)
    assert recorded.settings_revision == 2
    assert OWNER_COMMANDS["record-account"](factory, OWNER).replayed is False
    again = OWNER_COMMANDS["record-account"](factory, OWNER)  # Ed25519 is deterministic: a retry replays
    assert again.replayed is True


def test_a_requester_never_decides_its_own_request_even_signed(factory: Factory) -> None:
    code = _refused_writing_nothing(factory, lambda: factory.lanes.decide_approval(
        approval="pub-1", decided_by="run-7", approved=True, signer=OWNER))
    assert code == "SELF_DECIDED"


def test_nothing_unsigned_or_signed_by_another_key_replaces_the_owner_key(factory: Factory) -> None:
    newcomer = KeySigner.generate()
    for how, signer in (("rotated", STRANGER), ("rotated", RECOVERY), ("recovered", OWNER),
                        ("recovered", STRANGER)):
        def replace(how: Any = how, signer: Any = signer) -> Any:
            return factory.keys.replace(how=how, signer=signer, public_key=newcomer.public_key,
                                        recovery_key=newcomer.public_key)

        code = _refused_writing_nothing(factory, replace)
        assert code == "BAD_SIGNATURE", (how, signer)
    assert _refused_writing_nothing(factory, lambda: factory.keys.init(
        journal_id=new_journal_id(), signer=STRANGER, recovery_key=STRANGER.public_key)) == "CONFLICT"


def test_a_rotation_signed_by_the_current_key_and_a_recovery_by_the_recovery_key_each_take_over(
        factory: Factory) -> None:
    second, third, spare = KeySigner.generate(), KeySigner.generate(), KeySigner.generate()
    factory.keys.replace(how="rotated", signer=OWNER, public_key=second.public_key, recovery_key=spare.public_key)
    assert _refused_writing_nothing(factory, lambda: OWNER_COMMANDS["record-account"](factory, OWNER)) == \
        "BAD_SIGNATURE"  # the old key no longer signs
    factory.keys.replace(how="recovered", signer=spare, public_key=third.public_key, recovery_key=spare.public_key)
    state = factory.keys.state()
    assert state is not None and [key.how for key in state.keys] == ["init", "rotated", "recovered"]
    assert OWNER_COMMANDS["record-account"](factory, third).replayed is False


def test_a_journal_without_an_owner_key_keeps_accepting_unsigned_owner_records(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    clock = ManualClock("2026-12-05T12:00:00Z")
    schedule = LifecycleSchedule(journal, clock)
    record_commission(schedule, commission())
    assert schedule.record_account(account="claude", sequence=1, sign_in="me@example.com", overage=False,
                                   recorded_by="owner").replayed is False
    unsigned = schedule.record_account(account="claude", sequence=2, sign_in="me@example.com", overage=False,
                                       recorded_by="owner", signer=OWNER)  # nothing to sign for: recorded as always
    assert "ownerSignature" not in journal.history(SCHEDULE_AGGREGATE)[-1].data
    assert unsigned.replayed is False


def test_the_signed_message_names_the_journal_the_command_and_the_payload_without_its_signature() -> None:
    message = signed_message("ab" * 16, "discovery/account/claude/1", {"b": 1, "ownerSignature": {"x": "y"}})
    assert message == canonical_json({"protocol": "sf-owner-signature/1", "journal": "ab" * 16,
                                      "command": "discovery/account/claude/1", "payload": {"b": 1}}).encode()


def test_health_says_an_unprotected_journal_is_an_error_and_a_recovered_key_a_warning(factory: Factory) -> None:
    from factory_schedule.core.health import owner_key_findings

    [missing] = owner_key_findings(None)
    assert (missing.kind, missing.severity) == ("owner-key-missing", "error")
    assert "factory-schedule owner init" in missing.message
    assert owner_key_findings(factory.keys.state()) == []
    new = KeySigner.generate()
    factory.keys.replace(how="recovered", signer=RECOVERY, public_key=new.public_key, recovery_key=new.public_key)
    [recovered] = owner_key_findings(factory.keys.state())
    assert (recovered.kind, recovered.severity) == ("owner-key-recovered", "warning")


@pytest.mark.parametrize(("provider", "args", "holds", "writes"), [
    ("claude", (), True, None),
    ("claude", ("--allowedTools", "Read,Grep"), True, None),
    ("claude", ("--permission-mode", "acceptEdits"), False, None),
    ("claude", ("--permission-mode", "acceptEdits"), True, "workdir"),
    ("claude", ("--allowedTools", "Read,Bash"), False, "anywhere"),
    ("claude", ("--dangerously-skip-permissions",), False, "anywhere"),
    ("claude", ("--permission-mode=bypassPermissions",), False, "anywhere"),
    ("codex", (), True, None),
    ("codex", ("--sandbox", "read-only"), True, None),
    ("codex", ("--full-auto",), True, "workdir"),
    ("codex", ("-s", "workspace-write"), False, None),
    ("codex", ("--sandbox=danger-full-access",), False, "anywhere"),
    ("codex", ("--dangerously-bypass-approvals-and-sandbox",), False, "anywhere"),
])
def test_health_reports_a_lane_whose_provider_may_write_the_journals_folder(
        provider: str, args: tuple[str, ...], holds: bool, writes: str | None) -> None:
    from factory_schedule.core.health import ProviderReach, provider_write_findings

    findings = provider_write_findings([ProviderReach("alpha/basic", provider, args, holds)])
    assert [f.evidence["writes"] for f in findings] == ([] if writes is None else [writes])
    assert all(f.kind == "provider-writes-journal" for f in findings)
