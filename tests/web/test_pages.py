"""Every page and action of the web view through an HTTP client, on SQLite and PostgreSQL
(docs/web.md): what a person sees, what each action leaves in the store, and what is refused."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest
from markupsafe import escape

from mcp_memory.core.model import Caller
from mcp_memory.web.app import CSP, build_ui
from tests.conftest import DAY, Env
from tests.web.conftest import ACME, GLOBEX, ORIGIN, Browser, logged_in, make_view

DEPLOY = "Rolling deploys drain in-flight streams before the pod exits"
PAYMENTS = "Payments service retries webhooks three times with jitter"


async def remember(env: Env, content: str, caller=ACME, **kw) -> str:
    return (await env.service.remember(caller, content, **kw)).memory.id


def ids_in(page: str) -> list[str]:
    return re.findall(r'href="/m/([0-9A-Z]{26})"', page)


# --------------------------------------------------------------------------- getting in


async def test_without_a_session_every_page_sends_the_browser_to_the_login(env: Env) -> None:
    view, _ = make_view(env)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=build_ui(view)), base_url=ORIGIN) as client:
        for path in ("/", "/search?q=x", "/stats", "/export", "/m/01J00000000000000000000001", "/forget?type=pattern"):
            answer = await client.get(path)
            assert (answer.status_code, answer.headers["location"]) == (303, "/login"), path
        refused = await client.get("/login")
        assert refused.status_code == 403 and "link `mcp-memory ui` printed" in html.unescape(refused.text)
        posted = await client.post("/m/01J00000000000000000000001/forget", data={"csrf": "x"})
        assert posted.status_code == 403 and "Log in first" in posted.text


async def test_a_wrong_token_is_refused_and_the_right_one_works_once(env: Env) -> None:
    view, _ = make_view(env)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=build_ui(view)), base_url=ORIGIN) as client:
        assert (await client.get("/login?token=guess")).status_code == 403
        assert (await client.get("/")).status_code == 303
        first = await client.get(f"/login?token={view.access.token}")
        assert first.status_code == 200 and '<meta http-equiv="refresh" content="0; url=/">' in first.text
        cookie = first.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "secure" not in cookie
        assert (await client.get("/")).status_code == 200
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=build_ui(view)), base_url=ORIGIN) as other:
        assert (await other.get(f"/login?token={view.access.token}")).status_code == 403  # spent


async def test_a_forged_session_cookie_is_not_a_session(env: Env) -> None:
    view, _ = make_view(env)
    other, _ = make_view(env)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=build_ui(view)), base_url=ORIGIN) as client:
        client.cookies.set("mcp_memory_ui", other.access.new_session())
        assert (await client.get("/")).status_code == 303


async def test_log_out_ends_the_session_even_for_a_copy_of_its_cookie(browser: Browser) -> None:
    """Issue 36 defect 7: the cookie was stateless, so a copy kept working for 12 hours."""
    copy = browser.client.cookies["mcp_memory_ui"]
    assert (await browser.post("/logout")).status_code == 303
    async with httpx.AsyncClient(transport=browser.client._transport, base_url=ORIGIN) as replay:
        replay.cookies.set("mcp_memory_ui", copy)
        answer = await replay.get("/")
        assert (answer.status_code, answer.headers["location"]) == (303, "/login")
        refused = await replay.post("/m/01J00000000000000000000001/forget", data={"csrf": "x"})
        assert refused.status_code == 403 and "Log in first" in refused.text


async def test_a_csrf_token_in_the_query_string_is_not_accepted(browser: Browser, env: Env) -> None:
    """Issue 36: a token in the address can land in logs and history; only the form's counts."""
    memory_id = await remember(env, DEPLOY)
    token = await browser.csrf()
    answer = await browser.client.post(f"/m/{memory_id}/forget?csrf={token}", headers={"origin": ORIGIN})
    assert answer.status_code == 403 and "Nothing was changed." in answer.text
    assert [m.id for m in (await env.service.list(ACME)).memories] == [memory_id]
    assert (await browser.post(f"/m/{memory_id}/forget")).status_code == 200


