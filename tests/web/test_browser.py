"""The web view in a real browser: Debian's headless Chromium driven by Playwright, against the
view served on 127.0.0.1 over an SQLite file (docs/web.md). A person logs in with the printed
link, browses, searches, opens a memory, edits it, forgets one and exports; each page is saved
as a screenshot under the test's tmp dir (and, with WEB_SCREENSHOTS=<dir>, there too: that is how
docs/web-*.png are made)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright

from mcp_memory.core.logs import JsonLog
from mcp_memory.server.http.serve import GracefulServer, bind_sockets, bound_port, make_uvicorn
from mcp_memory.web.access import COOKIE, Access, secret_base
from mcp_memory.web.app import View, build_ui, local_caller
from tests.conftest import DAY, Env, open_env
from tests.web.conftest import ACME

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FACTS = [
    ("Rolling deploys drain in-flight streams before the pod exits", "pattern", ["deploy", "k8s"]),
    ("Payments service retries webhooks three times with jitter", "project", ["billing"]),
    ("The staging database is reset every Sunday at 03:00 UTC", "project", ["staging"]),
    ("Use ruff format before committing; CI fails on unformatted code", "pattern", ["ci"]),
    ("Release notes live in the changelog, newest entry first", "reference", ["docs"]),
    ("<script>alert('a model wrote this')</script> is stored as text", "project", ["hostile"]),
    ("우리 팀은 화요일에 배포한다", "project", ["korean"]),
]


@pytest.fixture
async def env(clock, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    opened = await open_env("sqlite", clock, request)
    for content, memory_type, tags in FACTS:
        await opened.service.remember(ACME, content, memory_type=memory_type, tags=tags)
        clock.advance(DAY / 3)
    yield opened
    await opened.service.close()


@pytest.fixture
async def served(env: Env) -> AsyncIterator[tuple[str, View]]:
    """The view on a free port of 127.0.0.1, and the URL `mcp-memory ui` would print."""
    access = Access.local()
    view = View(
        env.service,
        access,
        JsonLog(out=io.StringIO(), err=io.StringIO()),
        local_caller(access, ACME, False),
        about=["storage: sqlite (a file in the test's tmp dir)", f"embedder: {env.service.describe_embedder()}"],
        base=secret_base(),  # as `mcp-memory ui` serves it
    )
    sockets = bind_sockets("127.0.0.1", 0)
    started = asyncio.Event()
    server = make_uvicorn(build_ui(view), sockets, started.set)
    graceful = GracefulServer(server, lambda: asyncio.sleep(0), view.log)
    task = asyncio.create_task(graceful.run())
    await asyncio.wait_for(started.wait(), 30)
    try:
        yield f"http://127.0.0.1:{bound_port(sockets)}{view.base}/login?token={access.token}", view
    finally:
        graceful.stop()
        await task
        for sock in sockets:
            sock.close()


@pytest.fixture
async def chromium() -> AsyncIterator[Browser]:
    assert Path(CHROMIUM).exists(), "Debian's chromium is not installed (.ci/run installs it)"
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


@asynccontextmanager
async def serving(app) -> AsyncIterator[int]:
    """`app` on a free port of 127.0.0.1, for as long as the block runs; yields the port."""
    sockets = bind_sockets("127.0.0.1", 0)
    started = asyncio.Event()
    graceful = GracefulServer(
        make_uvicorn(app, sockets, started.set), lambda: asyncio.sleep(0), JsonLog(out=io.StringIO())
    )
    task = asyncio.create_task(graceful.run())
    await asyncio.wait_for(started.wait(), 30)
    try:
        yield bound_port(sockets)
    finally:
        graceful.stop()
        await task
        for sock in sockets:
            sock.close()


async def log_in(page: Page, url: str) -> None:
    """Open the printed link: its page refreshes to Browse by itself."""
    await page.goto(url)
    await page.wait_for_url(re.compile(r"^[^?]*/$"))


class Shots:
    def __init__(self, tmp_path: Path) -> None:
        self.directory = tmp_path / "screenshots"
        self.directory.mkdir()
        self.extra = os.environ.get("WEB_SCREENSHOTS")

    async def take(self, page: Page, name: str, *, whole: bool = False) -> Path:
        path = self.directory / f"web-{name}.png"
        await page.screenshot(path=str(path), full_page=whole)
        if self.extra:
            shutil.copy(path, Path(self.extra) / path.name)
        return path


async def test_a_person_logs_in_browses_searches_edits_forgets_and_exports_in_chromium(
    served: tuple[str, View], chromium: Browser, env: Env, tmp_path: Path
) -> None:
    url, _ = served
    shots = Shots(tmp_path)
    context = await chromium.new_context(viewport={"width": 1100, "height": 760}, accept_downloads=True)
    page = await context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("dialog", lambda dialog: problems.append(f"a dialog opened: {dialog.message}"))

    # log in with the printed link: it lands on Browse, newest first
    await log_in(page, url)
    assert page.url.endswith("/") and "token" not in page.url
    assert await page.title() == "Browse · mcp-memory"
    rows = page.locator("li.memory .content")
    assert await rows.count() == len(FACTS)
    assert await rows.first.inner_text() == FACTS[-1][0]
    assert await page.locator("li.memory .content", has_text="<script>alert").count() == 1  # shown, not run
    await shots.take(page, "browse")

    # filter by type from the form, with the keyboard
    await page.select_option("#f-type", "pattern")
    await page.locator("#f-tag").press("Enter")
    assert await rows.count() == 2

    # search runs recall and says why each result matched
    await page.click("text=Search")
    await page.fill("#q", "how do rolling deploys drain streams")
    await page.press("#q", "Enter")
    first = page.locator("ol.results li.memory").first
    assert "Rolling deploys drain" in await first.inner_text()
    assert "matched by the embedding" in await first.locator(".why").inner_text()
    assert await page.locator("strong[class^=conf-]").count() == 1
    await shots.take(page, "search")

    # open the memory: fields, use, neighbours, the edit form
    await first.locator("a.open").click()
    assert await page.title() == "Memory · mcp-memory"
    old_id = (await page.locator("dd.id").inner_text()).strip()
    assert "pattern" in await page.locator("dl.fields").inner_text()
    await shots.take(page, "memory")

    # edit it: a new memory replaces the old one
    await page.fill("#e-content", "Rolling deploys drain every websocket before the pod exits, within 30 s")
    await page.click("text=Save as a new memory")
    assert f"{old_id} is replaced" in await page.locator("p.message").inner_text()
    new_id = (await page.locator("dd.id").inner_text()).strip()
    assert new_id != old_id
    await page.goto(url.split("/login")[0] + f"/m/{old_id}")
    assert await page.title() == "Not found · mcp-memory"
    assert problems == ["Failed to load resource: the server responded with a status of 404 (Not Found)"]
    problems.clear()
    await page.goto(url.split("/login")[0] + "/search?q=websocket+drain+within+30+s")
    assert (await page.locator("ol.results li.memory .id").first.inner_text()).strip() == new_id
    assert old_id not in await page.content()

    # forget one, after the confirmation
    await page.goto(url.split("/login")[0] + "/")
    await page.locator("li.memory", has_text="staging database").locator("a.open").click()
    doomed = (await page.locator("dd.id").inner_text()).strip()
    await page.click("text=Forget this memory…")
    assert "It cannot be undone." in await page.locator("main").inner_text()
    await shots.take(page, "forget")
    await page.click("button:has-text('Forget it')")
    assert f"Memory {doomed} is forgotten." in await page.locator("p.message").inner_text()
    assert await env.vectors.get("acme", [doomed]) == []

    # export the tenant as JSONL
    async with page.expect_download() as waiting:
        await page.click("text=Export JSONL")
    download = await waiting.value
    assert download.suggested_filename == "mcp-memory-acme.jsonl"
    saved = tmp_path / "export.jsonl"
    await download.save_as(str(saved))
    records = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    ids = {r.get("id") for r in records}
    assert new_id in ids and old_id not in ids and doomed not in ids

    # stats: counts, the chart, the store in use
    await page.goto(url.split("/login")[0] + "/stats")
    assert await page.locator("svg.chart rect").count() >= 2
    assert "storage: sqlite" in await page.locator("ul.about").inner_text()
    await shots.take(page, "stats", whole=True)

    assert problems == []  # no CSP violation, no script error, no dialog
    assert sorted(p.name for p in shots.directory.iterdir()) == [
        "web-browse.png",
        "web-forget.png",
        "web-memory.png",
        "web-search.png",
        "web-stats.png",
    ]
    await context.close()


async def test_a_browser_without_the_link_sees_only_the_refusal(served: tuple[str, View], chromium: Browser) -> None:
    url, _ = served
    page = await chromium.new_page()
    root = url.split("/login")[0]
    answer = await page.goto(root + "/")
    assert answer is not None and answer.status == 403 and page.url.endswith("/login")
    assert "works once" in await page.locator("main").inner_text()
    wrong = await page.goto(root + "/login?token=guess")
    assert wrong is not None and wrong.status == 403
    await page.close()


def test_the_screenshots_in_docs_are_small_pngs() -> None:
    from tests.conftest import ROOT

    for name in ("browse", "search", "memory", "forget", "stats", "tenants", "browse-phone", "search-phone"):
        path = ROOT / "docs" / f"web-{name}.png"
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 200_000, name
    assert re.search(r"!\[[^\]]*\]\(docs/web-browse\.png\)", (ROOT / "README.md").read_text(encoding="utf-8"))


def test_every_screenshot_in_docs_is_shown_where_docs_web_md_describes_its_page() -> None:
    from tests.conftest import ROOT

    manual = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"!\[[^\]]+\]\((web-[a-z-]+\.png)\)", manual))
    committed = {path.name for path in (ROOT / "docs").glob("web-*.png")}
    assert shown == committed
    sections = {name: manual.index(f"]({name})") for name in shown}
    for name, heading in [
        ("web-search.png", "## Search"),
        ("web-memory.png", "## A memory"),
        ("web-forget.png", "## Curate"),
        ("web-stats.png", "## Stats"),
    ]:
        start = manual.index(heading + "\n")
        end = manual.find("\n## ", start + 1)
        assert start < sections[name] < end, name


WIDTHS = {"desktop": (1100, 760), "phone": (390, 844)}


async def split_labels(page: Page) -> list[str]:
    """Each label of the page's forms whose field is neither right beside it on its line nor
    right below it: what a person reading a wrapped bar would pair with the wrong field."""
    split = []
    labels = page.locator("main label[for]")
    for i in range(await labels.count()):
        label = labels.nth(i)
        name = (await label.inner_text()).strip()
        a = await label.bounding_box()
        b = await page.locator(f"#{await label.get_attribute('for')}").bounding_box()
        assert a and b, name
        beside = (
            a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"] and 0 <= b["x"] - a["x"] - a["width"] <= 24
        )
        below = 0 <= b["y"] - a["y"] - a["height"] <= 12 and abs(a["x"] - b["x"]) <= 4
        if not (beside or below):
            split.append(f"{name!r}: label at {a}, field at {b}")
    return split


@pytest.mark.parametrize("width", sorted(WIDTHS))
async def test_every_label_stays_with_its_field_when_a_form_wraps(
    served: tuple[str, View], chromium: Browser, env: Env, tmp_path: Path, width: str
) -> None:
    """Issue 36: on a wrapped filter bar the label "To" ended one line and its field began the next."""
    url, _ = served
    w, h = WIDTHS[width]
    context = await chromium.new_context(viewport={"width": w, "height": h})
    page = await context.new_page()
    await log_in(page, url)
    root = page.url.rstrip("/")
    memory_id = (await env.service.list(ACME)).memories[0].id
    checked = 0
    shots = Shots(tmp_path)
    pages = {"browse": "/", "search": "/search?q=deploys+drain", "memory": f"/m/{memory_id}", "stats": "/stats"}
    for name, path in pages.items():
        await page.goto(root + path)
        assert await split_labels(page) == [], f"{path} at {width} width"
        checked += await page.locator("main label[for]").count()
        if width == "phone":  # the desktop ones are the person's walk's
            await shots.take(page, f"{name}-phone")
    assert checked >= 5 + 4 + 4
    await context.close()


async def test_another_server_on_127_0_0_1_neither_receives_nor_can_use_the_session_cookie(
    served: tuple[str, View], chromium: Browser
) -> None:
    """Issue 36, defect 2: cookies are not isolated by port, and the session cookie was host-only
    with `Path=/`, so Chromium sent it to any server on 127.0.0.1 (a direct visit, a link plus a
    same-site redirect), which replayed it for the tenant's memories."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse
    from starlette.routing import Route

    url, view = served
    view_port = int(url.split(":")[2].split("/")[0])
    seen: list[tuple[str, str]] = []
    replies: list[tuple[int, str]] = []

    async def record(request: Request):
        cookie = request.headers.get("cookie", "")
        seen.append((request.url.path, cookie))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{view_port}") as replay:
            for path in ("/", "/export", "/search?q=deploys"):  # replay whatever came, where the view might be
                answer = await replay.get(path, headers={"cookie": cookie} if cookie else {})
                replies.append((answer.status_code, answer.text))
        if request.url.path == "/go":
            return RedirectResponse("/land", 302)
        links = (
            '<a id="self" href="/go">next</a> '
            f'<a id="view" href="http://127.0.0.1:{view_port}/">view</a> '
            f'<a id="export" href="http://127.0.0.1:{view_port}/export">export</a>'
        )
        return HTMLResponse(f"<!doctype html><title>elsewhere</title>{links}")

    other = Starlette(routes=[Route("/{path:path}", record)])
    context = await chromium.new_context()
    page = await context.new_page()
    await log_in(page, url)
    assert await page.title() == "Browse · mcp-memory"
    [cookie] = [c for c in await context.cookies() if c["name"] == COOKIE]
    assert cookie["path"] == view.base and cookie["domain"] == "127.0.0.1"
    async with serving(other) as port:
        await page.goto(f"http://127.0.0.1:{port}/")  # a direct visit
        await page.goto(f"http://127.0.0.1:{port}/ui/login")
        await page.click("#self")  # a link, then a same-site redirect
        await page.wait_for_url(f"http://127.0.0.1:{port}/land")
        for link in ("#view", "#export"):  # its page sends the browser to the view's port
            await page.goto(f"http://127.0.0.1:{port}/")
            async with page.expect_navigation() as went:
                await page.click(link)
            answer = await went.value
            assert answer is not None and answer.status == 404, link
            assert "Rolling deploys" not in await page.content()
    assert [path for path, _ in seen if path != "/favicon.ico"] == ["/", "/ui/login", "/go", "/land", "/", "/"]
    assert all(COOKIE not in cookie for _, cookie in seen), seen
    assert replies and all(status == 404 and "Rolling deploys" not in text for status, text in replies)
    await page.goto(url.split("/login")[0] + "/")  # the view itself still knows the session
    assert await page.title() == "Browse · mcp-memory"
    await context.close()


