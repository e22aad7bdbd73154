"""The hook socket's side of the CLI's commands (server/hooks/commands.py, results.py): a command
of the serving process's own tenant and settings is answered with the service's result, rebuilt
on the CLI's side as the same objects; another tenant's, other settings', or a malformed one is
refused and nothing is written (docs/cli.md#a-running-server-answers)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_memory.cli.hooks.served import NotServed, Served
from mcp_memory.core.errors import BudgetExceeded, InvalidArgument, StoreError
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.requests import RecallRequest, RememberRequest
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.listener import HookSocket
from mcp_memory.server.hooks.results import Undecodable, decode, decode_error, encode, encode_error
from tests.conftest import Env
from tests.hooks.support import environ

KEY = "k" * 32
ACME = Caller("acme")


@pytest.fixture
async def socket_of_acme(env: Env, tmp_path: Path):
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    path = folder.socket_path("acme", variables)
    server = HookSocket(env.service, ACME, NullLog(), path=path, settings_key=lambda: KEY)
    await server.start()
    try:
        yield path
    finally:
        await server.close()


async def ask_raw(path: Path, question: dict[str, Any]) -> dict[str, Any]:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(json.dumps(question).encode() + b"\n")
    await writer.drain()
    raw = await reader.read()
    writer.close()
    return json.loads(raw)


def command(op: str, args: dict[str, Any], tenant: str = "acme", settings: str = KEY) -> dict[str, Any]:
    return {
        "v": 1,
        "kind": "command",
        "tenant": tenant,
        "conversation": None,
        "settings": settings,
        "op": op,
        "args": encode(args),
    }


async def test_a_recall_through_the_socket_is_the_services_own_result(env: Env, socket_of_acme: Path) -> None:
    await env.service.remember(ACME, "Deploys run on Fridays.", tags=["deploy"])
    mine = await env.service.recall(ACME, "when do deploys run")

    theirs = await Served(socket_of_acme, KEY).recall_request(
        ACME, RecallRequest.parse({"query": "when do deploys run"})
    )

    assert decode(json.loads(json.dumps(encode(mine)))) == mine  # every field, as the socket carries it
    assert [(r.memory, r.similarity, r.relevance) for r in theirs.results] == [
        (r.memory, r.similarity, r.relevance) for r in mine.results
    ]
    assert (theirs.confidence, theirs.probability) == (mine.confidence, mine.probability)
    assert theirs.results[0].stats.access_count == 1  # the first recall counted, by the same service
    assert isinstance(theirs.results[0].memory.tags, tuple)


async def test_remember_list_stats_and_forget_through_the_socket_write_and_read_the_store(
    env: Env, socket_of_acme: Path
) -> None:
    served = Served(socket_of_acme, KEY)

    asked = RememberRequest.parse({"content": "배포는 금요일에 한다.", "type": "pattern", "tags": ["배포"]})
    stored = await served.remember_request(ACME, asked)
    page = await served.list(ACME, limit=5)
    counted = await served.stats(ACME)
    gone = await served.forget(ACME, stored.memory.id)

    assert stored.created and stored.memory.content == "배포는 금요일에 한다."
    assert [m.id for m in page.memories] == [stored.memory.id]
    assert (counted.total, counted.by_type) == (1, {"pattern": 1})
    assert gone.deleted and (await env.service.stats(ACME)).total == 0


async def test_the_services_refusal_comes_back_as_the_same_error_naming_the_field(socket_of_acme: Path) -> None:
    with pytest.raises(InvalidArgument) as refused:
        await Served(socket_of_acme, KEY).list(ACME, cursor="v1-not-a-cursor")

    assert refused.value.field == "cursor"
    assert refused.value.worded(lambda f: "--" + f).startswith("--cursor is not a cursor this server gave out")


async def test_another_tenants_command_is_refused_and_nothing_is_written(env: Env, socket_of_acme: Path) -> None:
    reply = await ask_raw(
        socket_of_acme,
        command("remember_request", {"request": RememberRequest.parse({"content": "Globex secret."})}, tenant="globex"),
    )

    assert reply == {"ok": False, "refused": "tenant"}
    assert (await env.service.stats(Caller("globex"))).total == 0 and (await env.service.stats(ACME)).total == 0
    with pytest.raises(NotServed):
        await Served(socket_of_acme, KEY).stats(Caller("globex"))


async def test_a_command_with_other_settings_is_refused_and_nothing_is_written(env: Env, socket_of_acme: Path) -> None:
    reply = await ask_raw(
        socket_of_acme,
        command(
            "remember_request", {"request": RememberRequest.parse({"content": "Deploys on Fridays."})}, settings="other"
        ),
    )

    assert reply == {"ok": False, "refused": "settings"}
    assert (await env.service.stats(ACME)).total == 0


@pytest.mark.parametrize(
    "question",
    [
        command("delete_everything", {}),
        command("recall_request", {"request": RememberRequest.parse({"content": "Deploys on Fridays."})}),
        command("forget", {"memory_id": "01KDVDNKR00000000000000000", "tenant": "globex"}),
        {**command("stats", {}), "args": {"c": "os:system", "f": {}}},
        {**command("stats", {}), "settings": None},
        {**command("stats", {}), "tenant": ""},
        {**command("stats", {}), "conversation": 7},
    ],
    ids=[
        "unknown op",
        "a request of another kind",
        "unknown argument",
        "a class from elsewhere",
        "no settings",
        "empty tenant",
        "conversation",
    ],
)
async def test_a_malformed_command_is_refused_as_a_question(socket_of_acme: Path, question: dict[str, Any]) -> None:
    assert await ask_raw(socket_of_acme, question) == {"ok": False, "refused": "question"}


def test_encoding_keeps_tuples_dicts_and_infinities_apart_from_lists() -> None:
    value = {"a": (1, "b", [2.5, None]), "b": [True, float("inf")]}

    assert decode(json.loads(json.dumps(encode(value)))) == value
    assert isinstance(decode(encode(value))["a"], tuple)


@pytest.mark.parametrize(
    "data",
    [
        {"c": "subprocess:Popen", "f": {}},
        {"c": "mcp_memory.core.model:MEMORY_TYPES", "f": {}},
        {"c": "mcp_memory.core.model:Caller", "f": {"tenant": "acme"}},
        {"x": 1},
        {"t": [1], "d": {}},
    ],
    ids=["another module", "not a dataclass", "a missing field", "unknown wrapper", "two wrappers"],
)
def test_anything_the_encoder_does_not_write_is_refused(data: Any) -> None:
    with pytest.raises(Undecodable):
        decode(data)


def test_an_error_comes_back_as_its_nearest_class_with_its_text_and_field() -> None:
    class Driver(StoreError):  # a backend's own error: the CLI reports every StoreError alike
        pass

    budget = decode_error(encode_error(BudgetExceeded("{field} is too large: 9 KiB", field="content")))
    driver = decode_error(encode_error(Driver("the table is locked")))

    assert (
        type(budget) is BudgetExceeded and budget.field == "content" and str(budget) == "`content` is too large: 9 KiB"
    )
    assert type(driver) is StoreError and str(driver) == "the table is locked"