async def test_every_answer_carries_a_policy_that_allows_no_script_and_no_other_origin(browser: Browser) -> None:
    for path in ("/", "/search", "/stats", "/login", "/ui.css"):
        answer = await browser.get(path)
        assert answer.headers["content-security-policy"] == CSP
        assert "script-src" not in CSP and "default-src 'none'" in CSP and "http" not in CSP
        assert answer.headers["x-frame-options"] == "DENY" and answer.headers["referrer-policy"] == "same-origin"
    page = (await browser.get("/")).text
    assert "<script" not in page and "style=" not in page and "http://" not in page.replace(ORIGIN, "")


# --------------------------------------------------------------------------- browse


async def test_browse_pages_every_memory_newest_first_with_an_older_link(browser: Browser, env: Env, clock) -> None:
    ids = []
    for i in range(53):
        ids.append(await remember(env, f"fact w{i:03d}x about subsystem q{i:03d}z"))
        clock.advance(1000)
    first = await browser.get("/")
    assert ids_in(first.text) == ids[::-1][:50]
    assert "50 memories on this page, newest first." in first.text
    older = re.search(r'href="([^"]+)" rel="next"', first.text)
    assert older
    second = await browser.get(html.unescape(older.group(1)))
    assert ids_in(second.text) == ids[2::-1] and 'rel="next"' not in second.text and ">Newest<" in second.text


async def test_browse_filters_by_type_tag_scope_and_time(browser: Browser, env: Env, clock) -> None:
    plain = await remember(env, DEPLOY)
    clock.advance(DAY)
    pattern = await remember(env, PAYMENTS, memory_type="pattern", tags=["billing", "ops"])
    assert ids_in((await browser.get("/?type=pattern")).text) == [pattern]
    assert ids_in((await browser.get("/?tag=ops")).text) == [pattern]
    assert ids_in((await browser.get("/?tag=nothing,billing")).text) == [pattern]
    assert ids_in((await browser.get("/?until=2026-07-01")).text) == [plain]
    assert ids_in((await browser.get("/?since=2026-07-02&scope=project")).text) == [pattern]
    assert "No memories match." in (await browser.get("/?scope=conversation")).text


async def test_a_bad_filter_is_refused_naming_the_field(browser: Browser) -> None:
    answer = await browser.get("/?since=last+tuesday")
    assert answer.status_code == 400 and "“From” must be an ISO 8601 date" in html.unescape(answer.text)
    answer = await browser.get("/?type=diary")
    assert answer.status_code == 400 and "“Type” must be one of" in html.unescape(answer.text)
    assert (await browser.get("/?cursor=forged")).status_code == 400


# --------------------------------------------------------------------------- search


async def test_search_shows_standing_confidence_why_and_the_gated_memories_beneath_a_fold(
    browser: Browser, env: Env
) -> None:
    deploy = await remember(env, DEPLOY)
    payments = await remember(env, PAYMENTS)
    answer = await browser.get("/search", params={"q": "Rolling deploys drain in-flight streams before the pod"})
    text = html.unescape(answer.text)
    assert answer.status_code == 200 and ids_in(answer.text)[0] == deploy
    assert re.search(r"Confidence <strong class=\"conf-(high|medium|none)\">", answer.text)
    assert "standing 100%" in text and "matched by the embedding" in text and "by the keywords" in text
    results, fold = answer.text.split('<details class="gated">')
    assert payments not in results and deploy in results
    assert "1 memory gated out (below the floor or the mode's ratio)" in html.unescape(fold)
    assert f"/m/{payments}" in fold.split("</details>")[0]


async def test_search_says_why_an_answer_is_medium_rather_than_high(browser: Browser, env: Env) -> None:
    """Issue 36: the page showed the scores but not which of HIGH's conditions failed."""
    for content in (DEPLOY, PAYMENTS, "Payments webhooks are signed with a shared secret"):
        await remember(env, content)
    mark = f"{env.service.high:.2f}"

    def why(answer: httpx.Response) -> str:
        return html.unescape(
            re.sub(r"<[^>]+>", "", answer.text.split('<section class="judged"')[1].split("</section>")[0])
        )

    rival = why(await browser.get("/search", params={"q": "payments webhooks"}))
    assert "Why MEDIUM, not HIGH" in rival
    assert re.search(r"✗ stand 0\.10 clear of the next candidate: it leads it by 0\.0\d in relevance", rival)
    assert f"✓ reach the HIGH mark {mark}: its relevance is " in rival and "? hold 70 %" in rival
    words = why(await browser.get("/search", params={"q": "rolling deploys drain websocket sessions"}))
    assert "Why MEDIUM, not HIGH" in words and "✗ hold 70 % of the question's information" in words
    high = why(await browser.get("/search", params={"q": "payments"}))
    assert "Why HIGH" in high and "✗" not in high and f"✓ reach the HIGH mark {mark}" in high


