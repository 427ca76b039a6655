"""The staged lanes beyond discovery: portfolio promotion and product maturation.

Pure rules over the same journal as the schedule, in their own aggregate (`pipeline/lanes`) and
under their own command-ID prefix (`pipeline/`): candidates from a week's Top-N, two
deterministic state machines with stage artifact contracts, independent review, the frozen exit
verifier, the MVP boundary, caps, cooldown, owner escalation and the security-approve boundary.
"""

from ..pipeline_settings import PipelineSettings
from .codec import parse_pipeline
from .contracts import CONTRACTS, contract_fields, parse_report
from .errors import PIPELINE_ERROR_CODES, PipelineError
from .model import (
    EXTERNAL_ACTIONS,
    LANES,
    PIPELINE_AGGREGATE,
    PIPELINE_PROTOCOL,
    REVIEW_STAGES,
    STAGES,
    PipelineState,
)
from .rules import ALLOWED_TRANSITIONS, eligible
from .service import ApprovalUse, ClaimIdle, LaneView, PipelineLanes, PipelineResult, text

__all__ = [
    "ALLOWED_TRANSITIONS",
    "CONTRACTS",
    "EXTERNAL_ACTIONS",
    "LANES",
    "PIPELINE_AGGREGATE",
    "PIPELINE_ERROR_CODES",
    "PIPELINE_PROTOCOL",
    "REVIEW_STAGES",
    "STAGES",
    "ApprovalUse",
    "ClaimIdle",
    "LaneView",
    "PipelineError",
    "PipelineLanes",
    "PipelineResult",
    "PipelineSettings",
    "PipelineState",
    "contract_fields",
    "eligible",
    "parse_pipeline",
    "parse_report",
    "text",
]
