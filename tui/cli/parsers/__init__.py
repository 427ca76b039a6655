"""The command line's parsers, one module per group of subcommands: each registers its subcommands and names
each one's handler as `module:function`, imported only when that command runs (tui/cli/main.py)."""