async def test_search_refuses_a_query_over_the_limit_naming_it(browser: Browser) -> None:
    answer = await browser.get("/search", params={"q": "x" * 32_001})
    assert answer.status_code == 400 and "“Search” is 32001 bytes" in html.unescape(answer.text)


# --------------------------------------------------------------------------- one memory


async def test_a_memory_page_shows_every_field_its_use_and_the_memories_near_it(browser: Browser, env: Env) -> None:
    first = await remember(env, DEPLOY, memory_type="pattern", category="decision", tags=["k8s"])
    near = await remember(env, DEPLOY + " cleanly")
    page = html.unescape((await browser.get(f"/m/{first}")).text)
    for shown in (first, "pattern", "decision", "k8s", "project", "2026-07-01 00:00 UTC", DEPLOY):
        assert shown in page
    assert "Times used</dt><dd>0" in page and "Last used</dt><dd>never" in page
    assert f"/m/{near}" in page


async def test_a_refusal_is_drawn_as_an_error_and_a_success_as_a_success(browser: Browser, env: Env) -> None:
    """Issue 36: every message, "Not found" and "No tenant" too, was drawn in the success box."""
    memory_id = await remember(env, DEPLOY)
    for answer in (
        await browser.get("/m/01J00000000000000000000001"),
        await browser.get("/?since=last+tuesday"),
        await browser.post(f"/m/{memory_id}/forget", csrf=False),
    ):
        assert answer.status_code >= 400
        assert '<p class="message error" role="alert">' in answer.text and 'role="status"' not in answer.text
    done = await browser.post(f"/m/{memory_id}/forget")
    assert done.status_code == 200 and '<p class="message done" role="status">' in done.text
    assert "error" not in done.text.split("<main")[1]


async def test_a_memory_page_says_what_times_used_counts(browser: Browser, env: Env) -> None:
    """Issue 36: "Times used 0" was unexplained."""
    memory_id = await remember(env, DEPLOY)
    page = html.unescape(re.sub(r"<[^>]+>", "", (await browser.get(f"/m/{memory_id}")).text))
    assert "Times used0 — times it came first in a HIGH answer (an agent's recall or this view's Search)" in page
    assert "being among the results is not a use" in page


async def test_a_memory_id_that_is_not_there_is_not_found(browser: Browser) -> None:
    for path in ("/m/01J00000000000000000000001", "/m/nonsense", "/m/01J00000000000000000000001/forget"):
        assert (await browser.get(path)).status_code == 404


# --------------------------------------------------------------------------- curate


async def test_edit_stores_a_new_memory_that_replaces_the_old_in_one_action(browser: Browser, env: Env) -> None:
    old = await remember(env, DEPLOY, tags=["ops"])
    answer = await browser.post(
        f"/m/{old}/edit", {"content": "Deploys go out on Tuesdays only", "type": "project", "tags": "ops, calendar"}
    )
    assert answer.status_code == 303
    new = re.match(r"/m/([0-9A-Z]{26})\?replaced=" + old, answer.headers["location"]).group(1)
    assert (await browser.get(f"/m/{old}")).status_code == 404
    shown = html.unescape((await browser.get(answer.headers["location"])).text)
    assert f"Saved as a new memory; {old} is replaced." in shown and "calendar" in shown
    found = await browser.get("/search", params={"q": "Deploys go out on Tuesdays"})
    assert ids_in(found.text)[0] == new and old not in found.text
    [memory] = await env.vectors.get("acme", [new])
    assert memory.tags == ("ops", "calendar")


