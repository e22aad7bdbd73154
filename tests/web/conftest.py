"""The web view over a real store (an SQLite file) with the fake embedder,
reached through an HTTP client: the local command's one-time token, or serve-http's key."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.web.access import Access
from mcp_memory.web.app import View, build_ui, local_caller
from tests.conftest import Env, open_env

ORIGIN = "http://testserver"
ACME = Caller("acme")
GLOBEX = Caller("globex")


@pytest.fixture
async def env(clock, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    """The view over an SQLite file, the store `mcp-memory ui` opens by default. The view reads
    only the service, so one real backend is enough here; every backend's own behaviour under the
    service is the smoke suite's (tests/stores/test_smoke.py)."""
    opened = await open_env("sqlite", clock, request)
    yield opened
    await opened.service.close()


@dataclass
class Browser:
    """An HTTP client logged in to the view, and the log the view writes."""

    client: httpx.AsyncClient
    view: View
    log: io.StringIO

    async def get(self, path: str, **kw) -> httpx.Response:
        return await self.client.get(path, **kw)

    async def csrf(self, path: str = "/") -> str:
        page = await self.client.get(path)
        match = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert match, page.text
        return match.group(1)

    async def post(self, path: str, data: dict | None = None, *, csrf: bool = True, origin: str = ORIGIN):
        form = dict(data or {})
        if csrf:
            form["csrf"] = await self.csrf()
        return await self.client.post(path, data=form, headers={"origin": origin})


def make_view(env: Env, caller: Caller = ACME, *, operator: bool = False) -> tuple[View, io.StringIO]:
    out = io.StringIO()
    access = Access.local()
    log = JsonLog(out=out, err=out)
    view = View(
        env.service, access, log, local_caller(access, caller, operator), about=["storage: test"], operator=operator
    )
    return view, out


async def logged_in(view: View, out: io.StringIO) -> Browser:
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_ui(view)), base_url=ORIGIN)
    answer = await client.get(f"/login?token={view.access.token}")
    assert answer.status_code == 200 and "Logged in" in answer.text, answer.text
    return Browser(client, view, out)


@pytest.fixture
async def browser(env: Env) -> AsyncIterator[Browser]:
    view, out = make_view(env)
    b = await logged_in(view, out)
    yield b
    await b.client.aclose()
