"""Host operations: the clock, the journal's default path, the tick's segment runner, health's probes and
repairs, and the demo's simulation. Everything here touches the machine; the rules live in core."""
