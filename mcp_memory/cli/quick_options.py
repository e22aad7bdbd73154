"""The options of `stats`, `list`, `forget`, `recall` and `remember`, as cli/app.py declares them to Typer: written by
`python -m mcp_memory.cli.quick_table` (do not edit; tests/cli/test_quick_options.py fails while
it is stale). cli/quick.py reads their plain command lines with it, without importing Typer.

Per command: `valued` (each spelling of an option that takes a value -> the callback's parameter),
`flags` (the same for a flag), `arguments` (the positional parameters, in order), `multiple`
(options that may repeat), `integers` (options Typer reads as an int), `choices` (an option's
allowed values) and `defaults` (every parameter's default).
"""

from typing import Any

COMMANDS: dict[str, dict[str, Any]] = {
    "stats": {
        "valued": {"--tenant": "tenant", "-t": "tenant", "--conversation": "conversation", "-c": "conversation"},
        "flags": {"--all-tenants": "all_tenants", "--json": "as_json"},
        "arguments": [],
        "multiple": [],
        "integers": [],
        "choices": {},
        "defaults": {"tenant": None, "conversation": None, "all_tenants": False, "as_json": False},
    },
    "list": {
        "valued": {
            "--type": "memory_type",
            "--limit": "limit",
            "--cursor": "cursor",
            "--tag": "tag",
            "--since": "since",
            "--until": "until",
            "--tenant": "tenant",
            "-t": "tenant",
            "--conversation": "conversation",
            "-c": "conversation",
        },
        "flags": {"--all": "every", "--json": "as_json"},
        "arguments": [],
        "multiple": ["tag"],
        "integers": ["limit"],
        "choices": {"memory_type": ["project", "pattern", "reference", "conversation"]},
        "defaults": {
            "memory_type": None,
            "limit": 20,
            "cursor": None,
            "every": False,
            "tag": None,
            "since": None,
            "until": None,
            "tenant": None,
            "conversation": None,
            "as_json": False,
        },
    },
    "forget": {
        "valued": {"--tenant": "tenant", "-t": "tenant", "--conversation": "conversation", "-c": "conversation"},
        "flags": {"--json": "as_json"},
        "arguments": ["memory_id"],
        "multiple": [],
        "integers": [],
        "choices": {},
        "defaults": {"memory_id": None, "tenant": None, "conversation": None, "as_json": False},
    },
    "recall": {
        "valued": {
            "--limit": "limit",
            "--mode": "mode",
            "--type": "memory_type",
            "--tag": "tag",
            "--since": "since",
            "--until": "until",
            "--tenant": "tenant",
            "-t": "tenant",
            "--conversation": "conversation",
            "-c": "conversation",
        },
        "flags": {"--json": "as_json"},
        "arguments": ["query"],
        "multiple": ["tag"],
        "integers": ["limit"],
        "choices": {
            "mode": ["precision", "balanced", "exploratory"],
            "memory_type": ["project", "pattern", "reference", "conversation"],
        },
        "defaults": {
            "query": None,
            "limit": None,
            "mode": None,
            "memory_type": None,
            "tag": None,
            "since": None,
            "until": None,
            "tenant": None,
            "conversation": None,
            "as_json": False,
        },
    },
    "remember": {
        "valued": {
            "--type": "memory_type",
            "--category": "category",
            "--tag": "tag",
            "--scope": "scope",
            "--replaces": "replaces",
            "--tenant": "tenant",
            "-t": "tenant",
            "--conversation": "conversation",
            "-c": "conversation",
        },
        "flags": {"--json": "as_json"},
        "arguments": ["content"],
        "multiple": ["tag", "replaces"],
        "integers": [],
        "choices": {
            "memory_type": ["project", "pattern", "reference", "conversation"],
            "scope": ["project", "conversation"],
        },
        "defaults": {
            "content": None,
            "memory_type": None,
            "category": None,
            "tag": None,
            "scope": None,
            "replaces": None,
            "tenant": None,
            "conversation": None,
            "as_json": False,
        },
    },
}
