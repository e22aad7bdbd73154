"""The README and the docs/ pages it leads to keep up with the code: every command is in the
README's table, every example command line (README and docs/) uses commands and options that
exist, and the tables the README moved into docs/ (configuration, logs, durability) are held
to the code where they now live."""

from __future__ import annotations

import re
import shlex

import typer.main

from mcp_memory.cli.app import app
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {page.name: page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").glob("*.md"))}
GROUP = typer.main.get_command(app)


def options_of(command) -> set[str]:
    return {name for p in command.params for name in (*p.opts, *p.secondary_opts) if name.startswith("-")} | {
        "-h",
        "--help",
    }


def example_lines() -> list[str]:
    blocks = [
        block
        for text in (README, *DOCS.values())
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.DOTALL)
    ]
    lines = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():  # join continued lines
            line = line.strip()
            if line and not line.startswith(("#", "docker ")):
                lines.append(line)
    return lines


def invocations() -> list[list[str]]:
    """The arguments of each example that runs `mcp-memory` (also after a pipe or `&&`, and
    after variable assignments)."""
    found = []
    for line in example_lines():
        for segment in re.split(r"\s(?:\||&&|;)\s", line):
            words = shlex.split(segment, comments=True)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]
            if words and (words[0] == "mcp-memory" or words[0].endswith("/mcp-memory")):
                found.append(words[1:])
    return found


def test_every_command_is_in_the_readme_command_table() -> None:
    table = re.findall(r"^\| `([a-z-]+)[^`]*` \|", README, flags=re.MULTILINE)
    missing = sorted(set(GROUP.commands) - set(table))
    assert not missing, f"commands missing from the README's command table: {missing}"


def test_every_example_uses_a_command_and_options_that_exist() -> None:
    seen = set()
    for words in invocations():
        if words[:1] == ["--version"]:
            continue
        assert words and words[0] in GROUP.commands, (
            f"README example runs an unknown command: mcp-memory {' '.join(words)}"
        )
        command = GROUP.commands[words[0]]
        seen.add(words[0])
        for word in words[1:]:
            if word.startswith("-") and word != "-":  # a lone - is stdin
                assert word.split("=")[0] in options_of(command), f"README example: {words[0]} has no option {word}"
    assert {"calibrate", "compact", "stats", "recall", "remember", "serve-stdio"} <= seen


def test_the_cli_page_says_how_to_install_every_completion_script() -> None:
    # from the installed command, so a pip or uvx user has them without a checkout
    cli = DOCS["cli.md"]
    assert "mcp-memory completion bash > ~/.local/share/bash-completion/completions/mcp-memory" in cli
    assert "mcp-memory completion zsh > ~/.zfunc/_mcp-memory" in cli
    assert "mcp-memory completion fish > ~/.config/fish/completions/mcp-memory.fish" in cli
    # the second console script: bash-completion and fish load a file by the command's name
    assert "ln -sf mcp-memory ~/.local/share/bash-completion/completions/mcp-tenant-memory" in cli
    assert "ln -sf mcp-memory.fish ~/.config/fish/completions/mcp-tenant-memory.fish" in cli
    # and a developer regenerates them
    assert "python -m mcp_memory.cli.completions" in DOCS["development.md"]


def section(text: str, heading: str) -> str:
    """The text under `heading` (a whole heading line, `# Title` or `## Part`) up to the next
    heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    body = text.split(f"{heading}\n", 1)[1]
    return re.split(rf"\n#{{1,{len(level)}}} ", body, maxsplit=1)[0]


def table_rows(text: str) -> dict[str, list[str]]:
    """The table rows of `text`: the first cell → the other cells, backticks kept."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[0]] = cells[1:]
    return rows


