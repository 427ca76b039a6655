"""`factory-schedule commission new|check`: an owner's commission made and checked on the command line.

`new` prints the proposed commission (every value a proposal the owner may edit) as JSON that
`record-commission` takes unchanged; `check FILE` reads one and says, a line per problem, what is
wrong with it in words, or else what its nights will look like: each lane's slot in local time,
the first night in start order, and the week's calls and token bounds against the ceiling.
Neither opens a journal.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from factory_schedule.tui.cli.options import integer, read_commission_file, text
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, EXIT_OK, EXIT_UNEXPECTED, say
from factory_schedule.tui.terminal_text import printable

EXIT_OVER_CEILING = EXIT_UNEXPECTED  # a warning, as health's: the commission is sound but the week does not fit


def owner_zone() -> str:
    """This machine's zone (where its owner most likely lives), or the proposal's default where it has none."""
    from factory_schedule.core import DEFAULT_ZONE, is_valid_zone
    from factory_schedule.tui.host.clock import host_zone

    found = host_zone()
    return found if found is not None and is_valid_zone(found) else DEFAULT_ZONE


def _products(value: str) -> list[str]:
    return [product.strip() for product in text(value).split(",")]


def _new(args: argparse.Namespace) -> int:
    import pendulum

    from factory_schedule.core import is_valid_zone, proposed_commission

    zone = args.zone or owner_zone()
    if args.effective_from is not None:
        effective_from = args.effective_from
    elif is_valid_zone(zone):
        effective_from = pendulum.now(zone).to_date_string()
    else:
        effective_from = pendulum.now("UTC").to_date_string()  # the zone is refused below, naming itself
    commission = proposed_commission(args.products, effective_from, args.weekly_tokens, revision=args.revision,
                                     zone=zone, stagger_minutes=args.stagger, pipeline=args.pipeline)
    print(json.dumps(commission, indent=2, ensure_ascii=False))
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from factory_schedule.core import commission_problems, parse_commission
    from factory_schedule.core.night_outline import night_outline

    document: Any = read_commission_file(args.file)
    problems = commission_problems(document)
    for problem in problems:
        say(printable(f"problem: {problem}"))
    if problems:
        return EXIT_BAD_INPUT
    outline = night_outline(parse_commission(document))
    for line in outline.lines:
        say(printable(line))
    return EXIT_OVER_CEILING if outline.over_ceiling else EXIT_OK


def register(subcommands: Any) -> None:
    commission = subcommands.add_parser("commission", help="propose a commission (new) or check one (check)",
                                        description=__doc__)
    commands = commission.add_subparsers(dest="commission_command", metavar="new|check", required=True)
    new = commands.add_parser("new", help="print a proposed commission as JSON, ready for record-commission",
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
    new.set_defaults(handler=_new)
    check = commands.add_parser("check", help="say what is wrong with a commission, or what its nights look like",
                                description=__doc__)
    check.add_argument("file", help="the commission JSON file ('-' for stdin)")
    check.set_defaults(handler=_check)
