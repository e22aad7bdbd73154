"""The package's imports run one way, and no module imports itself round a circle.

    edges (server/, cli/)  ->  app.py (composition root)  ->  stores/, embedders/, runtime/
                 \\                      |                            |
                  +--------------->   core/   <-----------------------+

core imports only core. runtime (process helpers: heap, blas, aws, batching) imports
core; stores and embedders import core and runtime; app wires them; server and cli
import app, config and core (and runtime, for boto3); only the console script
(cli/app.py, which hosts serve-stdio and serve-http) and __main__ reach the server.
Every import counts: at the top of a module, inside a function, or for typing only.
The release and the distribution name live in core/version.py, so no module imports the root.

Inside the edges, each feature is a room of its own (docs/development.md, "Layers"):
server/protocol (the MCP protocol) knows neither HTTP, the hooks' socket nor a runner;
server/http (HTTP hosting) and server/hooks (the hooks' socket side) build on the protocol
and not on each other; server/runners put them together. cli/hooks, the hook command, reaches
only the hooks' rooms of the server (and the service, through its fallback). No process
plumbing of the hooks is in core: core never imports a hooks room (it imports only core).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_memory"

#: room -> the rooms it may import from
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "runtime": frozenset({"core", "runtime"}),
    "stores": frozenset({"core", "runtime", "stores"}),
    "embedders": frozenset({"core", "runtime", "embedders"}),
    "config": frozenset({"core", "config"}),  # and the two tables: see TABLES
    "app": frozenset({"core", "runtime", "stores", "embedders", "config", "app"}),
    # server/'s own files (bounded_json.py): shared by every room of the server
    "server": frozenset({"core", "server"}),
    "server.protocol": frozenset({"core", "runtime", "config", "server", "server.protocol"}),
    "server.http": frozenset({"core", "config", "server", "server.protocol", "server.http"}),
    # config: the hooks read their variables through the settings' one reader (config/__init__.py)
    # stores: the backends' table names the variables that choose a store, and so a hook's socket
    "server.hooks": frozenset({"core", "config", "stores", "server", "server.protocol", "server.hooks"}),
    "server.runners": frozenset(
        {
            "core",
            "runtime",
            "app",
            "config",
            "web",
            "server",
            "server.protocol",
            "server.http",
            "server.hooks",
            "server.runners",
        }
    ),
    "web": frozenset({"core", "web"}),
    "cli": frozenset(
        {
            "core",
            "app",
            "config",
            "web",
            "server",
            "server.protocol",
            "server.http",
            "server.runners",
            "cli",
            "cli.hooks",
        }
    ),
    "cli.hooks": frozenset({"core", "app", "config", "server", "server.protocol", "server.hooks", "cli.hooks"}),
    "__main__": frozenset({"cli"}),
    "root": frozenset({"core", "config", "app"}),
}

#: The edges' folders that are rooms of their own: `mcp_memory.server.http.app` is in "server.http".
SUBROOMS = {"server": ("protocol", "http", "hooks", "runners"), "cli": ("hooks",)}


#: config/ reads the backend and provider tables, and the shapes of their sections (which live
#: with the stores and embedders that take them), and nothing else of those rooms.
TABLES = {
    ("config", "mcp_memory.stores"),
    ("config", "mcp_memory.stores.section"),
    ("config", "mcp_memory.embedders"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    if len(parts) > 2 and parts[2] in SUBROOMS.get(parts[1], ()):
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> list[tuple[int, str, str, bool]]:
    """(line, imported module, the statement as written, typing only) for every import of the package."""
    module = module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found: list[tuple[int, str, str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from mcp_memory.server import render` imports the submodule when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            if target == "mcp_memory" or target.startswith("mcp_memory."):
                found.append((node.lineno, target, ast.unparse(node), id(node) in typing_only))
    return found


def back_references() -> list[str]:
    wrong = []
    for module, path in MODULES.items():
        for line, target, statement, _ in imports(path):
            if room(target) in ALLOWED[room(module)] or (room(module), target) in TABLES:
                continue
            where = path.relative_to(PACKAGE.parent)
            wrong.append(f"{where}:{line}: `{statement}` — {room(module)} may not import {room(target)}")
    return wrong


def test_every_module_belongs_to_a_room_with_rules() -> None:
    assert {room(m) for m in MODULES} <= set(ALLOWED)


def test_the_server_and_the_hook_command_are_in_rooms() -> None:
    rooms = {room(m) for m in MODULES}
    assert {"server.protocol", "server.http", "server.hooks", "server.runners", "cli.hooks"} <= rooms
    assert room("mcp_memory.server.hooks.listener") == "server.hooks"
    assert room("mcp_memory.server.bounded_json") == "server"


def test_the_protocol_knows_no_http_socket_or_runner_and_core_no_hooks() -> None:
    """The rules the rooms exist for, stated apart so that a loosened table still fails here."""
    assert not {"server.http", "server.hooks", "server.runners"} & ALLOWED["server.protocol"]
    assert "server.hooks" not in ALLOWED["server.http"] and "server.http" not in ALLOWED["server.hooks"]
    assert not {r for r in ALLOWED["core"] if r != "core"}
    assert not {"server.http", "server.runners"} & ALLOWED["cli.hooks"]


def test_imports_run_one_way_between_the_rooms() -> None:
    wrong = back_references()
    assert not wrong, "imports against the direction of the layers:\n" + "\n".join(wrong)


def test_no_module_of_the_package_imports_itself_round_a_circle() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for _, target, _, typing_only in imports(path):
            if not typing_only and target in MODULES and target != module:
                graph[module].add(target)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail("an import circle: " + " -> ".join(error.args[1]))


def rendering_imports(source: str) -> list[tuple[int, str]]:
    """The lines of `source` that import the tools' or the CLI's rendering layers."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[:2] in (["mcp_memory", "server"], ["mcp_memory", "cli"]):
                found.append((node.lineno, name))
    return found


def test_core_tests_assert_on_results_not_on_what_the_tools_print() -> None:
    """docs/development.md, "Where a test goes": tests/core/ drives the service and the pure
    pipeline; what the tools and the CLI print is tested in tests/server/ and tests/cli/."""
    tests_core = PACKAGE.parent / "tests" / "core"
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: imports {name}"
        for path in sorted(tests_core.rglob("*.py"))
        for line, name in rendering_imports(path.read_text(encoding="utf-8"))
    ]
    assert wrong == [], "tests/core/ reaching the rendering layers:\n" + "\n".join(wrong)


def test_a_core_test_importing_the_renderer_is_caught() -> None:
    source = "import io\nfrom mcp_memory.server.protocol.render import text\nimport mcp_memory.cli.app\nfrom mcp_memory.core import recall\n"
    assert rendering_imports(source) == [(2, "mcp_memory.server.protocol.render"), (3, "mcp_memory.cli.app")]
