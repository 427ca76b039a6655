"""The owner's signed records on the command line: an account, a commission, an escalation's answer, an
approval. Each is signed with the owner key when the journal holds one (the passphrase from the terminal or
`--passphrase-fd`), so these handlers alone load the key's cryptography."""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.core import parse_commission
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.core.records import record_commission as next_revision
from factory_schedule.tui.cli.journal import (
    journal_url_of,
    missing_journal,
    open_existing,
    open_or_create,
    schedule_over,
)
from factory_schedule.tui.cli.lanes import open_lanes
from factory_schedule.tui.cli.options import gather, read_commission_file
from factory_schedule.tui.cli.output import answer, to_jsonable
from factory_schedule.tui.cli.owner_signing import owner_signer
from factory_schedule.tui.cli.parsers.lanes import APPROVAL_DECIDE, ESCALATION
from factory_schedule.tui.cli.parsers.schedule_commands import RECORD_ACCOUNT
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.lane_locks import journal_of


def record_account(args: argparse.Namespace) -> int:
    """The owner's account record, signed with the owner key when the journal holds one."""
    v = gather(args, RECORD_ACCOUNT)
    schedule = schedule_over(open_existing(journal_url_of(args)))
    return answer(schedule.record_account(account=v["account"], sequence=v["sequence"], sign_in=v["sign_in"],
                                         overage=v["overage"], recorded_by=v["recorded_by"],
                                         signer=owner_signer(schedule.journal, args)))


def record_commission_command(args: argparse.Namespace) -> int:
    """Record the next revision and adopt the `pipeline` settings it carries; the one runner command that may
    start a journal.

    A journal that does not exist yet is created only for a first revision the rules accept: the rule
    is asked first, on no state, so a refused first record (a revision 2, a mistyped zone) leaves no
    file behind, and the commands after it keep saying there is no journal.
    """
    commission = read_commission_file(args.file)
    url = journal_url_of(args)
    if missing_journal(url) is not None:
        _refuse_unless_a_first_record(commission)
    schedule = schedule_over(open_or_create(url))
    recorded = record_commission(schedule, commission, signer=owner_signer(schedule.journal, args))
    return answer({**to_jsonable(recorded.commission), "settings_revision": recorded.settings_revision})


def _refuse_unless_a_first_record(commission: Any) -> None:
    """Raise the rules' own refusal when `commission` cannot start a journal now."""
    next_revision(None, parse_commission(commission), SystemClock().now())


def escalation(args: argparse.Namespace) -> int:
    """The owner answers an escalation: its input checked first, then signed."""
    v = gather(args, ESCALATION)
    lanes = open_lanes(args)
    return answer(lanes.decide_escalation(lane=v["lane"], task=v["task"], decided_by=v["decided_by"],
                                         decision=v["decision"], reason=v["reason"],
                                         signer=owner_signer(journal_of(lanes), args)))


def approval_decide(args: argparse.Namespace) -> int:
    """The owner's approval or refusal of an external action: its input checked first, then signed."""
    v = gather(args, APPROVAL_DECIDE)
    lanes = open_lanes(args)
    return answer(lanes.decide_approval(approval=v["approval"], decided_by=v["decided_by"], approved=v["approved"],
                                       signer=owner_signer(journal_of(lanes), args)))