def code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]*)`", cell)


def test_the_configuration_tables_defaults_are_the_ones_the_code_applies(tmp_path) -> None:
    """Each default the Configuration table states is what Settings gives when nothing is set,
    read from the code rather than copied, so a changed default fails here until
    docs/configuration.md says it too."""
    from mcp_memory.config import Settings

    xdg = tmp_path / "xdg"
    settings = Settings.from_env({"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(xdg), "HOSTNAME": "pod-1"})
    oauth = Settings.from_env(
        {
            "MCP_OAUTH_ISSUER": "https://issuer.example/",
            "MCP_OAUTH_JWKS_URL": "https://issuer.example/jwks.json",
            "MCP_RESOURCE_URL": "https://memory.example/mcp",
        }
    ).serve.oauth
    assert oauth is not None
    limits, calls = settings.serve.http_limits, settings.serve.call_limits
    expected = {
        "`MEMORY_DB_PATH`": ["$XDG_DATA_HOME/" + str(settings.store.db_path.relative_to(xdg))],
        "`VECTOR_INDEX`": [settings.store.vector_index],
        "`POSTGRES_HNSW_MIN_MEMORIES`": [str(settings.store.postgres_hnsw_min_memories)],
        "`POSTGRES_HNSW_EF_SEARCH`": [str(settings.store.postgres_hnsw_ef_search)],
        "`POSTGRES_HNSW_RECALL`": [str(settings.store.postgres_hnsw_recall).lower()],
        "`RECALL_RETRIEVAL`": [settings.recall.recall_retrieval],
        "`STATS_FLUSH_MS`": [str(settings.counters.stats_flush_ms)],
        "`STATS_COMPACT_THRESHOLD`": [str(settings.counters.stats_compact_threshold)],
        "`HOST`, `PORT`": [settings.serve.host, str(settings.serve.port)],
        "`AWS_REGION`": [settings.store.aws_region],
        "`RATE_LIMIT_PER_TENANT`, `RATE_LIMIT_BURST`": [f"{calls.rate_per_s:g}", str(calls.burst)],
        "`MAX_CONCURRENT_CALLS`": [str(calls.max_concurrent)],
        "`HTTP_HEADER_TIMEOUT_MS`, `HTTP_BODY_TIMEOUT_MS`, `HTTP_KEEP_ALIVE_MS`": [
            str(limits.header_timeout_ms),
            str(limits.body_timeout_ms),
            str(limits.keep_alive_ms),
        ],
        "`MCP_OAUTH_LEEWAY_S`, `MCP_OAUTH_JWKS_CACHE_S`": [str(oauth.leeway_s), str(oauth.jwks_cache_s)],
        "`MCP_SCOPE_READ`, `MCP_SCOPE_WRITE`, `MCP_SCOPE_FORGET`": [
            oauth.read_scope,
            oauth.write_scope,
            oauth.forget_scope,
        ],
        "`MCP_OAUTH_ALLOW_HTTP_LOOPBACK`": [str(oauth.allow_http_loopback).lower()],
    }
    rows = table_rows(DOCS["configuration.md"])
    for variables, defaults in expected.items():
        assert variables in rows, f"the Configuration table has no row for {variables}"
        assert code_spans(rows[variables][0]) == defaults, (
            f"{variables}: docs/configuration.md's default is not the code's"
        )
    # the prose beside it, in the same row, must not name another place
    assert "mcp-memory/memory.db" not in rows["`MEMORY_DB_PATH`"][0] + rows["`MEMORY_DB_PATH`"][1]


def test_the_docs_state_the_sqlite_synchronous_setting_the_code_uses() -> None:
    from mcp_memory.stores.sqlite.db import SYNCHRONOUS

    storage = (ROOT / "docs" / "storage.md").read_text(encoding="utf-8")
    assert set(re.findall(r"synchronous=(\w+)", storage)) == {SYNCHRONOUS}
    durability = section(DOCS["backends.md"], "## Durability")
    assert f"`synchronous={SYNCHRONOUS}`" in durability.split("\n\n")[2]  # the table row for SQLite


def logged_events() -> set[str]:
    """Every event name the package can write: the first argument of a `log.info/warn/error`
    call, of a rate-limited line, of a logged flush, or the name beside a warm-up job."""
    import ast

    found: set[str] = set()
    for path in (ROOT / "mcp_memory").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                receiver = func.value if isinstance(func, ast.Attribute) else None
                on_a_log = isinstance(receiver, ast.Attribute | ast.Name) and (
                    getattr(receiver, "attr", getattr(receiver, "id", "")).endswith("log")
                )
                candidates = []
                if name in ("info", "warn", "error") and on_a_log:
                    candidates.append(node.args[0])
                elif name == "RateLimitedLine" and len(node.args) > 1:
                    candidates.append(node.args[1])
                elif name == "_flush_logged":
                    candidates.append(node.args[0])
                elif name == "append" and isinstance(node.args[0], ast.Tuple) and node.args[0].elts:
                    candidates.append(node.args[0].elts[0])  # service.warm_up's (event, job) pairs
                for arg in candidates:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.islower():
                        found.add(arg.value)
    return {event for event in found if re.fullmatch(r"[a-z]+(_[a-z]+)+", event)}


def test_the_logs_section_names_every_event_the_server_writes() -> None:
    events = logged_events()
    assert {
        "tool_call",
        "tool_failed",
        "accept_failed",
        "stats_final_flush_failed",
        "embedder_warm_up_failed",
    } <= events
    logs = section(DOCS["monitoring.md"], "## Logs")
    named = set(re.findall(r"`([a-z_]+)`", logs)) | set(re.findall(r'"event":"([a-z_]+)"', logs))
    assert sorted(events - named) == [], "events docs/monitoring.md's Logs section does not name"


def test_the_tool_table_gives_every_tools_arguments_as_its_schema_has_them() -> None:
    """The first table of the README: `name(arg, optional?, …)` for each tool, in the schema's
    order, `?` exactly on the arguments that are not required."""
    from mcp_memory.server.protocol.search_docs import INPUT_SCHEMA as SEARCH_DOCS_SCHEMA
    from mcp_memory.server.protocol.tools import TOOLS

    schemas = {spec.name: spec.input_schema for spec in TOOLS} | {"search_docs": SEARCH_DOCS_SCHEMA}
    table = README.split("| Tool | Takes | Returns |", 1)[1].split("\n\n", 1)[0]
    shown = dict(re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", table, flags=re.MULTILINE))
    assert sorted(shown) == sorted(schemas)
    for name, schema in schemas.items():
        required = set(schema.get("required", []))
        expected = [arg if arg in required else f"{arg}?" for arg in schema.get("properties", {})]
        assert [a.strip() for a in shown[name].split(",") if a.strip()] == expected, name


def test_every_option_the_command_table_names_belongs_to_its_command() -> None:
    table = README.split("| Command | What it does |", 1)[1].split("\n\n", 1)[0]
    checked = 0
    for command, said in re.findall(r"^\| `([a-z-]+)[^`]*` \| (.*) \|$", table, flags=re.MULTILINE):
        for option in re.findall(r"`(--[a-z-]+)", said):
            assert option in options_of(GROUP.commands[command]), f"the table gives {command} an option {option}"
            checked += 1
    assert checked >= 15


def test_the_configuration_table_names_every_variable_the_code_reads_and_no_other() -> None:
    """config/ is the only reader of the environment (docs/operations.md), and the
    Configuration table is its list: a variable missing from the table is a setting nobody can
    find, and one the code does not read is a setting that does nothing. The table lives in
    docs/configuration.md, which the README links to."""
    import ast

    readers = [*(ROOT / "mcp_memory" / "config").glob("*.py"), ROOT / "mcp_memory/stores/sqlite/location.py"]
    names = {
        node.value
        for reader in readers
        for node in ast.walk(ast.parse(reader.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[A-Z][A-Z0-9_]{3,}", node.value)
    }
    for registry in ("stores", "embedders"):  # each backend and provider names the variables it requires
        tree = ast.parse((ROOT / "mcp_memory" / registry / "__init__.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "requires" and isinstance(node.value, ast.Tuple):
                names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    platform = {"HOME", "XDG_DATA_HOME"}  # where the platform keeps user data (see MEMORY_DB_PATH)
    read = {n for n in names if not re.fullmatch(r"(RS|PS|ES)\d+", n)} - platform
    listed = {name for row in table_rows(DOCS["configuration.md"]) for name in code_spans(row)}
    listed = {name for name in listed if re.fullmatch(r"[A-Z][A-Z0-9_]{3,}", name)}
    assert sorted(read - listed) == [], "read by config/, missing from the Configuration table"
    assert sorted(listed - read) == [], "in the Configuration table, never read"


def docker_runs() -> list[tuple[str, str]]:
    """Every `docker run` example in the README and docs/, as (page, the command line)."""
    found = []
    for name, text in {"README.md": README, **{f"docs/{n}": t for n, t in DOCS.items()}}.items():
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.DOTALL):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip().startswith("docker run"):
                    found.append((name, line.split("  #", 1)[0].strip()))
    return found


def test_every_docker_example_publishes_on_loopback_or_sets_a_key() -> None:
    """The image listens on 0.0.0.0: `-p 3000:3000` without a key would publish an open memory
    server on every interface of the host."""
    runs = docker_runs()
    assert len([r for r in runs if r[0] == "README.md"]) >= 2
    for page, line in runs:
        words = shlex.split(line)
        published = [words[i + 1] for i, w in enumerate(words) if w in ("-p", "--publish")]
        published += [w.split("=", 1)[1] for w in words if w.startswith("--publish=")]
        keyed = any(words[i + 1].split("=")[0] == "MCP_API_KEY" for i, w in enumerate(words) if w in ("-e", "--env"))
        for spec in published:
            assert spec.startswith("127.0.0.1:") or keyed, f"{page}: {line} publishes {spec} with no key"


def test_the_quoted_boot_warning_is_the_one_the_server_prints_for_an_open_bind() -> None:
    from mcp_memory.server.http.auth import auth_lines

    _, warnings = auth_lines(None, "0.0.0.0")
    loud = warnings[-1]
    assert loud.startswith("WARNING: HOST=0.0.0.0 is not a loopback address")
    for name, text in (("README.md", README), ("serving_http.md", DOCS["serving_http.md"])):
        quoted = section(text, "## Docker")
        assert f"```text\n{loud}\n```" in quoted, f"{name} does not quote the server's warning as it prints it"
