"""The two ways to open the web view (docs/web.md): serve-http's /ui behind the static key, and
`mcp-memory ui` on 127.0.0.1 behind a one-time token (a real process, stopped with Ctrl-C)."""

from __future__ import annotations

import html
import io
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
import pytest

from mcp_memory.config import Settings
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.wrong_keys import WrongKeys
from mcp_memory.server.http.app import HttpApp
from mcp_memory.server.protocol.tools import ToolLayer
from mcp_memory.server.runners.http import web_view
from tests.conftest import ROOT, Env
from tests.server.test_stdio import server_env
from tests.web.conftest import ACME, GLOBEX

KEY = "s3cret-key-for-the-view"
OAUTH = {
    "MCP_OAUTH_ISSUER": "https://issuer.example",
    "MCP_OAUTH_JWKS_URL": "https://issuer.example/jwks",
    "MCP_RESOURCE_URL": "https://memory.example/mcp",
}


def settings(**env: str) -> Settings:
    return Settings.from_env({"HOME": "/home/ada", "HOSTNAME": "pod-1", "EMBEDDING_PROVIDER": "fake", **env})


def test_ui_stays_off_unless_asked_and_says_why_when_it_cannot_log_anyone_in(env: Env) -> None:
    log = JsonLog(out=io.StringIO())
    assert web_view(settings(MCP_API_KEY=KEY), env.service, log) == (None, None)
    ui, line = web_view(settings(UI_ENABLED="1", **OAUTH), env.service, log)
    assert ui is None and line == (
        "ui: off — UI_ENABLED is set, but the web view cannot log in with OAuth tokens; "
        "set MCP_API_KEY as well to log in with the static key"
    )
    ui, line = web_view(settings(UI_ENABLED="1"), env.service, log)
    assert ui is None and line == "ui: off — UI_ENABLED needs MCP_API_KEY: the view's login asks for that key"
    ui, line = web_view(settings(UI_ENABLED="1", MCP_API_KEY=KEY, **OAUTH), env.service, log)
    assert ui is not None and line.startswith("ui: /ui (log in with MCP_API_KEY")


def mounted(env: Env, base_url: str = "http://memory.test", **extra: str) -> httpx.AsyncClient:
    return client_of(app_of(env, **extra), base_url)


def app_of(env: Env, **extra: str) -> HttpApp:
    """serve-http's app with the view, one count of wrong keys shared by both, as run_http wires it."""
    log = JsonLog(out=io.StringIO(), err=io.StringIO())
    wrong_keys = WrongKeys()
    ui, _ = web_view(settings(UI_ENABLED="1", MCP_API_KEY=KEY, **extra), env.service, log, wrong_keys)
    return HttpApp(ToolLayer(env.service, log), log, api_key=KEY, ui=ui, wrong_keys=wrong_keys)


def client_of(app: HttpApp, base_url: str = "http://memory.test", address: str = "127.0.0.1") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 40000)), base_url=base_url)


async def log_in(client: httpx.AsyncClient, key: str = KEY) -> httpx.Response:
    return await client.post("/ui/login", data={"key": key}, headers={"origin": str(client.base_url).rstrip("/")})


async def test_serve_http_mounts_the_view_at_ui_behind_the_static_key(env: Env) -> None:
    mine = (await env.service.remember(ACME, "Deploys go out on Tuesdays")).memory.id
    theirs = (await env.service.remember(GLOBEX, "Globex deploys on Fridays")).memory.id
    async with mounted(env) as client:
        assert (await client.get("/ui")).headers["location"] == "/ui/"
        assert (await client.get("/ui/", headers={"x-memory-tenant": "acme"})).headers["location"] == "/ui/login"
        form = await client.get("/ui/login")
        assert 'type="password"' in form.text and '<label for="key">' in form.text
        wrong = await log_in(client, "guess")
        assert wrong.status_code == 401 and "That is not this server's key." in html.unescape(wrong.text)
        right = await log_in(client)
        assert right.status_code == 303 and right.headers["location"] == "/ui/"
        cookie = right.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie and "secure" not in cookie
        page = await client.get("/ui/", headers={"x-memory-tenant": "acme"})
        assert page.status_code == 200 and mine in page.text and theirs not in page.text
        other = await client.get("/ui/", headers={"x-tenant-id": "globex"})
        assert theirs in other.text and mine not in other.text
        missing = await client.get("/ui/")  # no gateway header: the person chooses (below)
        assert (missing.status_code, missing.headers["location"]) == (303, "/ui/tenants")
        assert (await client.get(f"/ui/m/{theirs}", headers={"x-memory-tenant": "acme"})).status_code == 404
        # the MCP endpoint still refuses every browser origin
        assert (await client.post("/mcp", headers={"origin": "http://memory.test"}, content=b"{}")).status_code == 403


