"""What every page of the web view renders with: the service, the login method, the log and the
templates of one view (docs/web.md).

`build_ui` puts the View on the Starlette app's state, so each page is a plain function that
finds it on its request, as Starlette's own endpoints find their app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from mcp_memory.core.errors import ContextError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.web import render
from mcp_memory.web.access import Access

#: The cookie holding the tenant chosen on the Tenants page (pages/tenants.py).
TENANT_COOKIE = "mcp_memory_ui_tenant"


class NoTenantChosen(ContextError):
    """A page of a view where a person chooses the tenant, before one is chosen."""

    def __init__(self) -> None:
        super().__init__("Choose a tenant first, on the Tenants page; nothing was changed.")


def never(request: Request) -> bool:
    return False


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
    #: Whether a request's tenant is set by its transport (a gateway's header under serve-http):
    #: then the Tenants page offers no choice.
    tenant_fixed: Callable[[Request], bool] = never
    templates: Any = field(init=False, repr=False)
    #: The one stylesheet, read once: it ships in the package.
    stylesheet: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.templates = render.environment()
        self.stylesheet = (Path(render.__file__).parent / "static" / "ui.css").read_text(encoding="utf-8")

    @property
    def chooses_tenant(self) -> bool:
        """Whether a person picks the tenant on the Tenants page: the operator's `--all-tenants`,
        or serve-http's key, which may use every tenant (docs/web.md#choosing-the-tenant)."""
        return self.operator or self.key_login

    def render(
        self,
        template: str,
        status: int = 200,
        *,
        session: str | None = None,
        caller: Caller | None = None,
        **values: Any,
    ) -> HTMLResponse:
        """A page; with a `session` it has the navigation, the tenant and the forms' CSRF token."""
        values.setdefault("title", "")
        html = self.templates.get_template(template).render(
            base=self.base,
            csrf=self.access.csrf(session) if session is not None else "",
            caller=caller,
            operator=self.operator,
            chooses_tenant=self.chooses_tenant,
            logged_in=session is not None,
            failed=status >= 400,
            **values,
        )
        return HTMLResponse(html, status)

    def message(self, status: int, title: str, text: str, **values: Any) -> HTMLResponse:
        """A page that only says something, outside a session (a refusal, a login's failure)."""
        return self.render("message.html", status, title=title, message=text, **values)


def view_of(request: Request) -> View:
    """The View serving `request` (build_ui keeps it on the app's state)."""
    view: View = request.app.state.view
    return view
