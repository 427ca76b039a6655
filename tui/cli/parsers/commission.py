"""`factory-schedule commission new|check`: an owner's commission made and checked on the command line.

`new` prints the proposed commission (every value a proposal the owner may edit) as JSON that
`record-commission` takes unchanged; `check FILE` reads one and says, a line per problem, what is
wrong with it in words, or else what its nights will look like: each lane's slot in local time,
the first night in start order, and the week's calls and token bounds against the ceiling.
Neither opens a journal. `new` says why it cannot propose on stderr (exit 2), so that
`commission new ... > commission.json` never writes an error into the file.
"""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.tui.cli.options import integer, text


def _products(value: str) -> list[str]:
    return [product.strip() for product in text(value).split(",")]


def register(subcommands: Any) -> None:
    commission = subcommands.add_parser("commission", help="propose a commission (new) or check one (check)",
                                        description=__doc__)
    commands = commission.add_subparsers(dest="commission_command", metavar="new|check", required=True)
    new = commands.add_parser("new", help="print a proposed commission as JSON, ready for record-commission",
                              journal_help=argparse.SUPPRESS,
                              description="Print a proposed commission (the proposed values the commission reference "
                                          "explains) as JSON; edit it, check it, record it.")
    new.add_argument("--products", type=_products, required=True, metavar="A,B",
                     help="the Product IDs, comma-separated")
    new.add_argument("--weekly-tokens", type=integer, required=True, metavar="N",
                     help="the token ceiling of each week (no default: it is the owner's to set)")
    new.add_argument("--pipeline", action="store_true",
                     help="also schedule the staged promotion and maturation lanes, with their default settings")
    new.add_argument("--zone", type=text, metavar="ZONE", help="IANA zone of every time (default: this machine's)")
    new.add_argument("--effective-from", type=text, metavar="YYYY-MM-DD",
                     help="the first local date anything is due (default: today in the zone)")
    new.add_argument("--stagger", type=integer, default=20, metavar="MIN",
                     help="minutes between one Product's lanes and the next's (default 20)")
    new.add_argument("--revision", type=integer, default=1, metavar="N",
                     help="the revision it will be recorded as (default 1, a new journal's first)")
    # Its stdout is the commission, sent to a file: an error there would land in the file unseen.
    new.set_defaults(handler="factory_schedule.tui.cli.commission:new_commission", errors_to_stderr=True)
    check = commands.add_parser("check", help="say what is wrong with a commission, or what its nights look like",
                                journal_help=argparse.SUPPRESS,
                                description="Read a commission file and say, a line per problem, what is wrong "
                                            "with it in words, or else what its nights will look like: each lane's "
                                            "slot in local time, the first night in start order, and the week's "
                                            "calls and token bounds against the ceiling. Opens no journal.")
    check.add_argument("file", help="the commission JSON file ('-' for stdin)")
    check.set_defaults(handler="factory_schedule.tui.cli.commission:check_commission")
