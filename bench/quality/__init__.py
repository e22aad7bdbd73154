"""What recall finds: the dev sets, MADial and the probes behind each ranking decision (bench/RESULTS.md)."""
