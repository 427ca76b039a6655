"""Health's rules: a verdict over facts, with no process, file or clock of its own.

The shell gathers the facts (the journal's chain check, the schedule view, each lease with whether its
process lives on this host, the nights' states, the installed LaunchAgent, the host's zone, the runs the
tick recorded) into `HealthFacts`; `judge` turns them into findings and `plan_repairs` into the repairs the
evidence licenses. One module per rule family; this package exports what the shell uses.
"""

from .accounts import account_findings
from .chains import WHOLE_CHECK_DAYS, chain_findings, whole_check_findings
from .evidence import lease_evidence, reconcile_confirmation
from .facts import DEFAULT_GRACE_MINUTES, HealthFacts, LaunchAgentFact, LeaseFact
from .history import HistoryCounts, PipelineHistory, count_findings
from .lane_runs import DeadLaneRun, dead_lane_runs, hung_lane_runs
from .launch_agent import launch_agent_findings
from .leases import HUNG_PAST_DEADLINE, health_manages, hung_segment_findings, lease_findings
from .ledger import ledger_findings
from .nights import FiringRecord, Night, firing_records, lane_findings, nights_to_check
from .owner import ProviderReach, owner_key_findings, provider_write_findings
from .records import (
    BINDING_BLOCKED,
    BINDING_RECORDED,
    FIRING_RECORDED,
    HEALTH_AGGREGATE,
    KEPT_RUNS,
    LEASE_REMOVED,
    RUN_RECORDED,
    RUNS_AGGREGATE,
    counted_record,
    kept_run,
)
from .repairs import PlannedRepair, RepairAction, plan_repairs
from .report import COULD_NOT_CHECK, FINDINGS, HEALTHY, Finding, HealthReport, Repair, Severity
from .runs import RunFact, RunOutcome, classify_line, output_signal, run_findings, run_outcome
from .staged_lanes import staged_lane_findings
from .verdict import judge

__all__ = [
    "BINDING_BLOCKED",
    "BINDING_RECORDED",
    "COULD_NOT_CHECK",
    "DEFAULT_GRACE_MINUTES",
    "FINDINGS",
    "FIRING_RECORDED",
    "HEALTHY",
    "HEALTH_AGGREGATE",
    "HUNG_PAST_DEADLINE",
    "KEPT_RUNS",
    "LEASE_REMOVED",
    "RUNS_AGGREGATE",
    "RUN_RECORDED",
    "WHOLE_CHECK_DAYS",
    "DeadLaneRun",
    "Finding",
    "FiringRecord",
    "HealthFacts",
    "HealthReport",
    "HistoryCounts",
    "LaunchAgentFact",
    "LeaseFact",
    "Night",
    "PipelineHistory",
    "PlannedRepair",
    "ProviderReach",
    "Repair",
    "RepairAction",
    "RunFact",
    "RunOutcome",
    "Severity",
    "account_findings",
    "chain_findings",
    "classify_line",
    "count_findings",
    "counted_record",
    "dead_lane_runs",
    "firing_records",
    "health_manages",
    "hung_lane_runs",
    "hung_segment_findings",
    "judge",
    "kept_run",
    "lane_findings",
    "launch_agent_findings",
    "lease_evidence",
    "lease_findings",
    "ledger_findings",
    "nights_to_check",
    "output_signal",
    "owner_key_findings",
    "plan_repairs",
    "provider_write_findings",
    "reconcile_confirmation",
    "run_findings",
    "run_outcome",
    "staged_lane_findings",
    "whole_check_findings",
]
