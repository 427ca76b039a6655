"""What `commission new` and `commission check` do: propose a commission, or say what is wrong with one."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pendulum

from factory_schedule.core import (
    commission_problems,
    is_valid_zone,
    parse_commission,
    proposed_commission,
)
from factory_schedule.core.night_outline import night_outline
from factory_schedule.tui.cli.options import read_commission_file
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, EXIT_OK, EXIT_OVER_CEILING, say
from factory_schedule.tui.host.clock import SystemClock, owner_zone
from factory_schedule.tui.terminal_text import printable


def new_commission(args: argparse.Namespace) -> int:

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


def check_commission(args: argparse.Namespace) -> int:
    document: Any = read_commission_file(args.file)
    problems = commission_problems(document)
    for problem in problems:
        say(printable(f"problem: {problem}"))
    if problems:
        return EXIT_BAD_INPUT
    outline = night_outline(parse_commission(document), SystemClock().now())
    for line in outline.lines:
        say(printable(line))
    return EXIT_OVER_CEILING if outline.over_ceiling else EXIT_OK
