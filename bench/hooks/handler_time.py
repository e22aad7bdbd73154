"""How long Claude Code spends in each hook, per handler type: `mcp_tool` (the tool on the running
serve-stdio) against `command` (`mcp-memory hook`, asking serve-stdio on its socket), side by
side in one run, at 10,000 memories (issue 35 item 3).

    nice python -m bench.hooks.handler_time [--memories 10000] [--vectors-from 1000] [--sessions 10]
                                            [--prompts 4] [--claude BIN] [--install BIN] [--out FILE.md]

One SQLite store is filled with the benchmark corpus (bench/harness/perf_fill.py). The plugin is
installed twice, from two copies of this checkout's marketplace, each into a scratch HOME of its
own sharing the store: `mcp_tool`, plugin/hooks/hooks.json as it ships, and `command`, the same
file with each `mcp_tool` hook replaced by its command hook (`mcp-memory hook EVENT --tenant
...`, the fallback docs/hooks.md gives). Sessions alternate between the two (which goes first
alternates too), so the machine's load falls on both alike.

A session is Claude Code's CLI in print mode with stream-json input, against a fake Messages API
on 127.0.0.1 (bench/harness/fake_model.py): `--prompts` prompts one after the other (each sent
once the previous one's result is out; every other one restates a stored fact, so memories are
injected), the first answered with a Read of a file and a Bash command. Claude Code's own debug
log (CLAUDE_CODE_DEBUG_LOG_LEVEL=verbose) gives each hook's time: from its "Getting matching hook
commands for EVENT" line to its "Hook EVENT ... success" line (or, for a command hook that printed
nothing, its "finished with status" line). The first prompt of a session waits for serve-stdio's
warm-up (the model's load) in both designs: it is reported apart.

`--install BIN` puts another installed environment's bin directory (a wheel's venv) first on
PATH, so both designs run its `mcp-memory`. Given twice or more (`--install A/bin --install
B/bin`), each handler type runs from each install, sessions rotating through all of them: two
wheels side by side in one run (a row's handler names the install by its folder, `A`). `--handlers
mcp_tool` runs only the shipped type.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.harness.fake_model import CLAUDE_QUIET, Call, FakeModel
from bench.harness.timing import percentile

ROOT = Path(__file__).resolve().parents[2]
PINNED = Path.home() / ".cache" / "mcp-memory-ci" / "claude-code" / "node_modules" / ".bin" / "claude"
KINDS = ("mcp_tool", "command")
#: The tool calls the fake model makes in each session's first answer, in order (`session`).
TOOLS = ("Read", "Bash")
SESSION_SECONDS = 240
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z) ")
#: A hook of ours that gave no answer: Claude Code's words for each way (its binary, 2.1.328).
FAILED = re.compile(r"mcp_tool hook (skipped|refused|error)|Hook cancelled|finished with status [1-9]")
START = re.compile(r"Getting matching hook commands for (UserPromptSubmit|PreToolUse|PostToolUseFailure)\b")


def command_variant(hooks: dict[str, Any]) -> dict[str, Any]:
    """The hooks file with each mcp_tool hook replaced by the command hook of its event."""
    out = json.loads(json.dumps(hooks))
    for event, groups in out["hooks"].items():
        for group in groups:
            group["hooks"] = [
                {
                    "type": "command",
                    "command": f'mcp-memory hook {event} --tenant "${{CLAUDE_PLUGIN_OPTION_TENANT:-}}"',
                    "timeout": hook.get("timeout", 5),
                }
                if hook["type"] == "mcp_tool"
                else hook
                for hook in group["hooks"]
            ]
    return out


def marketplace(root: Path, kind: str) -> Path:
    """A copy of this checkout's marketplace whose plugin has the `kind` hooks."""
    folder = root / f"market-{kind}"
    shutil.copytree(ROOT / ".claude-plugin", folder / ".claude-plugin")
    shutil.copytree(ROOT / "plugin", folder / "plugin")
    shipped = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    hooks = shipped if kind == "mcp_tool" else command_variant(shipped)
    (folder / "plugin" / "hooks" / "hooks.json").write_text(json.dumps(hooks, indent=2), encoding="utf-8")
    # serve-stdio's log lines (its own time per question) kept in $SERVER_LOG: Claude Code copies
    # only those of its first seconds into the debug log
    servers = json.loads((folder / "plugin" / ".mcp.json").read_text(encoding="utf-8"))
    for server in servers["mcpServers"].values():
        line = " ".join([server["command"], *server["args"]])
        server["command"], server["args"] = "sh", ["-c", f'exec {line} 2>>"$SERVER_LOG"']
    (folder / "plugin" / ".mcp.json").write_text(json.dumps(servers, indent=2), encoding="utf-8")
    return folder