async def csrf_of(client: httpx.AsyncClient, path: str = "/ui/tenants", **headers: str) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', (await client.get(path, headers=headers)).text)
    assert match
    return match.group(1)


async def choose(client: httpx.AsyncClient, tenant: str, **headers: str) -> httpx.Response:
    form = {"tenant": tenant, "csrf": await csrf_of(client, **headers)}
    return await client.post("/ui/tenants", data=form, headers={"origin": "http://memory.test", **headers})


async def test_a_person_without_a_gateway_header_chooses_among_the_stores_tenants_never_a_typed_one(env: Env) -> None:
    """Issue 36: logging in with the key under serve-http landed on "No tenant — x-memory-tenant
    header is required", with no way forward. The key may use every tenant (as at /mcp), so the
    person picks one of the tenants the store lists; a name the store does not list is refused."""
    mine = (await env.service.remember(ACME, "Deploys go out on Tuesdays")).memory.id
    theirs = (await env.service.remember(GLOBEX, "Globex deploys on Fridays")).memory.id
    async with mounted(env) as client:
        await log_in(client)
        assert (await client.get("/ui/stats")).headers["location"] == "/ui/tenants"
        listing = await client.get("/ui/tenants")
        assert listing.status_code == 200 and "no tenant chosen" in listing.text
        assert re.findall(r'name="tenant" value="([^"]+)"', listing.text) == ["acme", "globex"]
        typed = await choose(client, "initech")
        assert typed.status_code == 400 and "Choose one of the tenants listed" in typed.text
        assert (await client.get("/ui/")).headers["location"] == "/ui/tenants"  # nothing was chosen
        assert (await client.post("/ui/tenants", data={"tenant": "globex"})).status_code == 403  # no CSRF
        chosen = await choose(client, "globex")
        assert (chosen.status_code, chosen.headers["location"]) == (303, "/ui/")
        page = await client.get("/ui/")
        assert page.status_code == 200 and theirs in page.text and mine not in page.text
        assert "tenant <strong>globex</strong>" in page.text
        # a gateway's header still decides, whatever was chosen, and then nothing can be chosen
        bound = await client.get("/ui/", headers={"x-memory-tenant": "acme"})
        assert mine in bound.text and theirs not in bound.text
        fixed = await client.get("/ui/tenants", headers={"x-tenant-id": "acme"})
        assert "the header your gateway sends" in fixed.text and 'name="tenant"' not in fixed.text
        assert (await choose(client, "globex", **{"x-tenant-id": "acme"})).status_code == 403


async def test_the_tenant_chosen_ends_with_its_session(env: Env) -> None:
    await env.service.remember(GLOBEX, "Globex deploys on Fridays")
    async with mounted(env) as client:
        await log_in(client)
        await choose(client, "globex")
        choice = client.cookies.get("mcp_memory_ui_tenant")
        assert choice and (await client.get("/ui/")).status_code == 200
        await client.post(
            "/ui/logout", data={"csrf": await csrf_of(client, "/ui/")}, headers={"origin": "http://memory.test"}
        )
        await log_in(client)
        client.cookies.set("mcp_memory_ui_tenant", choice, domain="memory.test", path="/ui")
        assert (await client.get("/ui/")).headers["location"] == "/ui/tenants"  # the old choice is not this session's


async def test_the_tenant_never_comes_from_a_form_field(env: Env) -> None:
    theirs = (await env.service.remember(GLOBEX, "Globex deploys on Fridays")).memory.id
    async with mounted(env) as client:
        await log_in(client)
        page = await client.get("/ui/", params={"tenant": "globex"}, headers={"x-memory-tenant": "acme"})
        assert theirs not in page.text
        assert (
            await client.post("/ui/tenants", data={"tenant": "globex"}, headers={"x-memory-tenant": "acme"})
        ).status_code == 403


async def mcp_call(client: httpx.AsyncClient, key: str) -> httpx.Response:
    return await client.post("/mcp", headers={"authorization": f"Bearer {key}"}, content=b"{}")


