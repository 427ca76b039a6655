"""The environment a tick hands its runner: which segment it works, under which token and lease.

Kept apart from the segment runner so that a command line that only names these variables (in its
help) loads no journal library.
"""

from __future__ import annotations

ENV_OCCURRENCE = "FACTORY_OCCURRENCE"
ENV_RUNNER = "FACTORY_RUNNER"
ENV_SEGMENT = "FACTORY_SEGMENT"
ENV_LANE = "FACTORY_LANE"
ENV_LEASE_SCOPE = "FACTORY_LEASE_SCOPE"
ENV_LEASE_TTL = "FACTORY_LEASE_TTL"

# The TTL in seconds of a segment's lease or a staged run's lane locks when its command names none: heartbeats
# every TTL/3 keep it fresh, and it goes stale after 2 x TTL.
DEFAULT_LEASE_TTL_SECONDS = 60.0

# The owner's prompt folder, where `run`, `check` and `health --prompts` look when no flag names it.
ENV_PROMPTS = "FACTORY_PROMPTS"
