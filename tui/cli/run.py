"""What `run` does: work one admitted segment of a lane through its provider's CLI, or check the prompt folder."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.tui.cli import output
from factory_schedule.tui.cli.journal import journal_url_of, open_existing, schedule_over
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, EXIT_OK, EXIT_UNRECORDED, BadInput
from factory_schedule.tui.host.environment import ENV_LANE, ENV_OCCURRENCE, ENV_PROMPTS, ENV_RUNNER
from factory_schedule.tui.host.providers import prompts, session, stage_run
from factory_schedule.tui.host.providers.cli_probe import check_cli
from factory_schedule.tui.host.providers.leftovers import orphans_adopted
from factory_schedule.tui.host.providers.work import Segment, SegmentWork

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule
    from factory_schedule.tui.host.providers.prompts import LaneBinding
    from factory_schedule.tui.host.providers.work import Segment


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


def _lane_args(binding: LaneBinding) -> list[str]:
    """Every argument the lane's tasks pass to the CLI."""
    return [arg for task in binding.tasks for arg in task.args]


def _check(args: argparse.Namespace) -> int:
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


def run_segment_command(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args)
    # Imported here: `--help` and every other subcommand start without the providers' modules.
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
        lanes = PipelineLanes(schedule.journal, schedule.clock, schedule=schedule)  # its claim reads what this read
        recorded = stage_run.work_one_stage(lanes, worker, binding, run, emit)
        code = EXIT_OK if recorded else EXIT_UNRECORDED
    else:
        code = EXIT_OK if worker.run() else EXIT_UNRECORDED
    emit({**(segment.ended or {"run": "left-running"}), "occurrence": occurrence, "runner": runner,
          "sent": len(segment.sent)})
    return code