async def test_ten_wrong_keys_in_a_minute_refuse_that_address_only_at_the_login_and_at_mcp(env: Env) -> None:
    """Issue 36, defect 8: the lockout was one per process, so ten wrong keys a minute from anyone
    kept the right key refused for everyone, and /mcp took wrong keys without any bound."""
    app = app_of(env)
    async with client_of(app, address="10.0.0.66") as stranger, client_of(app, address="10.0.0.1") as operator:
        for _ in range(10):
            assert (await log_in(stranger, "guess")).status_code == 401
        locked = await log_in(stranger)  # the right key too: a guess would otherwise still be answered
        assert locked.status_code == 429 and locked.headers["retry-after"] == "60"
        assert "Too many wrong keys from this address: try again in 60 s." in html.unescape(locked.text)
        refused = await mcp_call(stranger, KEY)  # the same bound at /mcp
        assert refused.status_code == 429 and refused.headers["retry-after"] == "60"
        assert refused.json()["error"]["message"] == "too many wrong keys from this address: try again later"
        assert (await log_in(operator)).status_code == 303  # the operator is not locked out
        assert (await mcp_call(operator, "guess")).status_code == 401


async def test_wrong_bearer_keys_at_mcp_are_bounded_and_lock_that_address_out_of_the_login_too(env: Env) -> None:
    app = app_of(env)
    async with client_of(app, address="10.0.0.66") as stranger, client_of(app, address="10.0.0.1") as operator:
        answers = [(await mcp_call(stranger, f"guess-{i}")).status_code for i in range(300)]
        assert answers == [401] * 10 + [429] * 290
        assert (await log_in(stranger)).status_code == 429
        assert (await mcp_call(operator, KEY)).status_code not in (401, 429)
        assert (await log_in(operator)).status_code == 303
        # a client sent without any key is misconfigured, not guessing: it is not counted
        for _ in range(20):
            assert (await operator.post("/mcp", content=b"{}")).status_code == 401
        assert (await log_in(operator)).status_code == 303


async def test_under_oauth_a_refused_token_counts_as_a_wrong_key_only_when_no_token_has_its_shape(env: Env) -> None:
    from mcp_memory.server.http.oauth import TokenRefused

    class RefusesAll:
        async def grant(self, token: str, client: str | None = None):
            raise TokenRefused("the token is not valid")

    log = JsonLog(out=io.StringIO(), err=io.StringIO())
    oauth = settings(MCP_API_KEY=KEY, **OAUTH).serve.oauth
    app = HttpApp(ToolLayer(env.service, log), log, api_key=KEY, oauth=oauth, verifier=RefusesAll())
    async with client_of(app, address="10.0.0.66") as client:
        for _ in range(20):  # an expired JWT is a client's stale token, not a guess at the key
            assert (await mcp_call(client, "eyJh.eyJz.c2ln")).status_code == 401
        assert [(await mcp_call(client, f"guess-{i}")).status_code for i in range(11)] == [401] * 10 + [429]


def test_the_lockout_ends_a_minute_after_the_tenth_wrong_key_and_counts_an_ipv6_host_by_its_64(clock) -> None:
    wrong_keys = WrongKeys(clock=clock)
    for i in range(10):
        wrong_keys.wrong(f"2001:db8::{i + 1}")  # one host stepping through its own addresses
    assert wrong_keys.wait_ms("2001:db8::ffff") == 60_000
    assert wrong_keys.wait_ms("2001:db8:0:1::1") == 0  # another /64
    assert wrong_keys.wait_ms("127.0.0.1") == 0
    clock.advance(59_999)
    assert wrong_keys.wait_ms("2001:db8::1") == 1
    clock.advance(1)
    assert wrong_keys.wait_ms("2001:db8::1") == 0


async def test_over_https_the_session_cookie_is_secure(env: Env) -> None:
    async with mounted(env, "https://memory.test") as client:
        right = await log_in(client)
        assert right.status_code == 303 and "secure" in right.headers["set-cookie"].lower()


async def test_with_ui_off_there_is_no_ui_path(env: Env) -> None:
    log = JsonLog(out=io.StringIO(), err=io.StringIO())
    app = HttpApp(ToolLayer(env.service, log), log, api_key=KEY)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://memory.test") as client:
        assert (await client.get("/ui/login")).status_code == 404


# --------------------------------------------------------------------------- mcp-memory ui


def start_ui(tmp_path: Path, *args: str, browser: bool = False, **extra: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "ui", *([] if browser else ["--no-browser"]), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(tmp_path / "m.db", EMBEDDING_PROVIDER="fake", MEMORY_TENANT="acme", **extra),
        cwd=str(ROOT),
    )
    line = process.stdout.readline()
    return process, line