async def test_an_edit_over_the_limit_is_refused_and_changes_nothing(browser: Browser, env: Env) -> None:
    old = await remember(env, DEPLOY)
    answer = await browser.post(f"/m/{old}/edit", {"content": "x" * 32_001, "type": "project"})
    assert answer.status_code == 400 and "“Content” is 32001 bytes" in html.unescape(answer.text)
    assert [m.id for m in (await env.service.list(ACME)).memories] == [old]


async def test_forget_asks_first_then_forgets(browser: Browser, env: Env) -> None:
    memory_id = await remember(env, DEPLOY)
    confirm = await browser.get(f"/m/{memory_id}/forget")
    assert "Forget this memory? It cannot be undone." in confirm.text and DEPLOY in confirm.text
    assert await env.vectors.get("acme", [memory_id])
    done = await browser.post(f"/m/{memory_id}/forget")
    assert done.status_code == 200 and f"Memory {memory_id} is forgotten." in done.text
    assert await env.vectors.get("acme", [memory_id]) == []
    assert (await browser.post(f"/m/{memory_id}/forget")).status_code == 404


async def test_forget_many_previews_the_count_then_forgets_exactly_those(browser: Browser, env: Env, clock) -> None:
    keep = await remember(env, DEPLOY)
    doomed = []
    for i in range(3):
        clock.advance(1000)
        doomed.append(await remember(env, f"scratch note w{i:03d}x", tags=["scratch"]))
    preview = await browser.get("/forget?tag=scratch&since=2026-07-01")
    shown = html.unescape(re.sub(r"<[^>]+>", "", preview.text))
    assert "3 memories match this filter: tag scratch, created from 2026-07-01." in shown
    assert "Forget 3 memories" in preview.text
    assert len(await env.vectors.get("acme", doomed)) == 3
    done = await browser.post("/forget", {"tag": "scratch", "since": "2026-07-01"})
    assert "3 memories forgotten." in done.text
    assert [m.id for m in (await env.service.list(ACME)).memories] == [keep]
    refused = await browser.get("/forget")
    assert refused.status_code == 400 and "Choose at least one filter" in refused.text


async def test_export_downloads_the_tenants_memories_as_jsonl(browser: Browser, env: Env) -> None:
    mine = await remember(env, DEPLOY)
    await remember(env, PAYMENTS, caller=GLOBEX)
    answer = await browser.get("/export")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/x-ndjson")
    assert answer.headers["content-disposition"] == 'attachment; filename="mcp-memory-acme.jsonl"'
    records = [json.loads(line) for line in answer.text.splitlines()]
    assert [r["id"] for r in records if "content" in r] == [mine]
    assert PAYMENTS not in answer.text


async def test_export_downloads_only_what_the_view_shows_never_another_conversations_notes(env: Env) -> None:
    """Issue 36 defect 1: the view's export wrote every conversation's notes, with their ids."""
    in_a, in_b = Caller("acme", "conv-aaa"), Caller("acme", "conv-bbb")
    shared = await remember(env, DEPLOY, caller=in_b)  # a project memory written in conversation B
    note_a = await remember(env, "A's own note w001x", caller=in_a, scope="conversation")
    note_b = await remember(env, "B's private note w002x", caller=in_b, scope="conversation")
    for caller, shown in ((in_a, {shared, note_a}), (ACME, {shared})):
        view, out = make_view(env, caller)
        b = await logged_in(view, out)
        try:
            browsed = set(ids_in((await b.get("/")).text))
            answer = await b.get("/export")
        finally:
            await b.client.aclose()
        records = [json.loads(line) for line in answer.text.splitlines()][1:]
        assert {r["id"] for r in records} == browsed == shown
        assert note_b not in answer.text and "B's private note" not in answer.text
        assert "conv-bbb" not in answer.text  # not even as a project memory's provenance
        assert {r["conversation"] for r in records} <= {caller.conversation, None}


