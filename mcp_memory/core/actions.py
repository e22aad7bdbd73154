"""What an agent's pending tool call concerns: the files it reads or edits, the command it runs,
the error a failed command gave, and which memories say they apply to it (docs/hooks.md#at-the-moment-of-action).

Pure: no store, no model. The tool hooks (PreToolUse, and PostToolUseFailure for a failed
command) ask recall with `query_of(action)`, look up the memories tagged for the action's files
(`path_tags`), and inject what `declared` or `named` says concerns it, or what recall labels HIGH.

A memory says which files it applies to with `path:` tags, no schema change on any backend:

- `path:src/billing/refund.py` — that file, wherever the project is (a path ends the file's path:
  `path:refund.py` and `path:billing/refund.py` match it too);
- `path:db/migrations/` — every file under a folder of that name (the trailing slash makes it a folder);
- `path:*.proto` — every file with that extension.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from mcp_memory.core.arguments import TAG_MAX_BYTES
from mcp_memory.core.object_keys import RULE_TAG

#: The tag prefix that says which files a memory applies to.
PATH_TAG = "path:"
#: The tools whose calls a tool hook reads, by what they touch (Claude Code's names).
FILE_TOOLS: Mapping[str, str] = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
SHELL_TOOLS = ("Bash",)
#: The tools a tool hook listens to unless MEMORY_HOOK_TOOLS says otherwise: file reads and edits, and the shell.
DEFAULT_TOOLS = (*FILE_TOOLS, *SHELL_TOOLS)
#: The most of a command, and of a failed command's error text, a question reads.
COMMAND_CHARS = 600
ERROR_CHARS = 1200
#: The tools whose call a memory may stop before it runs (docs/hooks.md#stopped-before-it-runs): the
#: shell and the edits. A read changes nothing, and its context arrives before any edit anyway.
STOPPING_TOOLS = ("Bash", "Edit", "MultiEdit", "Write", "NotebookEdit")
#: A path deeper than this is read by its last components only.
PATH_DEPTH_MAX = 12
#: At most this many `path:` tags are looked up for one file.
PATH_TAGS_MAX = 40


@dataclass(frozen=True, slots=True)
class Action:
    """One pending (or just failed) tool call, as far as memory is concerned."""

    #: "file" (a read or an edit), "command" (a shell command) or "failure" (a command that failed).
    kind: str
    tool: str
    #: The files it touches, relative to the project folder when inside it ("/"-separated).
    paths: tuple[str, ...] = ()
    command: str = ""
    error: str = ""


def action_of(event: str, tool: str, tool_input: object, cwd: object = "", error: object = "") -> Action | None:
    """The action of a PreToolUse or PostToolUseFailure payload's fields; None when there is
    nothing to go on (an unknown tool, no path, an empty command)."""
    if not isinstance(tool, str) or not isinstance(tool_input, Mapping):
        return None
    folder = cwd if isinstance(cwd, str) else ""
    if tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool])
        if not isinstance(path, str) or not path.strip():
            return None
        return Action("file", tool, (relative(path, folder),))
    if tool in SHELL_TOOLS:
        command = tool_input.get("command")
        if not isinstance(command, str) or not command.strip():
            return None
        command = command.strip()[:COMMAND_CHARS]
        files = tuple(relative(p, folder) for p in command_files(command))
        if event == "PostToolUseFailure":
            said = error.strip()[:ERROR_CHARS] if isinstance(error, str) else ""
            return Action("failure", tool, files, command, said)
        return Action("command", tool, files, command)
    return None


def relative(path: str, cwd: str) -> str:
    """`path` with "/" separators, relative to `cwd` when it is inside it, its last components at most."""
    text = path.strip().replace("\\", "/")
    folder = cwd.strip().replace("\\", "/").rstrip("/")
    if folder and text.startswith(folder + "/"):
        text = text[len(folder) + 1 :]
    parts = [p for p in text.split("/") if p not in ("", ".")]
    return "/".join(parts[-PATH_DEPTH_MAX:])


_FILE_LIKE = re.compile(r"^[\w.@~+-]*(/[\w.@~+-]+)+/?$|^[\w@~+-][\w.@~+-]*\.[A-Za-z0-9]{1,8}$", re.UNICODE)


def command_files(command: str) -> list[str]:
    """The arguments of a command that look like files (a path with a "/", or a name with an
    extension), its program included when it is one (./scripts/reindex.sh)."""
    try:
        words = shlex.split(command, comments=False, posix=True)
    except ValueError:
        words = command.split()
    found = []
    for word in words:
        if word.startswith("-") or "=" in word.split("/")[0] or "://" in word or "@" in word.split("/")[0]:
            continue
        if _FILE_LIKE.match(word) and not word.replace(".", "").isdigit():
            found.append(word.rstrip("/") or word)
    return found[:8]


def program(command: str) -> tuple[str, str]:
    """(the command's program name, its first argument when that is a subcommand word, else "")."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):  # VAR=value before the program
        words.pop(0)
    if not words:
        return "", ""
    name = PurePosixPath(words[0]).name
    sub = words[1] if len(words) > 1 and re.fullmatch(r"[a-z][a-z0-9-]{1,30}", words[1]) else ""
    return name, sub


def query_of(action: Action) -> str:
    """What recall is asked for the action: the files, the command, and a failure's error text."""
    if action.kind == "file":
        return " ".join(action.paths)
    if action.kind == "failure":
        return f"{action.command}\n{action.error}".strip()
    return action.command


def path_tags(path: str) -> list[str]:
    """Every `path:` tag that would apply to the file `path` (relative, "/"-separated): its
    endings, the folders above it (each ending, with a trailing slash), and its extension."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return []
    tags: list[str] = []
    name = parts[-1]
    for start in range(len(parts) - 1, -1, -1):
        tags.append(PATH_TAG + "/".join(parts[start:]))
    folders = parts[:-1]
    for end in range(len(folders), 0, -1):
        for start in range(end - 1, -1, -1):
            tags.append(PATH_TAG + "/".join(folders[start:end]) + "/")
    suffix = PurePosixPath(name).suffix
    if suffix and suffix != name:
        tags.append(f"{PATH_TAG}*{suffix}")
    unique = [t for t in dict.fromkeys(tags) if len(t.encode("utf-8")) <= TAG_MAX_BYTES]  # longer is never stored
    if len(unique) > PATH_TAGS_MAX:  # the file's endings and the extension first, then the nearest folders
        unique = unique[: PATH_TAGS_MAX - 1] + [unique[-1]] if suffix else unique[:PATH_TAGS_MAX]
    return unique


def applies(tag: str, path: str) -> bool:
    """True when the `path:` tag `tag` applies to the file `path` (relative, "/"-separated)."""
    if not tag.startswith(PATH_TAG):
        return False
    wanted = tag[len(PATH_TAG) :].strip().replace("\\", "/").removeprefix("./")
    if not wanted:
        return False
    parts = [p for p in path.split("/") if p]
    if wanted.startswith("*.") and "/" not in wanted:
        return bool(parts) and parts[-1].endswith(wanted[1:]) and parts[-1] != wanted[1:]
    want = [p for p in wanted.split("/") if p]
    if wanted.endswith("/"):  # a folder: its components are consecutive folders of the path
        folders = parts[:-1]
        return any(folders[i : i + len(want)] == want for i in range(len(folders) - len(want) + 1))
    return len(want) <= len(parts) and parts[-len(want) :] == want


def declared(tags: Sequence[str], action: Action) -> bool:
    """True when one of a memory's `path:` tags applies to one of the action's files."""
    return any(applies(tag, path) for tag in tags for path in action.paths)


def _mentions(content: str, name: str) -> bool:
    """`name` in `content` as a whole word: not inside a longer name or path segment, nor the start
    of a deeper path (`web/src` is not named by `web/src/components`, a folder below it)."""
    return _mention(name).search(content) is not None


def _mention(name: str) -> re.Pattern[str]:
    """The pattern `_mentions` searches for `name`."""
    return re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w-]|\.\w|/[\w.])")


def _identifier(word: str) -> bool:
    """A name no one writes in prose by chance: it has a case change inside, a digit, "_" or "-"."""
    return bool(re.search(r"[a-z][A-Z]|[0-9_-]", word)) or word[:1].isupper() and not word.isalpha()


#: The words of an error text: letters, digits, "_", and "." or "-" inside (a host, a version, a setting).
_ERROR_WORD = re.compile(r"[^\W_][\w.-]*[^\W_]|_\w+", re.UNICODE)
#: At most this many distinct words of an error text are looked for in a memory.
ERROR_WORDS_MAX = 40


def error_words(error: str) -> list[str]:
    """The words of a failed command's error text that name something in particular: 4 characters
    or more, written like an identifier (a digit, "_", "-", a capital inside, or dotted parts), as
    a port, a host, a setting or an error's class is (`5433`, `harbor-nexus`, `psycopg.OperationalError`)."""
    found: dict[str, None] = {}
    for word in _ERROR_WORD.findall(error):
        word = word.rstrip(".")
        if len(word) >= 4 and (_identifier(word) or re.search(r"\w\.\w", word)):
            found.setdefault(word, None)
            if len(found) >= ERROR_WORDS_MAX:
                break
    return list(found)


def names(content: str, action: Action) -> bool:
    """True when a memory's text names what the action touches: one of its files (by a path
    ending of two components or more, by its name when that has an extension or is written like
    an identifier, or a folder above it by two components or more), its program with its
    subcommand (`npm publish`, `alembic downgrade`), or, for a failure, one of the particular
    words of its error text (`error_words`: the port, host or setting the memory explains)."""
    return naming(action)(content)


def naming(action: Action) -> Callable[[str], bool]:
    """`names` for one action, its names worked out once: ActionResult.chosen asks it of every
    candidate a tool question found (its command split once, not once a memory)."""
    wanted: list[str] = []  # looked for in the text as it is
    for path in action.paths:
        parts = [p for p in path.split("/") if p]
        if not parts:
            continue
        name = parts[-1]
        stem = PurePosixPath(name).stem
        if "." in name.strip(".") or name[:1].isupper() and len(name) >= 4:
            wanted.append(name)
        if stem != name and len(stem) >= 6 and _identifier(stem):
            wanted.append(stem)
        wanted.extend("/".join(parts[start:]) for start in range(len(parts) - 2, -1, -1))  # endings of two or more
        folders = parts[:-1]
        for end in range(len(folders), 1, -1):
            wanted.extend("/".join(folders[start:end]) for start in range(end - 2, -1, -1))
    if action.error:
        wanted.extend(error_words(action.error))
    patterns = [_mention(name) for name in dict.fromkeys(wanted)]
    spoken = None  # the program and its subcommand, looked for in the text in lower case
    if action.command:
        name, sub = program(action.command)
        if name and sub:
            spoken = _mention(f"{name} {sub}".lower())

    def named(content: str) -> bool:
        if any(pattern.search(content) is not None for pattern in patterns):
            return True
        return spoken is not None and spoken.search(content.lower()) is not None

    return named


#: The words that make a memory a warning about what an agent does (docs/hooks.md#stopped-before-it-runs),
#: by the four kinds of rule language: a prohibition, an obligation, a caution, an order of steps.
#: English as whole words (any case); Korean as the endings and adverbs those are written with.
_WARNING_EN = re.compile(
    r"\b(?:never|do\s+not|don't|must(?:\s+not|n't)?|should\s+not|shouldn't|not\s+(?:allowed|safe)|unsafe"
    r"|forbidden|prohibited|avoid|always|ha(?:ve|s)\s+to|required|make\s+sure|be\s+sure"
    r"|careful|caution|warning|danger(?:ous)?|destructive|irreversible|first|before)\b",
    re.IGNORECASE,
)
_WARNING_KO = re.compile(r"절대|하지\s*말|말\s*것|말아야|금지|안\s*(?:된다|됨)|반드시|꼭|주의|먼저|(?<!이)전에|해야")


def warns(content: str) -> bool:
    """True when a memory's text reads as a rule about acting: it forbids (never, do not, must
    not), requires (must, always, make sure), cautions (dangerous, irreversible) or orders steps
    (first, before), in English or Korean (절대, 하지 말 것, 반드시, 주의, 먼저)."""
    return _WARNING_EN.search(content) is not None or _WARNING_KO.search(content) is not None


def stoppable(action: Action) -> bool:
    """True for a call a memory may stop before it runs: a shell command or an edit, not a read
    (STOPPING_TOOLS), and not a failure (that command has run)."""
    return action.kind in ("command", "file") and action.tool in STOPPING_TOOLS


def stops(content: str, tags: Sequence[str], setting: str, action: Action) -> bool:
    """True when a memory chosen for a stoppable call stops it, under MEMORY_HOOK_STOP's `setting`:
    it names this very call (`precise`), and under `rules` it is tagged rule, under `warnings`
    (the default) it is tagged rule or `warns`; under `off`, never."""
    if setting == "off" or not (RULE_TAG in tags or setting == "warnings" and warns(content)):
        return False
    return precise(content, tags, action)


#: What a word of a command or a memory is split into: a path's folders, a user and a host, an
#: option and its value, a hyphenated name's parts ("redis-cli": redis, cli); a host or a file
#: name keeps its dots.
_PARTS = re.compile(r"[/@:=-]+")
_TOKEN = re.compile(r"[\w.@:/=+-]+", re.UNICODE)


def _parts(word: str) -> set[str]:
    """A word, lower case, and its parts: those of two characters or more, holding a letter."""
    word = word.strip(".,;:!?'\"`()[]{}").lower()
    found = {word, *_PARTS.split(word)}
    return {w.strip(".") for w in found if len(w.strip(".")) >= 2 and re.search(r"[^\W\d_]", w)}


def _command_arguments(command: str) -> list[str]:
    """The command's words from its program on (VAR=value before it left out), option dashes dropped."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    return [w.lstrip("-") for w in words]


def precise(content: str, tags: Sequence[str], action: Action) -> bool:
    """True when a memory names this very call, not only its subject (a stop on a call the memory
    does not concern is a false stop: bench/RESULTS.md, "Stopped before it runs"). An edit: the
    memory is declared for its file or names it (`declared`, `names`). A command: the memory names
    the script it runs by its path, or two of its words at least, each argument counted once (its
    program and what it does or acts on: `git push --force` by "force-push", `redis-cli FLUSHALL`
    by "Redis" and "FLUSHALL"); `kubectl get` is not named by a memory about deleting with kubectl,
    nor `cat requirements.in` by one that names only the file."""
    if action.kind == "file":
        return declared(tags, action) or names(content, action)
    arguments = _command_arguments(action.command)
    if not arguments:
        return False
    script = arguments[0].removeprefix("./")
    if "/" in script and _mentions(content, script):
        return True
    words: set[str] = set()
    for token in _TOKEN.findall(content):
        words |= _parts(token)
    return sum(1 for argument in arguments if _parts(argument) & words) >= 2