def test_ui_prints_the_url_refuses_a_request_without_its_token_and_exits_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    process, line = start_ui(tmp_path)
    try:
        match = re.fullmatch(
            r"mcp-memory web view of tenant acme: (http://127\.0\.0\.1:\d+)(/[\w-]{24})/login\?token=(\S+)\n", line
        )
        assert match, line + process.stderr.read()
        root, base, token = match.groups()
        url = root + base
        with httpx.Client(base_url=root) as outside:  # only the secret path serves the view
            for path in ("/", "/login", f"/login?token={token}", "/export", "/ui/"):
                assert outside.get(path).status_code == 404, path
        with httpx.Client(base_url=url) as client:
            assert client.get("/").status_code == 303
            assert client.get("/login").status_code == 403
            assert client.get("/login?token=" + token[:-1]).status_code == 403
            logged_in = client.get(f"/login?token={token}")
            assert logged_in.status_code == 200 and f'content="0; url={base}/"' in logged_in.text
            assert f"Path={base};" in logged_in.headers["set-cookie"] + ";"
            assert client.get("/").status_code == 200
        with httpx.Client(base_url=url) as stranger:
            assert stranger.get(f"/login?token={token}").status_code == 403  # the link works once
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert "Traceback" not in err and "shutdown_started" in err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize("args", [("--all-tenants", "--tenant", "acme")])
def test_ui_refuses_all_tenants_with_one_tenant(tmp_path: Path, args: tuple[str, ...]) -> None:
    process, _ = start_ui(tmp_path, *args)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and "--all-tenants and --tenant cannot be combined" in err


BROWSER_RECORDER = """#!/bin/sh
printf '%s\\n' "$0" "$@" > "$RECORD"
"""


def test_ui_opens_the_browser_on_a_private_file_and_never_puts_the_token_on_its_command_line(tmp_path: Path) -> None:
    """Issue 36, defect 3: `webbrowser.open(url)` ran the browser with the token in its arguments,
    which every local user can read in the process list."""
    recorder = tmp_path / "record-browser"
    recorder.write_text(BROWSER_RECORDER)
    recorder.chmod(0o755)
    record = tmp_path / "argv.txt"
    process, line = start_ui(tmp_path, browser=True, BROWSER=str(recorder), RECORD=str(record))
    try:
        match = re.search(r"(http://127\.0\.0\.1:\d+)(/[\w-]{24})/login\?token=(\S+)", line)
        assert match, line + process.stderr.read()
        root, base, token = match.groups()
        for _ in range(600):
            if record.exists() and record.read_text().endswith("\n"):
                break
            time.sleep(0.05)
        argv = record.read_text().splitlines()
        assert argv[0] == str(recorder) and len(argv) == 2, argv
        assert token not in argv[1] and base.strip("/") not in argv[1]
        assert argv[1].startswith("file:///") and argv[1].endswith("/open.html")
        launcher = Path(unquote(urlsplit(argv[1]).path))
        assert stat.S_IMODE(launcher.stat().st_mode) == 0o600
        assert stat.S_IMODE(launcher.parent.stat().st_mode) == 0o700
        target = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', launcher.read_text())
        assert target and html.unescape(target.group(1)) == f"{root}{base}/login?token={token}"
        with httpx.Client(base_url=root + base) as client:
            assert client.get(f"/login?token={token}").status_code == 200
            assert client.get("/").status_code == 200
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert not launcher.parent.exists()  # the file goes with the view
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_serve_http_counts_wrong_keys_per_address_at_mcp_and_the_login_alike(tmp_path: Path) -> None:
    """The real process: a stranger on 127.0.0.2 sending wrong bearer keys to /mcp is refused at
    both doors; the operator on 127.0.0.1 logs in and calls with the key."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-http", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(tmp_path / "m.db", EMBEDDING_PROVIDER="fake", MCP_API_KEY=KEY, UI_ENABLED="1"),
        cwd=str(ROOT),
    )
    try:
        first = process.stdout.readline()
        match = re.search(r"listening on (http://\S+) ", first)
        assert match, first + process.stderr.read()
        url = match.group(1)
        login = {"data": {"key": KEY}, "headers": {"origin": url}}
        stranger = httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        with stranger, httpx.Client(base_url=url) as operator:
            wrong = [
                stranger.post("/mcp", headers={"authorization": f"Bearer guess-{i}"}, json={}).status_code
                for i in range(12)
            ]
            assert wrong == [401] * 10 + [429] * 2
            assert stranger.post("/ui/login", **login).status_code == 429
            assert operator.post("/ui/login", **login).status_code == 303
            hello = operator.post(
                "/mcp",
                headers={"authorization": f"Bearer {KEY}", "accept": "application/json, text/event-stream"},
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                },
            )
            assert hello.status_code == 200 and hello.json()["result"]["serverInfo"]["name"]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
