"""What `launchd install` does: render (and, if asked, write) the LaunchAgent that fires the tick."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from typing import Any

from factory_schedule.core import launch_intervals, render_launch_agent_plist
from factory_schedule.tui.cli.journal import journal_url_of
from factory_schedule.tui.cli.launchd import read_commission_file
from factory_schedule.tui.cli.output import EXIT_OK, BadInput, emit, printable, shell_command
from factory_schedule.tui.cli.parsers.launchd_install import DEFAULT_LABEL
from factory_schedule.tui.host.clock import host_zone

LAUNCHD_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


def factory_schedule_executable() -> str:
    """The absolute path of this program, as launchd must be given it."""
    found = shutil.which("factory-schedule")
    if found:
        return os.path.abspath(found)
    candidate = os.path.abspath(sys.argv[0])
    if os.path.basename(candidate) == "factory-schedule":
        return candidate
    return os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "factory-schedule")


def tick_program_arguments(executable: str, runner_command: list[str], ttl: float | None) -> list[str]:
    """The tick's command line. The journal is not on it: the agent's FACTORY_JOURNAL names it, and a
    URL's password on a command line is visible to every local user (`ps`)."""
    arguments = [executable, "tick", "--detach"]
    if ttl is not None:
        arguments += ["--ttl", f"{ttl:g}"]
    return [*arguments, "--", *runner_command]


def launch_agent_spec(
    commission: dict[str, Any],
    zone: str,
    program_arguments: list[str],
    label: str = DEFAULT_LABEL,
    log_dir: str | None = None,
    journal_url: str | None = None,
) -> dict[str, Any]:
    """The arguments `render_launch_agent_plist` takes: intervals from the commission, the tick as the program."""
    program_dir = os.path.dirname(program_arguments[0])
    environment = {"PATH": f"{program_dir}:{LAUNCHD_PATH}" if program_dir else LAUNCHD_PATH}
    if journal_url:
        environment["FACTORY_JOURNAL"] = journal_url
    spec: dict[str, Any] = {
        "label": label,
        "program_arguments": program_arguments,
        "start_calendar_interval": launch_intervals(commission, zone),
        "environment_variables": environment,
    }
    if log_dir:
        spec["standard_out_path"] = os.path.join(os.path.abspath(log_dir), "tick.out.log")
        spec["standard_error_path"] = os.path.join(os.path.abspath(log_dir), "tick.err.log")
    return spec


def install_launch_agent(args: argparse.Namespace) -> int:
    if not args.print and not args.output:
        raise BadInput("say where the plist goes: --print, --output PATH, or both")
    commission = read_commission_file(args.commission)
    runner = list(args.runner_command or [])
    if runner and runner[0] == "--":
        runner = runner[1:]
    url = journal_url_of(args)
    if args.tick_command:
        try:
            program = shlex.split(args.tick_command)
        except ValueError as error:
            raise BadInput(f"--tick-command: {error}") from None
        if runner:
            raise BadInput("give either --tick-command or a runner command after `--`, not both")
    elif runner:
        if not os.path.isabs(runner[0]):
            raise BadInput(f"the runner must be an absolute path (launchd resolves no relative one), got "
                           f"{runner[0]!r}")
        program = tick_program_arguments(factory_schedule_executable(), runner, args.ttl)
    else:
        raise BadInput("name the runner the tick fires, after `--` (or the whole --tick-command)")
    if not program or not os.path.isabs(program[0]):
        raise BadInput(f"the program must be an absolute path, got {program[0] if program else None!r}")
    zone = args.host_zone or host_zone()
    if not zone:
        raise BadInput("cannot tell this Mac's zone; pass --host-zone")
    spec = launch_agent_spec(commission, zone, program, args.label, args.log_dir, url)
    text = render_launch_agent_plist(spec)
    if args.output:
        try:  # owner-only: FACTORY_JOURNAL may carry a PostgreSQL password
            with os.fdopen(os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                           encoding="utf-8") as handle:
                os.fchmod(handle.fileno(), 0o600)  # a file that was already there keeps no wider mode
                handle.write(text)
        except OSError as error:
            raise BadInput(f"cannot write {args.output}: {error.strerror}") from None
        print(f"wrote {printable(args.output)}; load it with: launchctl bootstrap gui/$(id -u) "
              f"{shell_command(args.output)}", file=sys.stderr)
    if args.print:
        sys.stdout.write(text)
    elif not args.output:
        emit({"plist": text})
    return EXIT_OK
