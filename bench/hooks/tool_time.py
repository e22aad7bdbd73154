"""Memory at the moment of action: the scenario benchmark of issue 35, through Claude Code's CLI.

    nice python -m bench.hooks.tool_time [--claude BIN] [--only ID ...] [--out FILE.json] [--debug DIR]

One store is filled the way a team's memory grows: the 40 scenario memories first (bench/hooks/
scenarios.py; `applies_to` becomes `path:` tags, the convention docs/hooks.md describes), then the
302 facts of the project-memory dev set (five other teams' decisions, commands and fixes, in
English and Korean) after them, so a digest at session start shows those newer ones first.
The plugin is installed into a scratch HOME as the README says, with Claude Code's own CLI (the
pinned one, .ci/run's, unless --claude names another).

Then one `claude -p` session per scenario, in a project of its own, against a fake Messages API
on 127.0.0.1 (bench/harness/fake_model.py) that makes the scenario's tool calls: first one of the
40 unrelated calls, then the scenario's own. Commands run through shims (nothing real is pushed,
published or deleted). Reported, per scenario and in total:

- in time: the memory is in the request whose answer is the relevant call (the model had it
  before it made that call), and which hook brought it (digest, prompt, or a tool event);
- late: it came only with the relevant call's own result;
- unrelated: a tool hook injected a memory for the unrelated call (the target is none);
- stops: a call a PreToolUse hook denied with memories as its reason (docs/hooks.md#stopped-before-it-runs).
  The fake model makes a stopped call again (`retry_stopped`), so "the relevant call" is the one that
  ran, and a memory a stop brought is in its request. A stop on the relevant call with the scenario's
  memory is the stop working; every other stop (the unrelated call, another call of the scenario,
  or the relevant call stopped by another memory) is listed for reading: a stop on a call its memory
  does not concern is a false stop.

Results are printed as a markdown table; --out writes them as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness.fake_model import CLAUDE_QUIET, FakeModel, Turn, denied
from bench.harness.fake_model import Call as ModelCall
from bench.hooks.scenarios import PROJECT_FILES, SCENARIOS, UNRELATED, Call, Scenario

ROOT = Path(__file__).resolve().parents[2]
TENANT = "harbor"
PINNED = Path.home() / ".cache" / "mcp-memory-ci" / "claude-code" / "node_modules" / ".bin" / "claude"
FACTS = ROOT / "bench" / "data" / "project_memory" / "facts.jsonl"
SESSION_SECONDS = 240
#: Where Claude Code puts a hook's context in the next request: "<Event>[:<tool>] hook additional context: ...".
HOOK_CONTEXT = re.compile(
    r"(SessionStart|UserPromptSubmit|PreToolUse|PostToolUse|PostToolUseFailure)(?::\S+)? hook additional context:"
)
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
#: Where Claude Code puts a PreToolUse hook's denial (a stop) in the next request: the call's result.
HOOK_STOP = re.compile(r"PreToolUse:\S+ hook error:")

SHIM = r"""#!/usr/bin/env python3
import json, os, sys
table = json.load(open(os.environ["SHIM_TABLE"]))
line = " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])
keys = sorted((k for k in table if line == k or line.startswith(k + " ")), key=len, reverse=True)
if not keys:
    sys.exit(0)
