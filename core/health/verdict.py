"""Health's verdict: every rule over the facts, each rule that fails reported as not checked, never fatal.

What is reported: a journal aggregate whose hash chain breaks (each one named), or whose state does not
parse; a whole check of the chains older than eight days (the frequent ones start from a checkpoint:
chains.py); a missing commission (an empty journal is never healthy: it is most often a mistyped path); the
leases' and the staged lane runs' findings (leases.py, lane_runs.py); lanes past their slot plus a grace with
nothing admitted (nights.py); account stops and owner records that stop being current (accounts.py); a week
above 90 % of its ceiling (ledger.py); an installed LaunchAgent that differs from what the commission asks
(launch_agent.py); the staged lanes' state that does not read (CORRUPT), their caps, stalls, owner waits and
clocks, and settings older than the commission in force carries (staged_lanes.py); their counts against their
own history (history.py); the runs the tick recorded (runs.py); the owner key (owner.py).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from .accounts import account_findings
from .chains import chain_findings, whole_check_findings
from .facts import HealthFacts
from .history import count_findings
from .launch_agent import launch_agent_findings
from .leases import lease_findings
from .ledger import ledger_findings
from .nights import lane_findings
from .owner import owner_key_findings
from .provider_clis import provider_cli_findings
from .report import Finding, HealthReport
from .runs import run_findings
from .schedule_clock import schedule_clock_ahead_findings
from .staged_lanes import settings_behind_findings, staged_lane_findings


def judge(facts: HealthFacts) -> HealthReport:
    """Every rule over the facts; a rule that raises is reported as not checked, never fatal."""
    findings: list[Finding] = []
    could_not = list(facts.could_not_check)
    findings.extend(chain_findings(facts.chain_problems))
    if facts.whole_check_known:
        findings.extend(whole_check_findings(facts.whole_check_at, facts.now))
    if facts.state_problem is not None:
        code, message = facts.state_problem
        findings.append(Finding("state-unreadable", "error", f"the schedule state does not parse: {message}",
                                {"code": code}))
    elif facts.view is None and not findings and not could_not:
        findings.append(Finding("not-commissioned", "warning",
                                "no commission is recorded in this journal: is it the right one? (record the "
                                "first commission with `factory-schedule record-commission FILE`)"))
    view = facts.view

    def attempt(what: str, rule: Callable[[], list[Finding]]) -> None:
        try:
            findings.extend(rule())
        except Exception as error:  # one defect must never hide the other rules' findings
            could_not.append(f"{what}: {type(error).__name__}: {error}")

    attempt("leases", lambda: lease_findings(facts.leases, view, facts.now, facts.host, facts.pipeline))
    if facts.pipeline_problem is not None:
        code, message = facts.pipeline_problem
        findings.append(Finding("pipeline-unreadable", "error",
                                f"the staged lanes' state does not read: {message}", {"code": code, "detail": message}))
    elif facts.pipeline is not None:
        pipeline = facts.pipeline
        stall_after = facts.stall_after or timedelta(hours=pipeline.settings.stall_hours)
        locked = frozenset(lease.owner for lease in facts.leases if lease.lane_lock)
        attempt("staged lanes", lambda: staged_lane_findings(pipeline, facts.now, stall_after, locked))
    if facts.pipeline_history is not None:
        history = facts.pipeline_history
        attempt("staged lanes' counts", lambda: count_findings(history))
    if view is not None and facts.owner_key_read:
        attempt("owner key", lambda: owner_key_findings(facts.owner_key, facts.owner_key_here,
                                                        facts.owner_keys_recorded))
    if view is not None:
        attempt("lanes", lambda: lane_findings(view, facts.night_states, facts.now, facts.grace))
        attempt("accounts", lambda: account_findings(view, facts.now))
        attempt("provider CLIs", lambda: provider_cli_findings(view))
        attempt("runs", lambda: run_findings(view, facts.runs, facts.now))
        attempt("ledger", lambda: ledger_findings(view, facts.now))
        attempt("schedule's clock", lambda: schedule_clock_ahead_findings(view, facts.now))
        if facts.pipeline_problem is None:  # unreadable lanes are their own finding: their settings are unknown
            attempt("staged lanes' settings", lambda: settings_behind_findings(view.parsed_commission(),
                                                                                facts.pipeline, facts.now))
        if facts.launch_agent is not None:
            agent = facts.launch_agent
            attempt("launch agent", lambda: launch_agent_findings(view, agent, facts.host_zone))
    return HealthReport(checked_at=facts.now, host=facts.host, findings=tuple(findings),
                        could_not_check=tuple(could_not))
