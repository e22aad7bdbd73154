"""The web view's pages and actions over one MemoryService (docs/web.md).

Browse, Search, a Memory, Curate (edit, forget, forget many, export) and Stats, for the tenant
`caller_of` names: the local command's, or the one serve-http's headers name, never a form
field. Every page answers only a valid session (access.py); every change also needs its CSRF
token and a same-origin request, and is logged as a tool call is (`ui_call`: the action, the
tenant, the time, never content). Every answer carries a Content-Security-Policy allowing
nothing but this server's stylesheet: the pages have no script at all.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_memory.core import arguments
from mcp_memory.core.errors import ContextError, InvalidArgument, MemoryServerError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import MEMORY_TYPES, MODES, SCOPES, Caller
from mcp_memory.core.paging import PAGE_DEFAULT
from mcp_memory.core.service import MemoryService
from mcp_memory.web import render
from mcp_memory.web.access import COOKIE, Access

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
#: A form larger than this is refused (a memory is at most 32,000 bytes; URL-encoding triples it).
FORM_MAX_BYTES = 256 * 1024
#: Forget-many acts on at most this many memories at a time (the preview says when more match).
FORGET_MANY_MAX = 1000
#: Stats counts tags over at most this many of the newest memories (each one is read) and draws
#: growth from at most this many index keys (no memory is read); the page says when it stopped.
TAG_SCAN = 2_000
GROWTH_SCAN = 10_000
TENANT_COOKIE = "mcp_memory_ui_tenant"
FILTER_FIELDS = ("type", "tag", "scope", "since", "until")
#: How the view names a field in its errors: the form's label.
LABELS = {
    "type": "Type",
    "tags": "Tags",
    "tag": "Tag",
    "scope": "Scope",
    "since": "From",
    "until": "To",
    "limit": "Page size",
    "cursor": "Page",
    "content": "Content",
    "category": "Category",
    "query": "Search",
    "mode": "Mode",
    "replaces": "Replaces",
}
TERMS = arguments.Terms(
    name=lambda f: f"“{LABELS.get(f, f)}”",
    no_conversation="A conversation note needs a conversation; this view is not in one.",
)


@dataclass
class View:
    """What the pages need: the service, the login method, the log, where the view is mounted
    (`base`: "" for `mcp-memory ui`, "/ui" under serve-http) and how a request's caller is found."""

    service: MemoryService
    access: Access
    log: JsonLog
    caller_of: Callable[[Request], Caller]
    base: str = ""
    #: The store and embedder lines the Stats page shows.
    about: list[str] = field(default_factory=list)
    #: `mcp-memory ui --all-tenants`: the operator picks the tenant (Tenants page).
    operator: bool = False
    #: serve-http's login form asks for the key; `mcp-memory ui` uses its one-time link.
    key_login: bool = False


@dataclass
class Ctx:
    request: Request
    caller: Caller
    session: str
    form: dict[str, list[str]]

    def one(self, name: str, default: str = "") -> str:
        values = self.form.get(name) or self.request.query_params.getlist(name)
        return values[0] if values else default

    def many(self, name: str) -> list[str]:
        values = self.form.get(name) or self.request.query_params.getlist(name)
        return [v.strip() for value in values for v in value.split(",") if v.strip()]


class Refused(Exception):
    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


