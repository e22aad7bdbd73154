"""Benchmarks of the Claude Code hooks run through Claude Code itself (tool_time.py; scenarios.py its data)."""
