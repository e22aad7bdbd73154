"""The Claude Code plugin in plugin/ and its marketplace in .claude-plugin/: the shape the plugin
reference documents (docs/hooks.md#the-plugin), hook commands that run as written under bash,
and Claude Code's own CLI validating it and installing it with one command, the tenant set once."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_memory.cli.hooks.command import EVENTS
from mcp_memory.server.hooks.tool import EVENTS as TOOL_HOOK_EVENTS
from mcp_memory.server.hooks.tool import INPUT_SCHEMA, NAME
from mcp_memory.server.hooks.wire import CALL_FIELDS
from tests.conftest import ROOT

PLUGIN = ROOT / "plugin"
MARKETPLACE = ROOT / ".claude-plugin" / "marketplace.json"
#: The hook events of the hooks reference this plugin uses, with the SessionStart sources.
SESSION_START_SOURCES = {"startup", "resume", "clear", "compact"}
#: Events whose matcher Claude Code ignores (hooks reference, "Matcher patterns").
NO_MATCHER = {"UserPromptSubmit", "Stop"}
#: The keys a userConfig option may have, and its types (plugin manifest reference).
OPTION_KEYS = {"type", "title", "description", "required", "default", "multiple", "sensitive", "min", "max"}
OPTION_TYPES = {"string", "number", "boolean", "directory", "file"}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_marketplace_lists_the_plugin_from_its_folder() -> None:
    market = load(MARKETPLACE)
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", market["name"])
    assert market["owner"]["name"]
    (entry,) = market["plugins"]
    assert entry["name"] == "mcp-memory" and entry["source"] == "./plugin"
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()


def test_the_manifest_has_a_kebab_case_name_and_a_tenant_option_of_the_documented_shape() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "mcp-memory"
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    options = manifest["userConfig"]
    assert set(options) == {"tenant", "capture"}
    for key, option in options.items():
        assert re.fullmatch(r"[A-Za-z_]\w*", key)  # it becomes CLAUDE_PLUGIN_OPTION_<KEY> in hooks
        assert set(option) <= OPTION_KEYS and option["type"] in OPTION_TYPES
    assert options["tenant"]["type"] == "string" and options["tenant"]["default"] == "local"
    assert options["capture"]["type"] == "boolean" and options["capture"]["default"] is False


def test_the_mcp_server_gets_the_tenant_from_the_plugin_option() -> None:
    servers = load(PLUGIN / ".mcp.json")["mcpServers"]
    assert servers == {
        "memory": {
            "command": "mcp-memory",
            "args": ["serve-stdio"],
            "env": {"MEMORY_TENANT": "${user_config.tenant}"},
        }
    }


def handlers() -> dict[str, dict[str, Any]]:
    config = load(PLUGIN / "hooks" / "hooks.json")
    return {event: groups[0]["hooks"][0] for event, groups in config["hooks"].items()}


#: The events the plugin's hooks ask serve-stdio's tool for (docs/hooks.md#hooks-as-tool-calls);
#: the others run `mcp-memory hook`.
TOOL_HOOKS = set(TOOL_HOOK_EVENTS)
COMMAND_HOOKS = [event for event in EVENTS if event not in TOOL_HOOKS]
#: What each event's hook input carries that the tool's arguments may be substituted from (the
#: hooks reference's input of each event; tool_input's fields are those the hooks read).
INPUT_PATHS = {
    "UserPromptSubmit": {"session_id", "cwd", "prompt"},
    "PreToolUse": {"session_id", "cwd", "tool_name", *(f"tool_input.{f}" for f in CALL_FIELDS)},
    "PostToolUseFailure": {"session_id", "cwd", "tool_name", "error", *(f"tool_input.{f}" for f in CALL_FIELDS)},
}


def test_each_hook_runs_mcp_memory_hook_for_its_own_event_with_the_same_tenant() -> None:
    config = load(PLUGIN / "hooks" / "hooks.json")
    assert set(config) == {"description", "hooks"}
    assert set(config["hooks"]) == set(EVENTS)
    for event, groups in config["hooks"].items():
        (group,) = groups
        if event == "SessionStart":
            assert set(group["matcher"].split("|")) == SESSION_START_SOURCES
        if event in NO_MATCHER:
            assert "matcher" not in group
        (handler,) = group["hooks"]
        assert isinstance(handler["timeout"], int) and handler["timeout"] > 0
        if event in TOOL_HOOKS:
            continue
        assert handler["type"] == "command"
        assert f'mcp-memory hook {event} --tenant "${{CLAUDE_PLUGIN_OPTION_TENANT:-}}"' in handler["command"]
        assert "${user_config." not in handler["command"]  # refused in shell-form hook commands


def test_the_prompt_and_tool_hooks_call_the_plugins_own_server_with_the_fields_of_their_event() -> None:
    (server,) = load(PLUGIN / ".mcp.json")["mcpServers"]
    plugin = load(PLUGIN / ".claude-plugin" / "plugin.json")["name"]
    found = handlers()
    for event in TOOL_HOOKS:
        handler = found[event]
        assert set(handler) == {"type", "server", "tool", "input", "timeout"}
        assert handler["type"] == "mcp_tool" and handler["tool"] == NAME
        assert handler["server"] == f"plugin:{plugin}:{server}"  # how Claude Code names a plugin's server
        given = dict(handler["input"])
        assert given.pop("hook_event_name") == event  # written out: no substitution to go wrong
        assert set(given) <= set(INPUT_SCHEMA["properties"])
        paths = {}
        for name, value in given.items():
            match = re.fullmatch(r"\$\{([a-z_.]+)\}", value)
            assert match, (event, name, value)
            paths[name] = match.group(1)
        assert set(paths.values()) == INPUT_PATHS[event]
        assert all(path.rsplit(".", 1)[-1] == name for name, path in paths.items())


def hook_commands() -> dict[str, str]:
    return {event: handler["command"] for event, handler in handlers().items() if handler["type"] == "command"}


@pytest.mark.parametrize("event", COMMAND_HOOKS)
def test_the_hook_commands_pass_the_plugin_options_through_bash_as_written(event: str, tmp_path: Path) -> None:
    shim = tmp_path / "bin" / "mcp-memory"
    shim.parent.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        'printf \'%s\\n\' "$@" > "$ARGS_OUT"\n'
        'printf \'%s\\n\' "${MEMORY_HOOK_CAPTURE-unset}" >> "$ARGS_OUT"\n'
    )
    shim.chmod(0o755)
    out = tmp_path / "args"
    env = {
        "PATH": f"{shim.parent}:{os.environ['PATH']}",
        "ARGS_OUT": str(out),
        "CLAUDE_PLUGIN_OPTION_TENANT": "my-project",
        "CLAUDE_PLUGIN_OPTION_CAPTURE": "true",
    }
    subprocess.run(["bash", "-c", hook_commands()[event]], env=env, check=True)
    *args, capture = out.read_text().splitlines()
    assert args == ["hook", event, "--tenant", "my-project"]
    assert capture == ("true" if event in ("Stop", "PreCompact") else "unset")
    env.pop("CLAUDE_PLUGIN_OPTION_TENANT")
    subprocess.run(["bash", "-c", hook_commands()[event]], env=env, check=True)
    assert out.read_text().splitlines()[:4] == ["hook", event, "--tenant", ""]  # then MEMORY_TENANT, else local


def test_claude_code_validates_the_plugin_and_the_marketplace(claude_code: str) -> None:
    for target in (PLUGIN, ROOT):
        done = subprocess.run([claude_code, "plugin", "validate", str(target)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Validation passed" in done.stdout


def test_one_command_installs_the_plugin_with_its_server_and_hooks_and_the_tenant_set_once(
    tmp_path: Path, claude_code: str
) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    command = [claude_code, "plugin", "install", "mcp-memory", "--marketplace", str(ROOT), "--config", "tenant=acme"]
    done = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["outcome"] == "ok"
    settings = load(tmp_path / ".claude" / "settings.json")
    assert settings["enabledPlugins"] == {"mcp-memory@mcp-memory": True}
    assert settings["pluginConfigs"]["mcp-memory@mcp-memory"]["options"] == {"tenant": "acme"}
    listed = subprocess.run(
        [claude_code, "plugin", "details", "mcp-memory@mcp-memory"], env=env, capture_output=True, text=True
    )
    assert (
        "Hooks (6)  SessionStart, UserPromptSubmit, PreToolUse, PostToolUseFailure, PreCompact, Stop" in listed.stdout
    )
    assert "MCP servers (1)  memory" in listed.stdout


def test_the_two_step_install_for_a_claude_code_without_marketplace_installs_the_same_plugin(
    tmp_path: Path, claude_code: str
) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    added = subprocess.run(
        [claude_code, "plugin", "marketplace", "add", str(ROOT)], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert added.returncode == 0, added.stdout + added.stderr
    install = [claude_code, "plugin", "install", "mcp-memory@mcp-memory", "--config", "tenant=acme"]
    done = subprocess.run(install, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # the line the README explains: capture, a boolean that is off until set
    assert "1 userConfig option not yet set" in done.stdout + done.stderr
    settings = load(tmp_path / ".claude" / "settings.json")
    assert settings["enabledPlugins"] == {"mcp-memory@mcp-memory": True}
    assert settings["pluginConfigs"]["mcp-memory@mcp-memory"]["options"] == {"tenant": "acme"}


def test_saying_capture_false_at_install_leaves_no_option_unset(tmp_path: Path, claude_code: str) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    command = [claude_code, "plugin", "install", "mcp-memory", "--marketplace", str(ROOT), "--config", "tenant=acme"]
    done = subprocess.run(
        [*command, "--config", "capture=false"], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not yet set" not in done.stdout + done.stderr


def test_the_install_command_in_docs_is_the_one_tested() -> None:
    docs = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = "claude plugin install mcp-memory --marketplace /path/to/mcp-memory --config tenant=my-project"
    assert line in docs and line in readme
    for step in (
        "claude plugin marketplace add /path/to/mcp-memory",
        "claude plugin install mcp-memory@mcp-memory --config tenant=my-project",
    ):
        assert step in readme and step in docs


def test_a_claude_on_path_never_replaces_the_pinned_cli_the_tests_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support import needs

    pinned = tmp_path / "pinned" / "node_modules" / ".bin" / "claude"
    pinned.parent.mkdir(parents=True)
    pinned.write_text("#!/bin/sh\necho 2.1.328\n")
    older = tmp_path / "claude"
    older.write_text("#!/bin/sh\necho 2.1.197 >&2; exit 1\n")
    for script in (pinned, older):
        script.chmod(0o755)
    monkeypatch.setattr(needs, "CLAUDE_CODE_PREFIX", tmp_path / "pinned")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("CLAUDE_CODE_BIN", raising=False)
    assert needs.claude_code_path() == str(pinned)
    pinned.unlink()
    assert needs.claude_code_path() is None  # the run then stops naming what to install, never takes PATH's
    monkeypatch.setenv("CLAUDE_CODE_BIN", str(older))  # named on purpose: that one is used
    assert needs.claude_code_path() == str(older)
