"""The imperative shell: the Textual dashboard, the command line, the tick, leases and health."""
