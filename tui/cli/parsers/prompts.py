"""`factory-schedule prompts new DIR --sign-in EMAIL`: a starter prompt folder for the current commission.

Writes, for every lane of the journal's current commission, the lane.toml `run` reads and one first
prompt per task (a staged lane's task: one per stage), each a start to rewrite; a file that exists
is kept as it is. `factory-schedule check --prompts DIR` then says whether tonight will run.
"""

from __future__ import annotations

from typing import Any

from factory_schedule.tui.cli.options import text


def register(subcommands: Any) -> None:
    prompts = subcommands.add_parser("prompts", help="a starter prompt folder for the current commission (new)",
                                     description=__doc__)
    commands = prompts.add_subparsers(dest="prompts_command", metavar="new", required=True)
    new = commands.add_parser("new", help="write every lane's lane.toml and first prompts (keeps existing files)",
                              description=__doc__)
    new.add_argument("folder", metavar="DIR", help="the prompt folder (made when missing)")
    new.add_argument("--sign-in", type=text, required=True, metavar="EMAIL",
                     help="the sign-in your account record names, for lane.toml")
    new.set_defaults(handler="factory_schedule.tui.cli.prompts:new_prompts")
