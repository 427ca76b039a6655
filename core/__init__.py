"""The lifecycle schedule: pure rules over an injected journal and clock."""

SCHEDULE_AGGREGATE = "discovery/schedule"
