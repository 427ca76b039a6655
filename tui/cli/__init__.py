"""The `factory-schedule` command line: one module per subcommand, assembled in `main`."""
