"""The pipeline's settings: the owner's numbers for the promotion and maturation lanes.

They travel in the commission (its optional `pipeline` member), so only the owner's next
commission revision changes them; the engine never does. A commission without them stays
valid, and then the lanes are not configured (NOT_CONFIGURED).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator
from pydantic.alias_generators import to_camel

RUN_PATTERN = r"^[a-z0-9][a-z0-9._/-]{0,63}$"
RESOURCE_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"

Run = Annotated[StrictStr, Field(pattern=RUN_PATTERN, description="the identity of a scheduled run")]
Resource = Annotated[
    StrictStr, Field(pattern=RESOURCE_PATTERN, description="an exclusive resource (a browser profile)")
]
Resources = Annotated[tuple[Resource, ...], Field(max_length=4, description="exclusive resources a lane's runs hold")]


class PipelineSettings(BaseModel):
    """Threshold, WIP, caps, cooldown and the scheduler and reviewer runs of each staged lane."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel)

    threshold: Annotated[
        StrictInt, Field(ge=1, le=20, description="eligible Top-N candidates needed before promotion activates")
    ] = 3
    top_n: Annotated[StrictInt, Field(ge=1, le=20, description="at most this many candidates in one Top-N")] = 10
    promotion_wip: Annotated[StrictInt, Field(ge=1, le=4, description="candidates promotion works at once")] = 1
    maturation_wip: Annotated[StrictInt, Field(ge=1, le=4, description="Products maturation works at once")] = 1
    max_revisions: Annotated[
        StrictInt, Field(ge=1, le=10, description="review rejects (revise/re-review rounds) before owner escalation")
    ] = 2
    max_retries: Annotated[
        StrictInt, Field(ge=1, le=10, description="failed builds or abandoned claims of one work before escalation")
    ] = 2
    max_slices: Annotated[StrictInt, Field(ge=1, le=20, description="implementation slices of one maturation")] = 6
    cooldown_hours: Annotated[
        StrictInt, Field(ge=0, le=720, description="hours after a promotion ends before the next selection")
    ] = 24
    stall_hours: Annotated[
        StrictInt, Field(ge=1, le=720, description="hours a lane may wait with claimable work and nothing claimed "
                                                    "before health reports it stalled and tells the owner")
    ] = 24
    promotion_scheduler: Run = "promotion"
    promotion_reviewer: Run = "promotion-reviewer"
    maturation_scheduler: Run = "maturation"
    maturation_reviewer: Run = "maturation-reviewer"
    promotion_resources: Resources = ()
    maturation_resources: Resources = ()

    @model_validator(mode="after")
    def _distinct_runs(self) -> PipelineSettings:
        runs = [self.promotion_scheduler, self.promotion_reviewer, self.maturation_scheduler, self.maturation_reviewer]
        if len(set(runs)) != len(runs):
            raise ValueError("the four scheduler and reviewer runs must be distinct (a reviewer is never a scheduler)")
        return self

    def wip(self, lane: str) -> int:
        return self.promotion_wip if lane == "promotion" else self.maturation_wip

    def scheduler(self, lane: str) -> str:
        return self.promotion_scheduler if lane == "promotion" else self.maturation_scheduler

    def reviewer(self, lane: str) -> str:
        return self.promotion_reviewer if lane == "promotion" else self.maturation_reviewer

    def resources(self, lane: str) -> tuple[str, ...]:
        """Resources a lane's runs lock beyond its worker singleton (the shell takes them as leases)."""
        return self.promotion_resources if lane == "promotion" else self.maturation_resources