def spans(log: str) -> list[tuple[str, float | None, str]]:
    """(event, ms, how it ended) of each of our hooks in a Claude Code debug log, in order; ms is
    None for a hook that gave no answer (it failed, was cancelled or timed out: `how` says which
    line ended the search)."""
    lines = log.splitlines()
    found: list[tuple[str, float | None, str]] = []
    i = 0
    while i < len(lines):
        match = START.search(lines[i])
        stamp = STAMP.match(lines[i])
        if not match or not stamp:
            i += 1
            continue
        event, began = match.group(1), _at(stamp.group(1))
        ended, how = None, "no end in the log"
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if re.search(rf"Hook {event}(:\S+)? \({event}\) success", line):
                ended, how = j, "injected" if "additionalContext" in line else "success"
                break
            if "finished with status 0" in line and "mcp-memory hook" in line and event in line:
                # a command hook: its success line follows when it printed something
                tail = lines[j + 1 : j + 4]
                nxt = next((k for k, t in enumerate(tail) if f"Hook {event}" in t and "success" in t), None)
                if nxt is None:
                    ended, how = j, "finished"
                else:
                    ended = j + 1 + nxt
                    how = "injected" if "additionalContext" in lines[ended] else "success"
                break
            if FAILED.search(line):
                how = FAILED.search(line).group(0)  # type: ignore[union-attr]
                break
            other = START.search(line)
            if (other and other.group(1) != event) or "[API REQUEST]" in line:
                how = "none before the next step"
                break
            j += 1
        if ended is None:
            found.append((event, None, how))
            i = j if j > i else i + 1
            continue
        end_stamp = STAMP.match(lines[ended])
        if end_stamp:
            found.append((event, (_at(end_stamp.group(1)) - began) * 1000, how))
        i = ended + 1
    return found