def build_ui(view: View) -> Any:
    """The Starlette app of the view, with its security headers on every answer."""
    env = render.environment()
    base = view.base
    css = render.__file__.rsplit("/", 1)[0] + "/static/ui.css"
    with open(css, encoding="utf-8") as handle:
        stylesheet = handle.read()

    def page(ctx: Ctx | None, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        values.setdefault("title", "")
        html = env.get_template(template).render(
            base=base,
            csrf=view.access.csrf(ctx.session) if ctx else "",
            caller=ctx.caller if ctx else None,
            operator=view.operator,
            logged_in=ctx is not None,
            **values,
        )
        return HTMLResponse(html, status)

    def message(ctx: Ctx | None, status: int, title: str, text: str, **values: Any) -> HTMLResponse:
        return page(ctx, "message.html", status, title=title, message=text, **values)

    async def read_form(request: Request) -> dict[str, list[str]]:
        if request.method != "POST":
            return {}
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > FORM_MAX_BYTES:
                raise Refused(
                    413, "Too large", f"This form is larger than {FORM_MAX_BYTES} bytes; nothing was changed."
                )
        try:
            return parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=100)
        except (UnicodeDecodeError, ValueError):
            raise Refused(400, "Unreadable form", "This form could not be read; nothing was changed.") from None

    def same_origin(request: Request) -> bool:
        """A browser names the page a form came from; it must be this server (a client without an
        Origin still needs the CSRF token)."""
        origin = request.headers.get("origin")
        return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"

    def guarded(handler: Callable[[Ctx], Awaitable[Response]], action: str | None = None) -> Callable[..., Any]:
        async def endpoint(request: Request) -> Response:
            session = request.cookies.get(COOKIE)
            if not view.access.valid(session):
                if request.method == "GET":
                    return RedirectResponse(f"{base}/login", 303)
                return message(None, 403, "Not logged in", "Log in first; nothing was changed.")
            assert session is not None
            started = time.perf_counter()
            caller: Caller | None = None
            ok = False
            try:
                caller = view.caller_of(request)
                form = await read_form(request)
                ctx = Ctx(request, caller, session, form)
                if request.method == "POST" and (
                    not same_origin(request) or not view.access.csrf_matches(session, ctx.one("csrf"))
                ):
                    raise Refused(
                        403,
                        "Refused",
                        "This form did not come from this page, or it has expired: reload the page "
                        "and try again. Nothing was changed.",
                    )
                response = await handler(ctx)
                ok = response.status_code < 400
                return response
            except Refused as refused:
                return message(None, refused.status, refused.title, refused.message)
            except ContextError as exc:
                return message(None, 400, "No tenant", str(exc))
            except InvalidArgument as exc:
                ctx_or_none = Ctx(request, caller, session, {}) if caller else None
                return message(ctx_or_none, 400, "Not accepted", exc.worded(TERMS.name) + " Nothing was changed.")
            except MemoryServerError as exc:
                view.log.error("ui_failed", exc, tenant=caller.tenant if caller else None, tool=action)
                return message(None, 503, "The store failed", "The memory store could not complete this request.")
            finally:
                if action is not None and (request.method == "POST" or action == "ui.export"):
                    view.log.info(
                        "ui_call",
                        tenant=caller.tenant if caller else None,
                        tool=action,
                        ms=round((time.perf_counter() - started) * 1000),
                        ok=ok,
                        inConversation=bool(caller and caller.conversation),
                    )

        return endpoint

    # ------------------------------------------------------------------- login

    async def login(request: Request) -> Response:
        if view.key_login:
            if request.method == "GET":
                return page(None, "login.html", title="Log in")
            try:
                form = await read_form(request)
            except Refused as refused:
                return message(None, refused.status, refused.title, refused.message)
            if not same_origin(request):
                return message(None, 403, "Refused", "This login did not come from this page.")
            key = (form.get("key") or [""])[0]
            if view.access.locked_out():
                view.log.info("ui_login", ok=False)
                return message(None, 429, "Too many tries", "Too many wrong keys: wait a minute and try again.")
            if not view.access.key_matches(key):
                view.access.wrong_key()
                view.log.info("ui_login", ok=False)
                return page(None, "login.html", 401, title="Log in", wrong=True)
            view.log.info("ui_login", ok=True)
            return _logged_in(request)
        token = request.query_params.get("token")
        if token is None and view.access.valid(request.cookies.get(COOKIE)):
            return RedirectResponse(f"{base}/", 303)
        if token is None or not view.access.redeem(token):
            view.log.info("ui_login", ok=False)
            return message(
                None,
                403,
                "Refused",
                "This view opens only from the link `mcp-memory ui` printed, and that link works once. "
                "Run `mcp-memory ui` again for a new one.",
            )
        view.log.info("ui_login", ok=True)
        return _logged_in(request)

    def _logged_in(request: Request) -> Response:
        response = RedirectResponse(f"{base}/", 303)
        secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
        response.set_cookie(
            COOKIE,
            view.access.new_session(),
            httponly=True,
            samesite="strict",
            secure=secure,
            path=base or "/",
        )
        return response

    async def logout(ctx: Ctx) -> Response:
        response = RedirectResponse(f"{base}/login", 303)
        response.delete_cookie(COOKIE, path=base or "/")
        return response

    # ------------------------------------------------------------------- browse

    def filters_of(ctx: Ctx) -> dict[str, Any]:
        tags = ctx.many("tag")
        if len(tags) > arguments.TAGS_MAX:
            raise InvalidArgument(f"{{field}} may name at most {arguments.TAGS_MAX} tags.", field="tags")
        return {
            "memory_type": ctx.one("type") or None,
            "tags": tags,
            "scope": ctx.one("scope") or None,
            "since": ctx.one("since").strip() or None,
            "until": ctx.one("until").strip() or None,
        }

    def filter_query(ctx: Ctx, **extra: str) -> str:
        pairs = [(name, ctx.one(name)) for name in FILTER_FIELDS if ctx.one(name)]
        pairs += [(k, v) for k, v in extra.items() if v]
        return urlencode(pairs)

    async def browse(ctx: Ctx) -> Response:
        where = filters_of(ctx)
        cursor = ctx.one("cursor") or None
        result = await view.service.page(ctx.caller, limit=PAGE_DEFAULT, cursor=cursor, **where)
        next_url = f"{base}/?{filter_query(ctx, cursor=result.next_cursor)}" if result.next_cursor else None
        return page(
            ctx,
            "browse.html",
            title="Browse",
            memories=result.memories,
            scanned=result.scanned,
            next_url=next_url,
            first_url=f"{base}/?{filter_query(ctx)}" if cursor else None,
            chosen={name: ctx.one(name) for name in FILTER_FIELDS},
            types=MEMORY_TYPES,
            scopes=SCOPES,
            forget_url=f"{base}/forget?{filter_query(ctx)}" if any(where.values()) else None,
        )

    # ------------------------------------------------------------------- search

    async def search(ctx: Ctx) -> Response:
        query = ctx.one("q")
        values: dict[str, Any] = {
            "title": "Search",
            "query": query,
            "modes": MODES,
            "types": MEMORY_TYPES,
            "chosen": {"mode": ctx.one("mode"), "type": ctx.one("type"), "tag": ctx.one("tag")},
        }
        if not query.strip():
            return page(ctx, "search.html", **values)
        arguments.check_text("query", query)
        arguments.check_query(query)
        mode = ctx.one("mode") or None
        if mode is not None and mode not in MODES:
            raise InvalidArgument(f"{{field}} must be one of {', '.join(MODES)}.", field="mode")
        memory_type = ctx.one("type") or None
        if memory_type is not None and memory_type not in MEMORY_TYPES:
            raise InvalidArgument(f"{{field}} must be one of {', '.join(MEMORY_TYPES)}.", field="type")
        started = time.perf_counter()
        result = await view.service.recall(ctx.caller, query, mode=mode, memory_type=memory_type, tags=ctx.many("tag"))
        values.update(
            result=result,
            rows=[_why(r.similarity, r.keyword, r.relevance) for r in result.results],
            gated=[(c, _why(c.similarity, c.keyword, c.relevance)) for c in result.gated_out],
            ms=round((time.perf_counter() - started) * 1000),
        )
        return page(ctx, "search.html", **values)

    # ------------------------------------------------------------------- one memory

    async def memory(ctx: Ctx) -> Response:
        memory_id = ctx.request.path_params["memory_id"]
        detail = await view.service.detail(ctx.caller, memory_id) if arguments.MEMORY_ID.fullmatch(memory_id) else None
        if detail is None:
            return _missing(ctx, memory_id)
        return page(
            ctx,
            "memory.html",
            title="Memory",
            detail=detail,
            types=MEMORY_TYPES,
            replaced=ctx.one("replaced"),
            known=ctx.one("known"),
        )

    def _missing(ctx: Ctx, memory_id: str) -> Response:
        shown = memory_id if len(memory_id) <= arguments.MEMORY_ID_LENGTH else memory_id[:26] + "…"
        return message(ctx, 404, "Not found", f"No memory with id {shown} exists for this project.")

    async def visible(ctx: Ctx) -> Any:
        memory_id = ctx.request.path_params["memory_id"]
        detail = (
            await view.service.detail(ctx.caller, memory_id, near=0)
            if arguments.MEMORY_ID.fullmatch(memory_id)
            else None
        )
        return memory_id, detail

    async def edit(ctx: Ctx) -> Response:
        memory_id, detail = await visible(ctx)
        if detail is None:
            return _missing(ctx, memory_id)
        sent = {
            "content": ctx.one("content"),
            "type": ctx.one("type") or None,
            "category": ctx.one("category") or None,
            "tags": ctx.many("tags"),
            "scope": detail.memory.scope,
            "replaces": [memory_id],
        }
        kwargs = arguments.remember_args(sent, ctx.caller, TERMS.no_conversation)
        result = await view.service.remember(ctx.caller, **kwargs)
        if result.not_removed:
            return message(ctx, 500, "Partly done", f"Stored {result.memory.id}, but {memory_id} could not be removed.")
        flag = "replaced" if result.created else "known"
        return RedirectResponse(f"{base}/m/{result.memory.id}?{urlencode({flag: memory_id})}", 303)

    async def forget_confirm(ctx: Ctx) -> Response:
        memory_id, detail = await visible(ctx)
        if detail is None:
            return _missing(ctx, memory_id)
        return page(ctx, "forget.html", title="Forget", memory=detail.memory)

    async def forget(ctx: Ctx) -> Response:
        memory_id = ctx.request.path_params["memory_id"]
        if len(memory_id) > arguments.MEMORY_ID_LENGTH:
            return _missing(ctx, memory_id)
        result = await view.service.forget(ctx.caller, memory_id)
        if not result.deleted:
            return _missing(ctx, memory_id)
        return message(ctx, 200, "Forgotten", f"Memory {memory_id} is forgotten.", back=True)

    # ------------------------------------------------------------------- forget many

    async def matching(ctx: Ctx) -> tuple[list[Any], bool]:
        """Up to FORGET_MANY_MAX memories the filter keeps, and whether more match."""
        where = filters_of(ctx)
        if not any(where.values()):
            raise InvalidArgument("Choose at least one filter (type, tag, scope, or a time) to forget by.")
        found: list[Any] = []
        cursor = None
        while True:
            result = await view.service.page(ctx.caller, limit=200, cursor=cursor, **where)
            found.extend(result.memories)
            if len(found) > FORGET_MANY_MAX:
                return found[:FORGET_MANY_MAX], True
            if result.next_cursor is None:
                return found, False
            cursor = result.next_cursor

    async def forget_many_preview(ctx: Ctx) -> Response:
        found, more = await matching(ctx)
        return page(
            ctx,
            "forget_many.html",
            title="Forget many",
            count=len(found),
            more=more,
            sample=found[:5],
            chosen={name: ctx.one(name) for name in FILTER_FIELDS},
            limit=FORGET_MANY_MAX,
            browse_url=f"{base}/?{filter_query(ctx)}",
        )

    async def forget_many(ctx: Ctx) -> Response:
        found, more = await matching(ctx)
        deleted = await view.service.forget_many(ctx.caller, [m.id for m in found])
        left = " More match the filter: run it again for the next ones." if more else ""
        noun = "memory" if len(deleted) == 1 else "memories"
        return message(ctx, 200, "Forgotten", f"{len(deleted)} {noun} forgotten.{left}", back=True)

    # ------------------------------------------------------------------- export

    async def export(ctx: Ctx) -> Response:
        lines: list[str] = []
        await view.service.export([ctx.caller.tenant], write=lines.append)
        body = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        name = f"mcp-memory-{ctx.caller.tenant}.jsonl".replace('"', "")
        return PlainTextResponse(
            body,
            media_type="application/x-ndjson",
            headers={"content-disposition": f'attachment; filename="{_ascii(name)}"'},
        )

    # ------------------------------------------------------------------- stats

    async def stats(ctx: Ctx) -> Response:
        counted = await view.service.stats(ctx.caller)
        times, more_times = await view.service.created_times(ctx.caller, cap=GROWTH_SCAN)
        tags: dict[str, int] = {}
        read = 0
        cursor = None
        while read < TAG_SCAN:
            result = await view.service.page(ctx.caller, limit=200, cursor=cursor)
            for m in result.memories:
                for tag in m.tags:
                    tags[tag] = tags.get(tag, 0) + 1
            read += len(result.memories)
            cursor = result.next_cursor
            if cursor is None:
                break
        top_tags = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[:30]
        return page(
            ctx,
            "stats.html",
            title="Stats",
            counted=counted,
            tags=top_tags,
            tag_count=len(tags),
            chart=render.growth_chart(times),
            read=read,
            tags_capped=cursor is not None,
            grown=len(times),
            growth_capped=more_times,
            about=view.about,
        )

    # ------------------------------------------------------------------- operator

    async def tenants(ctx: Ctx) -> Response:
        if not view.operator:
            return message(ctx, 404, "Not found", "There is no such page.")
        if ctx.request.method == "POST":
            from mcp_memory.core.identity import parse_tenant

            chosen = parse_tenant(ctx.one("tenant"), "tenant")
            response = RedirectResponse(f"{base}/", 303)
            response.set_cookie(
                TENANT_COOKIE, view.access.signed("tenant", chosen), httponly=True, samesite="strict", path=base or "/"
            )
            return response
        listed = await view.service.tenants()
        return page(ctx, "tenants.html", title="Tenants", listed=listed)

    async def stylesheet_route(request: Request) -> Response:
        return Response(stylesheet, media_type="text/css", headers={"cache-control": "max-age=3600"})

    routes = [
        Route(f"{base}/login", login, methods=["GET", "POST"]),
        Route(f"{base}/logout", guarded(logout, "ui.logout"), methods=["POST"]),
        Route(f"{base}/ui.css", stylesheet_route),
        Route("/favicon.ico" if not base else f"{base}/favicon.ico", lambda request: Response(status_code=204)),
        Route(f"{base}/", guarded(browse)),
        Route(f"{base}/search", guarded(search)),
        Route(f"{base}/m/{{memory_id}}", guarded(memory)),
        Route(f"{base}/m/{{memory_id}}/edit", guarded(edit, "ui.edit"), methods=["POST"]),
        Route(f"{base}/m/{{memory_id}}/forget", guarded(forget_confirm)),
        Route(f"{base}/m/{{memory_id}}/forget", guarded(forget, "ui.forget"), methods=["POST"]),
        Route(f"{base}/forget", guarded(forget_many_preview)),
        Route(f"{base}/forget", guarded(forget_many, "ui.forget_many"), methods=["POST"]),
        Route(f"{base}/export", guarded(export, "ui.export")),
        Route(f"{base}/stats", guarded(stats)),
        Route(f"{base}/tenants", guarded(tenants, "ui.tenant"), methods=["GET", "POST"]),
    ]
    if base:
        routes.append(Route(base, lambda request: RedirectResponse(f"{base}/", 307)))
    return SecurityHeaders(Starlette(routes=routes))


def local_caller(access: Access, default: Caller, operator: bool) -> Callable[[Request], Caller]:
    """`mcp-memory ui`'s caller: its tenant, or in operator mode the tenant chosen on the Tenants page."""

    def caller_of(request: Request) -> Caller:
        if operator:
            chosen = access.unsigned("tenant", request.cookies.get(TENANT_COOKIE))
            if chosen:
                return Caller(chosen, default.conversation)
        return default

    return caller_of


def _ascii(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)


def _why(similarity: float, keyword: float, relevance: float) -> dict[str, float]:
    """How much of a result's relevance the embedding gave and how much the keywords did."""
    embedding = max(min(similarity, relevance), 0.0)
    words = max(relevance - embedding, 0.0)
    total = embedding + words
    return {"embedding": embedding / total if total else 0.0, "keywords": words / total if total else 0.0}


class SecurityHeaders:
    """Adds the CSP and the other security headers to every answer of `app`."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in self.extra if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)
