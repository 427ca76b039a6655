"""`factory-schedule run`: the runner `tick` fires for an admitted segment, through Claude Code or Codex.

    factory-schedule tick -- factory-schedule run --prompts ~/factory/prompts

For each task of the lane, and each unit of work of the task (one prompt file each),
it asks `admit_call` before contacting the provider and contacts it only on a fresh
admission; it reports every contact with `end_call` (retried until the journal has it),
and defers or settles as the refusal table (docs/guides/runner.md) says. Work whose effect is
unknown is never sent again. It prints one JSON line per call and one when the segment
ends (under the tick they go to the run's log file, `<journal file>.runs/`, and the
tick's `segment_run` line shows the first error and warning lines and how the segment
ended); the provider's own output never reaches the terminal: at most the tail of its
stderr, as a JSON string.

The prompt folder (--prompts, or $FACTORY_PROMPTS):

    PROMPTS/alpha/basic/lane.toml          the lane's settings
    PROMPTS/alpha/basic/scan/10-repo.md    one prompt file per unit of work of task `scan`;
    PROMPTS/alpha/basic/scan/20-deps.md    the name without suffix is the work key, sent in name order
                                           (at most the task's maxCalls files)

lane.toml:

    provider = "claude"              # claude (Claude Code) or codex (Codex); must match the task's account
    sign_in = "owner@example.com"    # your recorded sign-in; Claude Code's own `auth status` email wins
    bound = 150000                   # tokens one call may use, at most the task's callBound
    timeout_minutes = 30             # a call still running then is stopped and reported lost
    args = ["--model", "sonnet"]     # optional: more arguments for every call
    executable = "claude"            # optional: the CLI (default: the provider's name on PATH)
    workdir = "~/src/alpha"          # optional: where the CLI runs (default: the lane's folder)
    transcripts = "~/factory/calls"  # optional: keep each call's raw JSON lines, one file per call
    [tasks.scan]                     # optional per task: bound, timeout_minutes, args
    bound = 100000

A staged lane's run (`portfolio/promotion`, `portfolio/promotion-reviewer`, `portfolio/maturation`,
`portfolio/maturation-reviewer`) works one task instead: it claims the lane's next task with its
occurrence, sends that stage's prompt with the task as context, and reports the provider's final
answer as the stage's report JSON. Its task folder (`stage` or `review`) holds one prompt per stage
the run works, named after the stage:

    PROMPTS/portfolio/promotion/stage/select.md      ... evidence.md, brief.md, prototype.md, verify.md
    PROMPTS/portfolio/promotion-reviewer/review/review.md, decide.md

`run --check` checks every lane of the current commission (or --lane) and prints one
JSON line per lane: its tasks and work keys and its CLI's version, or the one-line error.
It asks each lane's CLI itself (`--version`, its help for the options every call uses,
its sign-in status) and sends nothing to a provider.

Exit codes: 0 the segment ended (deferred or settled); 2 bad input or a prompt folder
that cannot be used (the segment is settled, nothing was sent); 3 the journal could not
be opened; 7 a report the journal would not take after every retry (the segment is left
running for `health` and a supervisor's `reconcile`); other codes as the runner CLI's.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factory_schedule.tui.host.environment import ENV_LANE, ENV_OCCURRENCE, ENV_PROMPTS, ENV_RUNNER

if TYPE_CHECKING:
    pass


def register(subcommands: Any) -> None:
    run = subcommands.add_parser(
        "run",
        help="the runner for `tick`: each unit of work of the lane through Claude Code or Codex",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--prompts", metavar="DIR", help=f"the prompt folder (default: ${ENV_PROMPTS})")
    run.add_argument("--check", action="store_true",
                     help="check the prompt folder against the current commission; send nothing")
    run.add_argument("--lane", help=f"the lane (default: ${ENV_LANE}, set by tick)")
    run.add_argument("--occurrence", help=f"the occurrence (default: ${ENV_OCCURRENCE}, set by tick)")
    run.add_argument("--runner", help=f"the segment's runner token (default: ${ENV_RUNNER}, set by tick)")
    run.set_defaults(handler="factory_schedule.tui.cli.run:run_segment_command")