def _at(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def served(log: str) -> list[tuple[str, int]]:
    """serve-stdio's own time for each question it answered: its hook_call lines (the socket's,
    by kind of question) and its tool_call lines of the hook tool."""
    found = []
    for line in log.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if record.get("event") == "hook_call":
            found.append((f"hook_call {record.get('method')}", int(record["ms"])))
        elif record.get("event") == "tool_call" and record.get("tool") == "claude_code_hook":
            found.append(("tool_call claude_code_hook", int(record["ms"])))
    return found


def session(claude: str, env: dict[str, str], project: Path, prompts: list[str], log: Path) -> str:
    """One session; returns the debug log's text."""
    script: list[Call | None] = [
        Call("Read", {"file_path": str(project / "src" / "billing" / "refund.py")}),
        Call("Bash", {"command": "git status --short"}),
        None,
    ] + [None] * len(prompts)
    with FakeModel(script) as fake:  # type: ignore[arg-type]
        run_env = {**env, "ANTHROPIC_BASE_URL": fake.url, "CLAUDE_CODE_DEBUG_LOG_LEVEL": "verbose"}
        command = [
            claude,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Read,Bash",
            "--debug-file",
            str(log),
        ]
        process = subprocess.Popen(
            command,
            env=run_env,
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert process.stdin is not None and process.stdout is not None
        deadline = time.monotonic() + SESSION_SECONDS
        try:
            for text in prompts:
                message = {"type": "user", "message": {"role": "user", "content": text}}
                process.stdin.write(json.dumps(message) + "\n")
                process.stdin.flush()
                for line in process.stdout:  # until this prompt's result is out
                    if line.startswith("{") and json.loads(line).get("type") == "result":
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError
            process.stdin.close()
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    return log.read_text(encoding="utf-8", errors="replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--vectors-from", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=10, help="sessions per handler type")
    parser.add_argument("--prompts", type=int, default=4, help="prompts per session")
    parser.add_argument("--claude", default=str(PINNED))
    parser.add_argument(
        "--install", action="append", default=None, help="the bin directory of the mcp-memory to run (repeatable)"
    )
    parser.add_argument("--handlers", default=",".join(KINDS), help="the handler types to run, comma-separated")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    from bench.harness.perf_corpus import queries
    from bench.harness.perf_fill import TENANT, fill_sqlite

    root = Path(tempfile.mkdtemp(prefix="handler-time-"))
    try:
        db = root / "m.db"
        texts = fill_sqlite(db, args.memories, args.vectors_from, args.cache)
        real = min(args.vectors_from, args.memories)
        bins = [Path(b) for b in args.install] if args.install else [Path(sys.executable).parent]
        kinds = [k for k in KINDS if k in args.handlers.split(",")]
        if not kinds:
            sys.exit(f"--handlers names none of {', '.join(KINDS)}")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
        version = subprocess.run([args.claude, "--version"], capture_output=True, text=True).stdout.strip()
        envs: dict[str, dict[str, str]] = {}
        projects: dict[str, Path] = {}
        markets = {kind: marketplace(root, kind) for kind in kinds}
        variants: list[str] = []  # a handler type from one install: its rows' name
        for n_bin, bin_dir in enumerate(bins):
            for kind in kinds:
                variant = kind if len(bins) == 1 else f"{kind} ({bin_dir.parent.name})"
                home = root / f"home-{n_bin}-{kind}"
                project = home / "project"
                (project / "src" / "billing").mkdir(parents=True)
                (project / "src" / "billing" / "refund.py").write_text("def refund():\n    pass\n", encoding="utf-8")
                subprocess.run(["git", "init", "-q"], cwd=project, check=True)
                env = {
                    **base,
                    "HOME": str(home),
                    "XDG_DATA_HOME": str(home / "data"),
                    "MEMORY_DB_PATH": str(db),
                    **CLAUDE_QUIET,
                    "PATH": f"{bin_dir}{os.pathsep}{base['PATH']}",
                }
                install = [args.claude, "plugin", "install", "mcp-memory", "--marketplace", str(markets[kind])]
                done = subprocess.run(
                    [*install, "--config", f"tenant={TENANT}"], env=env, cwd=project, capture_output=True, text=True
                )
                if done.returncode != 0:
                    sys.exit(f"the {variant} plugin did not install: {done.stdout}{done.stderr}")
                envs[variant], projects[variant] = env, project
                variants.append(variant)
        asked = queries(args.sessions * args.prompts * 2 + 10)
        times: dict[tuple[str, str], list[float]] = {}
        answers: dict[tuple[str, str], list[float]] = {}
        missed: dict[tuple[str, str], list[str]] = {}
        injected: dict[tuple[str, str], int] = {}
        loads: list[float] = []
        n = 0
        for s in range(args.sessions):
            shift = s % len(variants)
            order = variants[shift:] + variants[:shift] if len(variants) > 2 or s % 2 == 0 else variants[::-1]
            prompts = []
            for p in range(args.prompts):  # every other prompt restates a stored fact
                n += 1
                prompts.append(texts[(n * 97) % real] if p % 2 == 0 else asked[n])
            for kind in order:  # a variant: a handler type, from one install
                loads.append(os.getloadavg()[0])
                log = root / f"{variants.index(kind)}-{s}.log"
                server_log = root / f"{variants.index(kind)}-{s}.server.log"
                env = {**envs[kind], "SERVER_LOG": str(server_log)}
                text = session(args.claude, env, projects[kind], prompts, log)
                found = spans(text)
                firsts = 0
                calls = iter(TOOLS)
                for event, ms, how in found:
                    rows = [event]
                    if event == "UserPromptSubmit" and firsts == 0:
                        rows, firsts = ["UserPromptSubmit (a session's first)"], 1
                    if event == "PreToolUse":  # the script's calls in order: each also on a row of its own
                        rows.append(f"PreToolUse, of which the {next(calls, 'other')} call")
                    for row in rows:
                        if ms is None:
                            missed.setdefault((kind, row), []).append(how)
                        else:
                            times.setdefault((kind, row), []).append(ms)
                            injected[(kind, row)] = injected.get((kind, row), 0) + (how == "injected")
                for name, ms in served(server_log.read_text(encoding="utf-8") if server_log.exists() else ""):
                    answers.setdefault((kind, name), []).append(float(ms))
                shown = [(e, round(ms) if ms is not None else how) for e, ms, how in found]
                print(f"session {s} {kind}: {shown}", flush=True)
        lines = [
            f"Claude Code {version}; {args.memories:,} memories (SQLite, local model, {real:,} distinct vectors); "
            f"{args.sessions} sessions per handler type of {args.prompts} prompts, alternating; "
            f"load average {min(loads):.1f}-{max(loads):.1f}; mcp-memory from {', '.join(map(str, bins))}.",
            "",
            "| handler | hook | answered | p50 ms | p95 ms | no answer | injected |",
            "| --- | --- | ---: | ---: | ---: | --- | ---: |",
        ]
        for kind, row in sorted(set(times) | set(missed), key=lambda key: (key[1], key[0])):
            values, lost = times.get((kind, row), []), missed.get((kind, row), [])
            p50, p95 = (f"{percentile(values, q):.0f}" if values else "—" for q in (50, 95))
            why = f" ({', '.join(sorted(set(lost)))})" if lost else ""
            given = injected.get((kind, row), 0)
            lines.append(f"| {kind} | {row} | {len(values)} | {p50} | {p95} | {len(lost)}{why} | {given} |")
        for (kind, name), values in sorted(answers.items()):
            what = f"serve-stdio's own time ({name} ms)"
            lines.append(
                f"| {kind} | {what} | {len(values)} | {percentile(values, 50):.0f} | {percentile(values, 95):.0f} | | |"
            )
        text = "\n".join(lines)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
