"""The installed LaunchAgent: its intervals against the commission's, what it runs, and whether it is loaded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.launchd import launch_intervals
from factory_schedule.core.results import ScheduleView

from .facts import LaunchAgentFact
from .report import Finding


def _interval_key(interval: Mapping[str, Any]) -> tuple[Any, ...]:
    return (interval.get("Weekday"), interval.get("Hour"), interval.get("Minute"))


def launch_agent_findings(view: ScheduleView, agent: LaunchAgentFact, host_zone: str | None) -> list[Finding]:
    if agent.intervals is None:
        return [Finding("launch-agent-unreadable", "error", f"cannot read {agent.path}: {agent.problem}",
                        {"plist": agent.path})]
    commission = view.commission
    try:
        expected = launch_intervals(commission, host_zone or commission.get("zone", ""))
    except ScheduleError as error:
        return [Finding("launch-agent-zone", "error",
                        f"the commission's intervals cannot be placed in this Mac's zone {host_zone}: "
                        f"{error.message}", {"host_zone": host_zone, "commission_zone": commission.get("zone")})]
    have = [dict(interval) for interval in agent.intervals]
    want = [dict(interval) for interval in expected]
    findings = []
    if sorted(map(_interval_key, have), key=repr) != sorted(map(_interval_key, want), key=repr):
        findings.append(Finding("launch-agent-drift", "error",
                                f"{agent.path} fires at other times than the commission asks: reinstall it with "
                                "`factory-schedule launchd install`",
                                {"plist": agent.path, "installed": have, "expected": want}))
    findings.extend(launch_agent_program_findings(agent))
    findings.extend(launch_agent_loaded_findings(agent))
    return findings


REINSTALL = "reinstall it with `factory-schedule launchd install`"


def launch_agent_program_findings(agent: LaunchAgentFact) -> list[Finding]:
    """What `launchd install` writes: `<factory-schedule> tick --detach [--ttl S] -- RUNNER...`, every program
    an absolute path this host can run, and the journal in EnvironmentVariables as FACTORY_JOURNAL (the
    journal health checks), never `--journal` on the command line."""
    if agent.program_arguments is None:
        return []
    arguments = list(agent.program_arguments)
    evidence: dict[str, Any] = {"plist": agent.path, "program_arguments": arguments}
    findings = []
    tick_at = arguments.index("tick") if "tick" in arguments else None
    dashes = arguments.index("--") if "--" in arguments else None
    if tick_at is None:
        findings.append(Finding("launch-agent-not-tick", "error",
                                f"{agent.path} does not run `factory-schedule tick`: {REINSTALL}", evidence))
    else:
        tick_options = arguments[tick_at + 1 : dashes]
        if "--detach" not in tick_options:
            findings.append(Finding(
                "launch-agent-no-detach", "error",
                f"{agent.path} runs the tick without --detach: launchd would wait for every runner and swallow "
                f"the next lanes' times; {REINSTALL}", evidence))
        if dashes is None or dashes == len(arguments) - 1:
            findings.append(Finding("launch-agent-no-runner", "error",
                                    f"{agent.path} names no runner after `--`: {REINSTALL}", evidence))
        if any(a == "--journal" or a.startswith("--journal=") for a in arguments[: dashes]):
            findings.append(Finding(
                "launch-agent-journal-on-command-line", "warning",
                f"{agent.path} names its journal on the command line, where `ps` shows a password: {REINSTALL}",
                evidence))
    if agent.missing_programs:
        findings.append(Finding(
            "launch-agent-program-missing", "error",
            f"{agent.path} runs {', '.join(agent.missing_programs)}, which this host cannot run: {REINSTALL}",
            {**evidence, "missing": list(agent.missing_programs)}))
    journal = {"plist": agent.path, "installed": agent.journal_shown, "expected": agent.journal_expected}
    if agent.same_journal is None:
        findings.append(Finding(
            "launch-agent-no-journal", "error",
            f"{agent.path} sets no FACTORY_JOURNAL: its ticks would use the default journal file, not "
            f"{agent.journal_expected}; {REINSTALL}", journal))
    elif not agent.same_journal:
        findings.append(Finding(
            "launch-agent-journal-drift", "error",
            f"{agent.path} runs the ticks against {agent.journal_shown}, not this journal "
            f"({agent.journal_expected}): {REINSTALL}", journal))
    return findings


def launch_agent_loaded_findings(agent: LaunchAgentFact) -> list[Finding]:
    evidence = {"plist": agent.path, "label": agent.label}
    if agent.loaded is None and agent.loaded_problem is None:
        return []  # not probed
    if agent.loaded is None:
        reason = agent.loaded_problem or "not checked"
        return [Finding("launch-agent-loaded-unchecked", "info",
                        f"whether {agent.label} is loaded cannot be checked here: {reason}",
                        {**evidence, "reason": reason})]
    if agent.loaded:
        return []
    return [Finding("launch-agent-not-loaded", "error",
                    f"{agent.label} is installed at {agent.path} but launchd has not loaded it: nothing fires; "
                    f"load it with `launchctl bootstrap gui/$(id -u) {agent.path}`", evidence)]


