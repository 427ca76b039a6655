"""The imperative shell: `dashboard` (Textual), `cli` (the `factory-schedule` command line, launchd's
agent included) and `host` (the clock, the journal's default path, the tick's processes and leases,
health's probes and the demo's simulation)."""
