"""`factory-schedule run`: the runner `tick` fires for an admitted segment, through Claude Code or Codex.

    factory-schedule tick -- factory-schedule run --prompts ~/factory/prompts

For each task of the lane, and each unit of work of the task (one prompt file each),
it asks `admit_call` before contacting the provider and contacts it only on a fresh
admission; it reports every contact with `end_call` (retried until the journal has it),
and defers or settles as the refusal table (docs/guides/runner.md) says. Work whose effect is
unknown is never sent again. It prints one JSON line per call and one when the segment
ends (the tick sends them to its stderr); the provider's own output never reaches the
terminal: at most the tail of its stderr, as a JSON string.

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
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factory_schedule.tui.cli import output
from factory_schedule.tui.cli.journal import journal_url_of, open_existing, schedule_over
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, EXIT_OK, EXIT_UNRECORDED, BadInput
from factory_schedule.tui.host.environment import ENV_LANE, ENV_OCCURRENCE, ENV_RUNNER

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule
    from factory_schedule.tui.host.providers.prompts import LaneBinding
    from factory_schedule.tui.host.providers.work import Segment

ENV_PROMPTS = "FACTORY_PROMPTS"


def emit(document: Any) -> None:
    """One JSON line of the run's progress. A reader gone away (the tick that started this runner died) costs
    the run nothing: the journal, not this line, is the record, so the line is dropped and the paid call in
    flight goes on to be reported."""
    try:
        output.emit(document)
    except BrokenPipeError:
        output.quiet_stdout()

def _prompts_folder(args: argparse.Namespace) -> Path:
    text = args.prompts or os.environ.get(ENV_PROMPTS)
    if not text:
        raise BadInput(f"give the prompt folder with --prompts DIR or ${ENV_PROMPTS}")
    folder = Path(os.path.expanduser(text))
    if not folder.is_dir():
        raise BadInput(f"{folder}: the prompt folder does not exist")
    return folder


def _commission(schedule: LifecycleSchedule) -> dict[str, Any]:
    view = schedule.read()
    if view is None:
        raise BadInput("the journal has no commission yet")
    return dict(view.commission)


def _lane_args(binding: Any) -> list[str]:
    """Every argument the lane's tasks pass to the CLI."""
    return [arg for task in binding.tasks for arg in task.args]


def _check(args: argparse.Namespace) -> int:
    from factory_schedule.tui.host.providers import prompts
    from factory_schedule.tui.host.providers.cli_probe import check_cli

    folder = _prompts_folder(args)
    commission = _commission(schedule_over(open_existing(journal_url_of(args))))
    lanes = [args.lane] if args.lane else [str(entry["lane"]) for entry in commission.get("lanes", [])]
    failed = False
    for lane in lanes:
        try:
            binding = prompts.load_lane(folder, lane, prompts.lane_tasks(commission, lane), stages=_stages(lane))
        except prompts.BindingError as error:
            failed = True
            emit({"lane": lane, "ok": False, "error": str(error)})
            continue
        cli = check_cli(binding.provider, binding.executable, _lane_args(binding), binding.workdir,
                        passed=binding.env)
        if cli.problem is not None:
            failed = True
            emit({"lane": lane, "ok": False, "error": cli.problem, "version": cli.version})
            continue
        answer: dict[str, Any] = {
            "lane": lane, "ok": True, "provider": binding.provider, "executable": binding.executable,
            "version": cli.version, "sign_in": binding.sign_in,
            "tasks": {t.task: {"bound": t.bound, "work": [u.work for u in t.units]} for t in binding.tasks}}
        warnings = [cli.warning] if cli.warning else []
        if binding.executable_from_path:
            warnings.append(f"{binding.provider} was found on your PATH; the LaunchAgent's PATH is only the "
                            f"system's and factory-schedule's folder: set executable = "
                            f"\"{binding.executable}\" in lane.toml")
        if warnings:
            answer["warning"] = "; ".join(warnings)
        emit(answer)
    return EXIT_BAD_INPUT if failed else EXIT_OK


def _stages(lane: str) -> tuple[str, ...] | None:
    from factory_schedule.tui.host.providers import stage_run

    return stage_run.lane_stages(lane)


