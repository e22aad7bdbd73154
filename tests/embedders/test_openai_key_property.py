"""The OpenAI-compatible API key never shows, whole or in pieces of 4 characters
or more, when the embedding server quotes it back: generated keys (printable
ASCII, the only kind configuration accepts, but `*`, the mask), echoed whole,
cut the way OpenAI shows a wrong key (`sk-ab****cdef`), JSON-escaped inside a
JSON body, or in a header-shaped line. Checked: the embedding error, the tool
result and log lines of a failed recall, a refused key's configuration error and
the settings' repr."""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest
from aiohttp import web
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from mcp_memory.config import Settings
from mcp_memory.core.errors import ConfigError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.embedders.openai import OpenAIEmbedder
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import Clock, make_env

PIECE = 4
KEYS = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="*"), min_size=PIECE, max_size=40
)
ECHOES = {
    "whole": lambda key: json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}),
    "cut": lambda key: json.dumps({"error": {"message": f"Incorrect API key provided: {key[:6]}****{key[-4:]}"}}),
    "escaped": lambda key: json.dumps({"detail": json.dumps({"headers": {"authorization": f"Bearer {key}"}})}),
    "header": lambda key: f"401 Unauthorized\nAuthorization: Bearer {key}\n",
}
VARIABLES = {"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1"}
VARIABLES_NO_KEY = {**VARIABLES, "EMBEDDING_API_KEY": "~"}
OUR_WORDS = (
    '{"level":"info","event":"tool_call","tenant":"acme","tool":"recall","ms":0,"ok":false,"inConversation":false}'
    '{"level":"error","event":"tool_failed","message":"'
    "OpenAIEmbedder(url='http://127.0.0.1:/v1/embeddings', model='text-embedding-3-small', dim=8)"
)
OUR_WORDS += "Error: the memory store could not complete this request — the embedding service answered 401: "


def leaks(output: str, key: str) -> set[str]:
    low = output.lower()
    return {key[i : i + PIECE].lower() for i in range(len(key) - PIECE + 1) if key[i : i + PIECE].lower() in low}


async def failed_recall(key: str, style: str) -> list[str]:
    async def embeddings(request: web.Request) -> web.Response:
        sent = request.headers["Authorization"].removeprefix("Bearer ")
        return web.Response(status=401, text=ECHOES[style](sent), content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/embeddings", embeddings)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", key, "text-embedding-3-small", 8)
    out, err = io.StringIO(), io.StringIO()
    env = make_env(Clock(), embedder=embedder)
    try:
        result = await ToolLayer(env.service, JsonLog(out, err)).call("recall", {"query": "deploys"}, Caller("acme"))
    finally:
        await embedder.close()
        await runner.cleanup()
    assert result.is_error and "answered 401" in result.text
    logged = re.sub(r'"ms":[0-9]+', '"ms":0', out.getvalue() + err.getvalue())  # timing is not the key's
    return [result.text, logged, repr(embedder)]


@settings(max_examples=80, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(key=KEYS, style=st.sampled_from(sorted(ECHOES)))
@example(key="sk-proj-0123456789abcdef", style="cut")
@example(key='sk-"quoted"\\slash', style="escaped")
def test_no_piece_of_the_api_key_reaches_an_error_a_log_or_a_boot_line(key: str, style: str) -> None:
    assume(key.strip() == key and key)  # configuration trims the value
    seen = asyncio.run(failed_recall(key, style))
    with pytest.raises(ConfigError) as refused:  # a key with a character no header can carry
        Settings.from_env({**VARIABLES, "EMBEDDING_API_KEY": key + "\x7f"})
    seen += [str(refused.value), repr(Settings.from_env({**VARIABLES, "EMBEDDING_API_KEY": key}))]
    # what any key would show: our words, the server's, the settings' other values
    public = " ".join([OUR_WORDS, ECHOES[style](""), str(refused.value), repr(Settings.from_env(VARIABLES_NO_KEY))])
    assume(not leaks(public, key))  # a piece that is also a word of the message is not a leak
    for line in seen:
        assert not leaks(line, key), (style, line)