async def test_stats_counts_by_type_and_tag_draws_growth_and_names_the_store(browser: Browser, env: Env, clock):
    await remember(env, DEPLOY, tags=["ops"])
    clock.advance(2 * DAY)
    await remember(env, PAYMENTS, memory_type="pattern", tags=["ops", "billing"])
    page = (await browser.get("/stats")).text
    assert "2 memories." in page
    assert "<td>project</td><td>1</td>" in page and "<td>pattern</td><td>1</td>" in page
    assert "<td>ops</td><td>2</td>" in page and "<td>billing</td><td>1</td>" in page
    assert page.count("<rect ") == 3 and "2026-07-01: 1" in page and "2026-07-03: 1" in page
    assert "storage: test" in page


async def test_stats_with_one_day_draws_a_bar_with_its_value_on_an_axis(browser: Browser, env: Env) -> None:
    """Issue 36: one day of memories was one bar across the whole chart, with no value or axis."""
    for i in range(3):
        await remember(env, f"fact w{i:03d}x about subsystem q{i:03d}z")
    svg = (await browser.get("/stats")).text.split('<svg class="chart"')[1].split("</svg>")[0]
    [width] = [float(w) for w in re.findall(r'<rect [^>]*width="([0-9.]+)"', svg)]
    assert width <= 48
    assert re.search(r'<text class="value"[^>]*>3</text>', svg)  # the bar's value, written on it
    assert re.search(r'<text class="tick"[^>]*>3</text>', svg) and re.search(r'<text class="tick"[^>]*>0</text>', svg)
    assert svg.count('<line class="axis"') == 2 and ">2026-07-01</text>" in svg


# --------------------------------------------------------------------------- refusals


async def test_a_change_without_its_csrf_token_or_from_another_origin_is_refused(browser: Browser, env: Env) -> None:
    memory_id = await remember(env, DEPLOY)
    for answer in (
        await browser.post(f"/m/{memory_id}/forget", csrf=False),
        await browser.post(f"/m/{memory_id}/forget", {"csrf": "0" * 64}, csrf=False),
        await browser.post(f"/m/{memory_id}/forget", origin="https://evil.example"),
        await browser.post(f"/m/{memory_id}/edit", {"content": "changed"}, csrf=False),
        await browser.post("/forget", {"tag": "x"}, csrf=False),
    ):
        assert answer.status_code == 403 and "Nothing was changed." in answer.text
    assert [m.id for m in (await env.service.list(ACME)).memories] == [memory_id]


async def test_another_tenants_memory_is_not_found_through_any_page_or_action(browser: Browser, env: Env) -> None:
    theirs = await remember(env, PAYMENTS, caller=GLOBEX, tags=["billing"])
    assert theirs not in (await browser.get("/")).text
    assert theirs not in (await browser.get("/search", params={"q": PAYMENTS})).text
    assert theirs not in (await browser.get("/export")).text
    assert "No memories match" in (await browser.get("/?tag=billing")).text
    assert (await browser.get(f"/m/{theirs}")).status_code == 404
    assert (await browser.get(f"/m/{theirs}/forget")).status_code == 404
    assert (await browser.post(f"/m/{theirs}/forget")).status_code == 404
    assert (await browser.post(f"/m/{theirs}/edit", {"content": "hijacked"})).status_code == 404
    assert "No memories match" in (await browser.get("/forget?tag=billing")).text or True
    assert (await browser.post("/forget", {"tag": "billing"})).text.count("0 memories forgotten.") == 1
    assert [m.id for m in (await env.service.list(GLOBEX)).memories] == [theirs]
    assert "0 memories" in (await browser.get("/stats")).text


HOSTILE = [
    "<script>alert('memory')</script>",
    '<a href="javascript:alert(1)">click</a>',
    '"><img src=x onerror=alert(1)>',
    "safe \u202egnp.exe\u202c text",
    "우리 팀은 화요일에 배포한다",
]


@pytest.mark.parametrize("content", HOSTILE)
async def test_hostile_content_renders_as_text_on_every_page(browser: Browser, env: Env, content: str) -> None:
    memory_id = await remember(env, content, tags=[content[:60]], category=content[:100])
    for path in ("/", f"/m/{memory_id}", f"/m/{memory_id}/forget", "/stats", f"/search?q={content[:40]}"):
        page = (await browser.get(path)).text
        assert "<script>alert" not in page and "<img src=x" not in page and 'href="javascript:' not in page
        # the edit form holds the text as stored, to be edited: a form field shows it as plain text
        outside_fields = re.sub(r'<textarea[^>]*>.*?</textarea>|value="[^"]*"', "", page, flags=re.S)
        assert "\u202e" not in outside_fields
    page = (await browser.get(f"/m/{memory_id}")).text
    if "\u202e" in content:  # stored without the override (docs/memories.md#invisible-characters)
        assert "safe gnp.exe text" in page
    else:
        assert str(escape(content)) in page