def _segment_from(args: argparse.Namespace) -> tuple[str, str, str]:
    occurrence = args.occurrence or os.environ.get(ENV_OCCURRENCE)
    runner = args.runner or os.environ.get(ENV_RUNNER)
    lane = args.lane or os.environ.get(ENV_LANE)
    if not (occurrence and runner and lane):
        raise BadInput(f"run me from `factory-schedule tick -- factory-schedule run ...` (it sets {ENV_OCCURRENCE}, "
                       f"{ENV_RUNNER} and {ENV_LANE}), or give --occurrence, --runner and --lane")
    return occurrence, runner, lane


@contextlib.contextmanager
def ended_like_ctrl_c(signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """A SIGTERM (a service manager stopping the job, `kill PID`) or a SIGHUP (its terminal closed) ends the
    runner as a Ctrl-C does, so its provider call is stopped with everything it started; by default either
    would end the runner at once and leave the call's tools at work. Only the main thread may set handlers:
    elsewhere the signals keep their own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args)
    # Imported here: `--help` and every other subcommand start without the providers' modules.
    from factory_schedule.tui.host.providers import prompts
    from factory_schedule.tui.host.providers.leftovers import orphans_adopted
    from factory_schedule.tui.host.providers.work import Segment, SegmentWork

    occurrence, runner, lane = _segment_from(args)
    folder = _prompts_folder(args)
    schedule = schedule_over(open_existing(journal_url_of(args)))
    commission = _commission(schedule)
    segment = Segment(occurrence=occurrence, runner=runner, sign_in="")
    try:
        binding = prompts.load_lane(folder, lane, prompts.lane_tasks(commission, lane), stages=_stages(lane))
    except prompts.BindingError as error:
        emit({"run": "unusable-prompts", "lane": lane, "error": str(error)})
        worker = SegmentWork(schedule, None, segment, emit)
        worker.settle(f"prompt folder unusable: {error}")
        emit({**(segment.ended or {}), "occurrence": occurrence, "runner": runner, "sent": 0})
        return EXIT_BAD_INPUT
    with orphans_adopted(), ended_like_ctrl_c():
        return work_segment(schedule, binding, segment, lane)


def work_segment(schedule: LifecycleSchedule, binding: LaneBinding, segment: Segment, lane: str) -> int:
    """One admitted segment's work, through the lane's CLI: its sign-in asked first, then each unit of work (a
    staged lane's run: one stage of its claimed task); one JSON line when it starts and one when it ends."""
    from factory_schedule.tui.host.providers import session, stage_run
    from factory_schedule.tui.host.providers.work import SegmentWork

    occurrence, runner = segment.occurrence, segment.runner
    status = session.probe(binding.provider, binding.executable, binding.workdir, passed=binding.env)
    segment.sign_in = session.observed_sign_in(status, binding.sign_in)
    worker = SegmentWork(schedule, binding, segment, emit)
    emit({"run": "started", "lane": lane, "occurrence": occurrence, "runner": runner,
          "provider": binding.provider, "sign_in": segment.sign_in,
          "sign_in_from": "cli" if status.sign_in else "lane.toml"})
    run = stage_run.run_of(lane)
    mismatch = None if status.logged_in is False else worker.sign_in_mismatch(
        "its CLI reports it" if status.sign_in else "lane.toml names it")
    if status.logged_in is False:
        if not worker.defer("logged-out"):
            worker.settle(f"{binding.provider} is not signed in")
        code = EXIT_OK
    elif mismatch is not None:  # every call would be refused: nothing is asked for
        worker.settle(mismatch)
        code = EXIT_OK
    elif (held := worker.account_held()) is not None:  # fail closed: the provider stopped the account tonight
        worker.settle(held)
        code = EXIT_OK
    elif run is not None:
        from factory_schedule.core.pipeline import PipelineLanes

        recorded = stage_run.work_one_stage(PipelineLanes(schedule.journal, schedule.clock), worker, binding, run,
                                            emit)
        code = EXIT_OK if recorded else EXIT_UNRECORDED
    else:
        code = EXIT_OK if worker.run() else EXIT_UNRECORDED
    emit({**(segment.ended or {"run": "left-running"}), "occurrence": occurrence, "runner": runner,
          "sent": len(segment.sent)})
    return code


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
    run.set_defaults(handler=_run)
