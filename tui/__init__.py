"""The imperative shell: `dashboard` (Textual), `cli` (the `factory-schedule` command line) and `host`
(the clock, processes, leases in use, launchd and the demo's simulation)."""