key = keys[0]
count_file = os.environ["SHIM_TABLE"] + "." + str(abs(hash(key)) % 10**8)
n = int(open(count_file).read()) if os.path.exists(count_file) else 0
open(count_file, "w").write(str(n + 1))
code, out, err = table[key][min(n, len(table[key]) - 1)]
sys.stdout.write(out)
sys.stderr.write(err)
sys.exit(code)
"""


def tags_for(applies_to: tuple[str, ...]) -> list[str]:
    """What the storing agent sets when it says which files a memory applies to (docs/hooks.md)."""
    return [f"path:{p}" for p in applies_to]


async def fill(env: dict[str, str]) -> int:
    """The scenario memories, then the project-memory facts, into TENANT; the number stored."""
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    caller = Caller(TENANT)
    service = await open_service(Settings.from_env(env))
    stored = 0
    try:
        for scenario in SCENARIOS:
            await service.remember(caller, scenario.memory, tags=tags_for(scenario.applies_to))
            stored += 1
        for line in FACTS.read_text(encoding="utf-8").splitlines():
            fact = json.loads(line)
            await service.remember(caller, fact["text"], memory_type=fact["memory_type"])
            stored += 1
    finally:
        await service.close()
    return stored


def base_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "MEMORY_DB_PATH": str(home / "memory.db"),
        "MEMORY_TENANT": TENANT,
        **CLAUDE_QUIET,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }


def install(claude: str, env: dict[str, str], home: Path) -> None:
    command = [claude, "plugin", "install", "mcp-memory", "--marketplace", str(ROOT), "--config", f"tenant={TENANT}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=home, timeout=180)
    if done.returncode != 0:
        sys.exit(f"the plugin did not install: {done.stdout}{done.stderr}")


def project(root: Path, scenario: Scenario) -> tuple[Path, Path]:
    """The scenario's project folder (its files, a git repository with one commit) and its shim folder."""
    folder = root / "projects" / scenario.id
    for rel, text in {**PROJECT_FILES, **scenario.files}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if text.startswith("#!"):
            path.chmod(0o755)
    quiet = {"capture_output": True, "cwd": folder, "check": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **quiet)
    subprocess.run(["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "add", "-A"], **quiet)
    subprocess.run(
        ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "Start"], **quiet
    )
    shims = root / "shims" / scenario.id
    shims.mkdir(parents=True)
    (shims / "_shim").write_text(SHIM, encoding="utf-8")
    (shims / "_shim").chmod(0o755)
    (shims / "table.json").write_text(json.dumps(scenario.outputs), encoding="utf-8")
    for name in {key.split()[0] for key in scenario.outputs}:
        (shims / name).symlink_to(shims / "_shim")
    return folder, shims


def absolute(call: Call, folder: Path) -> ModelCall:
    tool_input = dict(call.input)
    if "file_path" in tool_input:
        tool_input["file_path"] = str(folder / str(tool_input["file_path"]))
    return ModelCall(call.tool, tool_input)


def message_texts(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if part.get("type") == "text":
                parts.append(part["text"])
            elif part.get("type") == "tool_result":
                inner = part.get("content")
                parts.extend([inner] if isinstance(inner, str) else [p.get("text", "") for p in inner or []])
    return "\n".join(parts)


def request_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    head = system if isinstance(system, str) else "\n".join(p.get("text", "") for p in system or [])
    return head + "\n" + message_texts(body["messages"])


def channel(text: str, marker: str) -> str:
    """Which hook's context holds the first `marker` in `text`: the nearest context header (or
    stop) before it."""
    at = text.find(marker)
    found = [(m.start(), m.group(1)) for m in HOOK_CONTEXT.finditer(text) if m.start() < at]
    found += [(m.start(), "PreToolUse stop") for m in HOOK_STOP.finditer(text) if m.start() < at]
    return max(found)[1] if found else "other"


def tool_injection(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """True when `after` (the request following one tool call) carries a memory a tool hook injected."""
    new = message_texts(after["messages"][len(before["messages"]) :])
    if (denied(after) or "").startswith("[MEMORY]"):
        return True
    for match in HOOK_CONTEXT.finditer(new):
        if match.group(1) in TOOL_EVENTS:
            following = new[match.end() :]
            nxt = HOOK_CONTEXT.search(following)
            if "[MEMORY]" in (following[: nxt.start()] if nxt else following):
                return True
    return False


@dataclass
class Outcome:
    scenario: str
    kind: str
    in_time: bool
    late: bool
    via: str
    unrelated_injected: bool
    turns: int
    seconds: float
    error: str = ""
    #: The relevant call was stopped with the scenario's memory (then made again).
    stopped: bool = False
    #: Every other stop: "the call (its script step): marker in the reason or not".
    other_stops: list[str] | None = None


def run_one(
    claude: str, env: dict[str, str], root: Path, scenario: Scenario, unrelated: Call, debug: Path | None
) -> Outcome:
    folder, shims = project(root, scenario)
    script = [absolute(unrelated, folder), *(absolute(c, folder) for c in scenario.calls)]
    relevant = 1 + scenario.relevant
    run_env = {**env, "PATH": f"{shims}{os.pathsep}{env['PATH']}", "SHIM_TABLE": str(shims / "table.json")}
    command = [claude, "-p", scenario.prompt, "--allowedTools", "Read,Edit,Write,Bash"]
    if debug is not None:
        command += ["--debug-file", str(debug / f"{scenario.id}.log")]
    started = time.monotonic()
    error = ""
    with FakeModel(script, retry_stopped=True) as fake:
        run_env["ANTHROPIC_BASE_URL"] = fake.url
        try:
            done = subprocess.run(
                command, env=run_env, cwd=folder, capture_output=True, text=True, timeout=SESSION_SECONDS
            )
            if done.returncode != 0:
                error = f"exit {done.returncode}: {(done.stdout + done.stderr)[-300:]}"
        except subprocess.TimeoutExpired:
            error = "timed out"
        turns = list(fake.turns)
    if debug is not None:
        bodies = [t.body for t in turns]
        (debug / f"{scenario.id}.requests.json").write_text(json.dumps(bodies, ensure_ascii=False), encoding="utf-8")
    seconds = time.monotonic() - started
    ran = [i for i, t in enumerate(turns) if t.step == relevant]  # the last one answered the call that ran
    if not ran or ran[-1] + 1 >= len(turns):
        return Outcome(
            scenario.id, scenario.kind, False, False, "-", False, len(turns), seconds, error or "too few turns"
        )
    at_call = request_text(turns[ran[-1]].body)
    after = request_text(turns[ran[-1] + 1].body)
    in_time = scenario.marker in at_call
    late = not in_time and scenario.marker in after
    via = channel(at_call, scenario.marker) if in_time else channel(after, scenario.marker) if late else "-"
    unrelated = any(tool_injection(turns[i].body, turns[i + 1].body) for i, t in enumerate(turns[:-1]) if t.step == 0)
    stopped, others = stops(turns, scenario, script, relevant)
    return Outcome(
        scenario.id, scenario.kind, in_time, late, via, unrelated, len(turns), seconds, error, stopped, others
    )


def stops(turns: list[Turn], scenario: Scenario, script: list[ModelCall], relevant: int) -> tuple[bool, list[str]]:
    """(the relevant call was stopped with the scenario's memory, every other stop described)."""
    stopped, others = False, []
    for i, turn in enumerate(turns[:-1]):
        reason = denied(turns[i + 1].body)
        if turn.step is None or reason is None or not reason.startswith("[MEMORY]"):
            continue
        has_marker = scenario.marker in reason
        if turn.step == relevant and has_marker:
            stopped = True
            continue
        call = script[turn.step]
        what = str(call.input.get("command") or f"{call.name} {call.input.get('file_path', '')}")
        which = "unrelated call" if turn.step == 0 else "relevant call" if turn.step == relevant else "other call"
        others.append(f"{which} `{what}`: {'the scenario' if has_marker else 'not the scenario'}'s memory")
    return stopped, others


def table(outcomes: list[Outcome]) -> str:
    lines = [
        "| scenario | kind | in time | late | via | stopped | unrelated call injected | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        lines.append(
            f"| {o.scenario} | {o.kind} | {'yes' if o.in_time else 'no'} | {'yes' if o.late else ''} | {o.via} | "
            f"{'yes' if o.stopped else ''} | {'INJECTED' if o.unrelated_injected else 'no'} | {o.seconds:.1f} |"
            + (f" {o.error}" if o.error else "")
        )
    n = len(outcomes)
    lines += ["", "| kind | scenarios | in time | late | missed |", "|---|---|---|---|---|"]
    for kind in ("edit", "write", "command", "failure", "all"):
        chosen = [o for o in outcomes if kind in ("all", o.kind)]
        if not chosen:
            continue
        hit = sum(o.in_time for o in chosen)
        late = sum(o.late for o in chosen)
        lines.append(
            f"| {kind} | {len(chosen)} | {hit} ({100 * hit / len(chosen):.0f} %) | {late} | {len(chosen) - hit - late} |"
        )
    vias: dict[str, int] = {}
    for o in outcomes:
        if o.in_time:
            vias[o.via] = vias.get(o.via, 0) + 1
    lines += ["", "In time, by the hook that brought it: " + ", ".join(f"{k} {v}" for k, v in sorted(vias.items()))]
    lines.append(f"Unrelated calls with a memory injected: {sum(o.unrelated_injected for o in outcomes)} of {n}.")
    lines.append(f"Relevant calls stopped with their memory: {sum(o.stopped for o in outcomes)} of {n}.")
    other = [f"- {o.scenario}: {s}" for o in outcomes for s in o.other_stops or []]
    lines.append(f"Other stops (to read: a stop on a call its memory does not concern is false): {len(other)}")
    return "\n".join([*lines, *other])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", default=str(PINNED), help="Claude Code's CLI (default: the pinned one)")
    parser.add_argument("--only", nargs="*", default=None, help="scenario ids to run")
    parser.add_argument("--out", default=None, help="write the outcomes as JSON here")
    parser.add_argument(
        "--debug", default=None, help="a folder for Claude Code's debug log and the model's requests of each session"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    if not Path(args.claude).exists() and not shutil.which(args.claude):
        sys.exit(f"Claude Code's CLI is missing at {args.claude}: .ci/run installs the pinned one")
    version = subprocess.run([args.claude, "--version"], capture_output=True, text=True).stdout.strip()
    root = Path(tempfile.mkdtemp(prefix="tool-time-"))
    home = root / "home"
    home.mkdir()
    env = base_env(home)
    debug = Path(args.debug) if args.debug else None
    if debug is not None:
        debug.mkdir(parents=True, exist_ok=True)
    try:
        install(args.claude, env, home)
        started = time.monotonic()
        stored = asyncio.run(fill(env))
        print(f"Claude Code {version}; {stored} memories stored in {time.monotonic() - started:.0f} s", flush=True)
        outcomes = []
        for index, scenario in enumerate(SCENARIOS):
            if args.only and scenario.id not in args.only:
                continue
            outcome = run_one(args.claude, env, root, scenario, UNRELATED[index], debug)
            print(
                f"{scenario.id}: in time {outcome.in_time}, late {outcome.late}, via {outcome.via}, "
                f"unrelated injected {outcome.unrelated_injected}, {outcome.seconds:.1f} s {outcome.error}",
                flush=True,
            )
            outcomes.append(outcome)
        print()
        print(table(outcomes))
        if args.out:
            Path(args.out).write_text(
                json.dumps({"claude_code": version, "outcomes": [o.__dict__ for o in outcomes]}, indent=1),
                encoding="utf-8",
            )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
