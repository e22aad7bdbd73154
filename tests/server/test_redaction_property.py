"""A property, over random contents and random keys: whatever an embedding server quotes back
(the text whole, cut short, upper-cased, whitespace-folded, line by line, inside the request
JSON, next to the key), no piece of 8 or more characters of the content and no piece of 4 or
more of the key survives into the tool result or the `tool_failed` log line.

The keys include `sk-proj-…` ones and keys that share pieces with the content: masking the key
first used to cut an echo of such content into fragments too short to be recognised, which
then survived (`short ECHOSHORT` became `short ***SHORT`)."""

from __future__ import annotations

import asyncio
import io
import json
import string

import pytest
from aiohttp import web
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.embedders.openai import OpenAIEmbedder
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import Clock, make_env
from tests.support.standins import OpenAIStandIn

TEXT_PIECE = 8
KEY_PIECE = 4
PREFIX = "Error: the memory store could not complete this request — "
#: What the embedder says before the server's own words (itself scrubbed when content shares it).
FRAMING = "the embedding service answered 400: "
#: Text without the markers' own characters, so a marker next to a surviving character can
#: never spell a piece of the input by accident.
ALPHABET = string.ascii_letters + string.digits + " \n\t.,:;'\"/()#-_éü日本"
STYLES = ("whole", "cut", "upper", "folded", "lines", "request", "with_key", "key_first")


class Quoting(OpenAIStandIn):
    """Answers 400, quoting its input (and perhaps the key) the way `style` says."""

    style = "whole"
    cut = 20

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        text = body["input"] if isinstance(body["input"], str) else body["input"][0]
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        quoted = {
            "whole": f"input too long: {text}",
            "cut": f"input too long: {text[: self.cut]}…",
            "upper": f"VALIDATION FAILED FOR {text.upper()}",
            "folded": f"rejected <{' '.join(text.split())}> (policy)",
            "lines": "bad lines: " + " | ".join(text.splitlines()),
            "request": f"Internal error while processing {json.dumps(body)}",
            "with_key": f"key {key} may not embed {text}",
            "key_first": f"{key[:6]} {text} {key[-6:]}",
        }[self.style]
        answer = json.dumps({"error": {"message": quoted, "type": "invalid_request"}})
        return web.Response(status=400, text=answer, content_type="application/json")


def windows(value: str, size: int) -> set[str]:
    forms = {value, " ".join(value.split()), json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return {form[i : i + size].lower() for form in forms for i in range(len(form) - size + 1)}


def survivors(output: str, value: str, size: int) -> list[str]:
    """Pieces of `value` found in `output`, except those that are our own wording (content may
    happen to contain "the memory store"; finding it in our sentence is no leak)."""
    low = output.lower()
    ours = (PREFIX + FRAMING).lower()
    return sorted(piece for piece in windows(value, size) if piece.strip() and piece in low and piece not in ours)


async def remembered(content: str, key: str, style: str, cut: int) -> tuple[str, str]:
    """The tool result's text and the tool_failed line's message for one remember."""
    server = Quoting(dim=8)
    server.style, server.cut = style, cut
    url = await server.start()
    embedder = OpenAIEmbedder(f"{url}/v1", key, model="m", dim=8, max_attempts=1)
    env = make_env(Clock(), embedder=embedder)
    out, err = io.StringIO(), io.StringIO()
    try:
        result = await ToolLayer(env.service, JsonLog(out, err)).call("remember", {"content": content}, Caller("acme"))
    finally:
        await embedder.close()
        await server.stop()
    assert result.is_error
    failed = [json.loads(line) for line in err.getvalue().splitlines()]
    assert [line["event"] for line in failed] == ["tool_failed"]
    return result.text, failed[0]["message"]


contents = st.text(alphabet=ALPHABET, min_size=8, max_size=300).filter(lambda s: s.strip())


@st.composite
def keys(draw: st.DrawFn, content: str) -> str:
    kind = draw(st.sampled_from(["sk-proj", "random", "shares the content"]))
    tail = draw(st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=16, max_size=48))
    if kind == "sk-proj":
        return "sk-proj-" + tail
    if kind == "random":
        return tail
    start = draw(st.integers(0, max(0, len(content) - 4)))
    shared = "".join(ch for ch in content[start : start + draw(st.integers(4, 12))] if ch.isalnum())
    return shared + tail


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, str, int]:
    content = draw(contents)
    return content, draw(keys(content)), draw(st.sampled_from(STYLES)), draw(st.integers(8, 60))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
@example(("short ECHOSHORT and a proj plan", "ECHO-sk-proj-abcdefghijklmnop", "whole", 20))
@example(("line one here\nline two here\nline three\n", "sk-proj-0123456789abcdef", "lines", 20))
@example(("EMBEDDIN", "sk-proj-0000000000000000", "whole", 8))  # content sharing our own wording
def test_no_piece_of_the_content_or_the_key_survives_an_echoing_embedding_server(
    case: tuple[str, str, str, int],
) -> None:
    content, key, style, cut = case
    text, message = asyncio.run(remembered(content, key, style, cut))
    assert text.startswith(PREFIX)
    for output in (text, message):
        assert survivors(output, content, TEXT_PIECE) == [], (style, output)
        assert survivors(output, key, KEY_PIECE) == [], (style, output)


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ("first line of the note\n4711\nlast line of the note", ["4711"]),
        ("deploy window\nab12\nQz\nnotes é日本 here", ["ab12", "Qz", "00e9", "65e5", "672c"]),
        ('a "quoted" word\n\tpin 99\nend of the note', ["pin 99", "quoted"]),
    ],
)
def test_no_short_fragment_of_a_twice_escaped_multi_line_echo_survives(content: str, fragments: list[str]) -> None:
    # Issue 36, defect 12: a server that quotes the request JSON inside its own JSON error body
    # escapes the content twice; the lines under 8 characters between the escaped line breaks
    # were not recognised as pieces of it and reached the tool result and the tool_failed line.
    text, message = asyncio.run(remembered(content, "sk-proj-0123456789abcdef", "request", 20))
    for output in (text, message):
        assert [f for f in fragments if f.lower() in output.lower()] == [], output
