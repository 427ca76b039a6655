"""Each stage's artifact contract: what a completed task must report, parsed strictly.

A report is a JSON object; every stage needs the artifact's reference and its SHA-256, and
each adds its own verdict fields and success metrics. A report that breaks its stage's
contract is refused CONTRACT naming the field, and nothing is written.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from factory_schedule.store import canonical_json

from ..commission import describe_validation_error
from .errors import PipelineError
from .model import ExternalAction, Ref, Sha256

Text = Annotated[StrictStr, Field(min_length=1, max_length=500)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=100)]


class _Report(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel,
                              strict=True)

    artifact: Ref
    sha256: Sha256
    summary: Text | None = None
    external_actions: Annotated[tuple[ExternalAction, ...], Field(max_length=4)] = ()


class SelectReport(_Report):
    """The portfolio-level selection: why this candidate, from which Top-N evidence."""

    evidence: Annotated[tuple[Ref, ...], Field(min_length=1, max_length=16)]


class EvidenceReport(_Report):
    evidence: Annotated[tuple[Ref, ...], Field(min_length=1, max_length=16)]


class BriefReport(_Report):
    """The graybox brief and its gate: the exit criteria and the verifier frozen from here on."""

    criteria_sha256: Sha256
    verifier: Annotated[StrictStr, Field(min_length=1, max_length=200)]


class PrototypeReport(_Report):
    build: Literal["success", "failure"]


class MetricResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, strict=True)

    name: Name
    met: StrictBool
    measured: Annotated[StrictStr, Field(min_length=1, max_length=200)]


class _VerifyReport(_Report):
    metrics: Annotated[tuple[MetricResult, ...], Field(min_length=1, max_length=16)]
    passed: StrictBool

    @model_validator(mode="after")
    def _passed_is_every_metric(self) -> _VerifyReport:
        if self.passed != all(metric.met for metric in self.metrics):
            raise ValueError("passed must be true exactly when every metric is met")
        names = [metric.name for metric in self.metrics]
        if len(set(names)) != len(names):
            raise ValueError("metrics: a metric is named twice")
        return self


class PromotionVerifyReport(_VerifyReport):
    """The frozen exit verifier's run: which verifier, against which criteria, and its metrics."""

    verifier: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    criteria_sha256: Sha256


class MaturationVerifyReport(_VerifyReport):
    """A slice's verification: which slice, and its success metrics measured."""

    slice: Annotated[int, Field(ge=1, le=20, strict=True)]


class ReviewReport(_Report):
    """The promotion reviewer's blocking review of the brief against the frozen criteria."""

    verdict: Literal["pass", "reject"]
    criteria_sha256: Sha256
    findings: Annotated[tuple[Text, ...], Field(max_length=16)] = ()


class DecideReport(_Report):
    """GO / PIVOT / PARK, citing the frozen exit verifier's artifact and the criteria it ran against."""

    verdict: Literal["GO", "PIVOT", "PARK"]
    criteria_sha256: Sha256
    verifier_artifact_sha256: Sha256


class IntakeReport(_Report):
    decision: Annotated[int, Field(ge=1, strict=True)]


class BoundaryReport(_Report):
    """The MVP boundary, frozen before the first slice, with the success metrics every slice answers to."""

    boundary_sha256: Sha256
    success_metrics: Annotated[tuple[Name, ...], Field(min_length=1, max_length=16)]


class SliceMetric(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, strict=True)

    name: Name
    target: Annotated[StrictStr, Field(min_length=1, max_length=200)]


class SliceReport(_Report):
    """One implementation slice (or its revision): explicit success metrics and how they are verified."""

    slice: Annotated[int, Field(ge=1, le=20, strict=True)]
    success_metrics: Annotated[tuple[SliceMetric, ...], Field(min_length=1, max_length=16)]
    verification: Text


class MaturationReviewReport(_Report):
    decision: Literal["complete", "continue", "revise", "pivot", "park"]
    boundary_sha256: Sha256
    slice: Annotated[int, Field(ge=1, le=20, strict=True)]
    findings: Annotated[tuple[Text, ...], Field(max_length=16)] = ()


class ReleaseReport(_Report):
    """Private release-readiness: not a public release, which stays behind security-approve."""

    ready: StrictBool
    boundary_sha256: Sha256
    checklist: Annotated[tuple[Ref, ...], Field(min_length=1, max_length=16)]


CONTRACTS: dict[tuple[str, str], type[_Report]] = {
    ("promotion", "select"): SelectReport,
    ("promotion", "evidence"): EvidenceReport,
    ("promotion", "brief"): BriefReport,
    ("promotion", "review"): ReviewReport,
    ("promotion", "prototype"): PrototypeReport,
    ("promotion", "verify"): PromotionVerifyReport,
    ("promotion", "decide"): DecideReport,
    ("maturation", "intake"): IntakeReport,
    ("maturation", "boundary"): BoundaryReport,
    ("maturation", "slice"): SliceReport,
    ("maturation", "iterate"): SliceReport,
    ("maturation", "verify"): MaturationVerifyReport,
    ("maturation", "review"): MaturationReviewReport,
    ("maturation", "release"): ReleaseReport,
}


def parse_report(lane: str, stage: str, report: Any) -> Any:
    """The stage's report, or CONTRACT naming what breaks its artifact contract."""
    contract = CONTRACTS.get((lane, stage))
    if contract is None:
        raise PipelineError("CONTRACT", f"{lane} has no runner report at stage {stage}")
    if not isinstance(report, dict):
        raise PipelineError("CONTRACT", f"report: a JSON object is needed for {lane}/{stage}")
    try:
        return contract.model_validate_json(canonical_json(report))
    except ValidationError as error:
        raise PipelineError("CONTRACT", f"{lane}/{stage} report: {describe_validation_error(error)}") from None


def contract_fields(lane: str, stage: str) -> list[str]:
    """The fields a stage's report must carry (the required ones), for the lane's state view and a run's prompt:
    read from the same model `parse_report` enforces, so a report of exactly these fields meets the contract."""
    contract = CONTRACTS.get((lane, stage))
    if contract is None:
        return []
    return [field.alias or name for name, field in contract.model_fields.items() if field.is_required()]