async def test_the_launcher_file_mcp_memory_ui_opens_brings_chromium_to_browse_logged_in(
    served: tuple[str, View], chromium: Browser
) -> None:
    """Issue 36, defect 3: the browser is started on a private file, not on the token's URL; the
    file sends a real browser on to the view, logged in."""
    from mcp_memory.cli.ui import launcher_page

    url, view = served
    launcher = launcher_page(url)
    try:
        page = await chromium.new_page()
        await page.goto(launcher.as_uri())
        await page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+" + re.escape(view.base) + "/$"))
        assert await page.title() == "Browse · mcp-memory"
        assert await page.locator("li.memory").count() == len(FACTS)
        await page.close()
    finally:
        shutil.rmtree(launcher.parent)


async def test_under_serve_http_a_person_logs_in_with_the_key_and_chooses_a_tenant_in_chromium(
    chromium: Browser, env: Env, tmp_path: Path
) -> None:
    """Issue 36: the key's login landed on "No tenant — x-memory-tenant header is required" with
    no way forward; now it lands on the Tenants page, and the tenant chosen is what Browse shows."""
    from mcp_memory.core.model import Caller
    from tests.web.test_mounts import KEY, app_of

    await env.service.remember(Caller("globex"), "Globex deploys on Fridays only", memory_type="project")
    shots = Shots(tmp_path)
    async with serving(app_of(env)) as port:
        context = await chromium.new_context(viewport={"width": 1100, "height": 760})
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/ui/")
        assert await page.title() == "Log in · mcp-memory"
        await page.fill("#key", KEY)
        await page.press("#key", "Enter")
        await page.wait_for_url(f"http://127.0.0.1:{port}/ui/tenants")
        assert await page.title() == "Tenants · mcp-memory"
        assert "No tenant" not in await page.locator("main").inner_text()
        await shots.take(page, "tenants")
        await page.click("button:has-text('Show acme')")
        await page.wait_for_url(f"http://127.0.0.1:{port}/ui/")
        assert await page.title() == "Browse · mcp-memory"
        assert await page.locator("li.memory").count() == len(FACTS)
        assert "Globex" not in await page.locator("main").inner_text()
        assert "tenant acme" in await page.locator("header .tenant").inner_text()
        await context.close()