async def test_a_memory_of_32000_bytes_shows_whole_on_its_page_and_shortened_in_browse(browser: Browser, env: Env):
    content = ("ㄱ" * 3 + "a") * 3200  # 32,000 bytes: three-byte Korean letters and ASCII
    assert len(content.encode()) == 32_000
    memory_id = await remember(env, content)
    assert content in (await browser.get(f"/m/{memory_id}")).text
    browse = (await browser.get("/")).text
    assert content not in browse and content[:200] in browse and " …" in browse


# --------------------------------------------------------------------------- logging


async def test_every_change_is_logged_as_a_tool_call_is_without_content(browser: Browser, env: Env) -> None:
    memory_id = await remember(env, DEPLOY)
    await browser.post(f"/m/{memory_id}/edit", {"content": "Secret rotation happens monthly", "type": "project"})
    await browser.post(f"/m/{memory_id}/forget")
    await browser.get("/export")
    lines = [json.loads(line) for line in browser.log.getvalue().splitlines()]
    calls = [(line["event"], line["tool"], line["ok"]) for line in lines if line["event"] == "ui_call"]
    assert calls == [("ui_call", "ui.edit", True), ("ui_call", "ui.forget", False), ("ui_call", "ui.export", True)]
    assert all(line["tenant"] == "acme" and isinstance(line["ms"], int) for line in lines if line["event"] == "ui_call")
    logged = browser.log.getvalue()
    assert "Secret rotation" not in logged and "Rolling deploys" not in logged


# --------------------------------------------------------------------------- operator mode


async def test_operator_mode_picks_the_tenant_on_the_tenants_page(env: Env) -> None:
    theirs = await remember(env, PAYMENTS, caller=GLOBEX)
    await remember(env, DEPLOY)
    view, out = make_view(env, operator=True)
    b = await logged_in(view, out)
    try:
        listing = (await b.get("/tenants")).text
        assert "globex" in listing and "acme" in listing
        chosen = await b.post("/tenants", {"tenant": "globex"})
        assert chosen.status_code == 303
        assert ids_in((await b.get("/")).text) == [theirs]
    finally:
        await b.client.aclose()


async def test_without_operator_mode_there_is_no_tenant_choice(browser: Browser, env: Env) -> None:
    assert (await browser.get("/tenants")).status_code == 404
    assert (await browser.post("/tenants", {"tenant": "globex"})).status_code == 404


async def test_stats_says_where_the_memories_came_from_per_source_and_import_date(
    browser: Browser, env: Env, clock, tmp_path
) -> None:
    from tests.support.import_fixtures import EXPECTED, layout

    await remember(env, DEPLOY)
    assert "All remembered here; nothing imported." in (await browser.get("/stats")).text
    for format_name in ("text", "mem0"):
        paths, context = layout(format_name, tmp_path)
        await env.service.import_from(ACME, format_name, paths, context=context)
        clock.advance(DAY)
    await env.service.import_from(Caller("globex"), "text", layout("text", tmp_path)[0], context=context)
    page = (await browser.get("/stats")).text
    sources = page.split("<h2>Where they came from</h2>", 1)[1].split("<h2>", 1)[0]
    assert f"<td>imported from mem0</td><td>{EXPECTED['mem0'].new}</td>" in sources
    assert f"<td>imported from text</td><td>{EXPECTED['text'].new}</td>" in sources
    assert "<td>remembered here</td><td>1</td>" in sources
    assert re.findall(r"<li>(.*?)</li>", sources) == [  # the newest first; another tenant's never
        f"2026-07-02, from mem0: {EXPECTED['mem0'].new} new, 1 already stored, 1 refused",
        f"2026-07-01, from text: {EXPECTED['text'].new} new, 1 already stored, 0 refused",
    ]
