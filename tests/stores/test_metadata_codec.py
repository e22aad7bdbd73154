"""The metadata record every backend stores, and its byte budget (docs/storage.md)."""

from __future__ import annotations

import json

import pytest

from mcp_memory.core.errors import BudgetExceeded, InvalidArgument, StoreError
from mcp_memory.core.model import Memory
from mcp_memory.stores.records import assert_within_metadata_budget, from_metadata, metadata_bytes, to_metadata

CREATED = "2026-07-01T00:00:00.000Z"
ID = "01J1KX2Y3Z4W5V6T7S8R9Q0P1N"


def memory(**fields: object) -> Memory:
    base: dict[str, object] = {
        "id": ID,
        "tenant": "acme",
        "content": "Deploys drain streams first.",
        "created_at": CREATED,
    }
    return Memory(**{**base, **fields})  # type: ignore[arg-type]


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- to_metadata


def test_a_full_record_lists_its_keys_in_the_reference_order() -> None:
    md = to_metadata(
        memory(
            category="deploy", scope="conversation", conversation="chat:1", tags=("k8s", "ops"), memory_type="pattern"
        )
    )
    assert list(md) == [
        "tenantId",
        "memoryType",
        "category",
        "scope",
        "conversation",
        "content",
        "createdAt",
        "tags",
        "trustBase",
    ]
    assert md == {
        "tenantId": "acme",
        "memoryType": "pattern",
        "category": "deploy",
        "scope": "conversation",
        "conversation": "chat:1",
        "content": "Deploys drain streams first.",
        "createdAt": CREATED,
        "tags": ["k8s", "ops"],
        "trustBase": 1,
    }


def test_a_plain_record_omits_every_optional_key_rather_than_storing_it_empty() -> None:
    md = to_metadata(memory())
    assert list(md) == ["tenantId", "memoryType", "content", "createdAt", "trustBase"]
    assert [] not in md.values()


def test_a_project_memory_keeps_its_conversation_as_provenance_without_a_scope() -> None:
    md = to_metadata(memory(conversation="chat:1"))
    assert "scope" not in md
    assert md["conversation"] == "chat:1"


def test_empty_category_and_tags_are_left_out() -> None:
    md = to_metadata(memory(category="", tags=()))
    assert "category" not in md
    assert "tags" not in md


def test_a_whole_trust_base_is_written_as_an_integer_like_javascript() -> None:
    assert compact(to_metadata(memory())).endswith('"trustBase":1}')
    assert compact(to_metadata(memory(trust_base=0.5))).endswith('"trustBase":0.5}')


# --------------------------------------------------------------------------- from_metadata


def test_a_record_reads_back_as_the_memory_that_was_written() -> None:
    original = memory(
        category="deploy", scope="conversation", conversation="chat:1", tags=("k8s",), memory_type="reference"
    )
    assert from_metadata(ID, to_metadata(original), "acme") == original


@pytest.mark.parametrize("md", [None, "text", ["tenantId", "acme"], 42])
def test_something_that_is_not_a_record_is_skipped(md: object) -> None:
    assert from_metadata(ID, md, "acme") is None


def test_a_record_without_an_id_is_skipped() -> None:
    assert from_metadata("", to_metadata(memory()), "acme") is None


@pytest.mark.parametrize(
    "broken",
    [{"content": 7}, {"content": None}, {"tenantId": 7}, {"tenantId": None}],
)
def test_a_record_whose_content_or_tenant_is_not_text_is_skipped(broken: dict[str, object]) -> None:
    assert from_metadata(ID, {**to_metadata(memory()), **broken}, "acme") is None


def test_another_tenants_record_is_never_returned() -> None:
    assert from_metadata(ID, to_metadata(memory(tenant="other")), "acme") is None


@pytest.mark.parametrize("memory_type", ["fact", None, 3, "Project"])
def test_an_unknown_memory_type_reads_as_project(memory_type: object) -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "memoryType": memory_type}, "acme")
    assert read is not None
    assert read.memory_type == "project"


def test_only_string_tags_survive() -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "tags": ["ok", 3, None, "fine"]}, "acme")
    assert read is not None
    assert read.tags == ("ok", "fine")


def test_tags_that_are_not_a_list_read_as_none() -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "tags": "ops"}, "acme")
    assert read is not None
    assert read.tags == ()


@pytest.mark.parametrize("created_at", ["not-a-date", "", 1782864000000, None])
def test_an_unreadable_creation_time_reads_as_the_epoch(created_at: object) -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "createdAt": created_at}, "acme")
    assert read is not None
    assert read.created_at == "1970-01-01T00:00:00.000Z"


def test_a_readable_creation_time_is_kept_as_written() -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "createdAt": "2026-07-01T09:00:00.000+09:00"}, "acme")
    assert read is not None
    assert read.created_at == "2026-07-01T09:00:00.000+09:00"


@pytest.mark.parametrize("scope", ["project", "thread", "", None])
def test_any_scope_but_conversation_reads_as_project(scope: object) -> None:
    read = from_metadata(ID, {**to_metadata(memory(conversation="chat:1")), "scope": scope}, "acme")
    assert read is not None
    assert read.scope == "project"
    assert read.conversation == "chat:1"


def test_a_non_text_category_or_conversation_is_dropped() -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "category": 5, "conversation": ["chat:1"]}, "acme")
    assert read is not None
    assert read.category is None
    assert read.conversation is None


@pytest.mark.parametrize("trust", ["high", None, True, [1]])
def test_a_trust_base_that_is_not_a_number_reads_as_one(trust: object) -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "trustBase": trust}, "acme")
    assert read is not None
    assert read.trust_base == 1.0


def test_a_numeric_trust_base_is_kept() -> None:
    read = from_metadata(ID, {**to_metadata(memory()), "trustBase": 0.5}, "acme")
    assert read is not None
    assert read.trust_base == 0.5


# --------------------------------------------------------------------------- budget


def test_content_of_exactly_32000_bytes_fits() -> None:
    assert_within_metadata_budget(memory(content="a" * 32_000))


def test_content_over_32000_bytes_is_refused_with_advice() -> None:
    with pytest.raises(BudgetExceeded) as refused:
        assert_within_metadata_budget(memory(content="a" * 32_001))
    message = str(refused.value)
    assert "32001 bytes" in message
    assert "32000" in message
    assert "Store the essential fact" in message


def test_content_is_measured_in_utf8_bytes_not_characters() -> None:
    content = "회" * (32_000 // 3 + 1)  # 10 667 characters, 32 001 bytes
    with pytest.raises(BudgetExceeded, match="Store the essential fact"):
        assert_within_metadata_budget(memory(content=content))


def test_a_budget_refusal_is_the_callers_input_error_naming_the_field() -> None:
    with pytest.raises(InvalidArgument) as refused:
        assert_within_metadata_budget(memory(content="a" * 32_001))
    assert isinstance(refused.value, StoreError)  # what the import's one-by-one retry catches
    assert str(refused.value).startswith("the content is 32001 bytes")


def test_filterable_metadata_over_2000_bytes_is_refused() -> None:
    with pytest.raises(BudgetExceeded, match=r"filterable metadata is \d+ bytes") as refused:
        assert_within_metadata_budget(memory(category="c" * 2_000))
    assert "2000 byte limit" in str(refused.value)
    assert "category" in str(refused.value)


def test_filterable_metadata_is_counted_without_the_non_filterable_keys() -> None:
    # Content, createdAt, tags and trustBase do not count against the 2000-byte filterable budget.
    fixed = len(compact({"tenantId": "acme", "memoryType": "project", "category": ""}))
    assert_within_metadata_budget(memory(category="c" * (2_000 - fixed), content="a" * 20_000))


def test_metadata_over_40000_bytes_in_all_is_refused() -> None:
    with pytest.raises(BudgetExceeded, match="Shorten the tags") as refused:
        assert_within_metadata_budget(memory(content="a" * 32_000, tags=tuple(f"{i:03d}" * 33 for i in range(90))))
    assert "40000 byte limit" in str(refused.value)


def test_metadata_is_counted_as_the_utf8_bytes_of_keys_and_values_not_their_json_escapes() -> None:
    assert metadata_bytes({"content": 'a"\r\n\\', "tags": ["회", "b"], "trustBase": 0.5}) == 7 + 5 + 4 + 4 + 9 + 3


@pytest.mark.parametrize("body", ['"', "\\", "\r\n", "\u0001x"])
def test_the_largest_content_tags_category_tenant_and_conversation_fit_whatever_they_are_made_of(body: str) -> None:
    content = (body * 32_000)[:32_000]
    tags = tuple(f"{i:02d}" + '"' * 62 for i in range(20))
    md = memory(
        tenant="t" * 128,
        content=content,
        tags=tags,
        category='"' * 128,
        scope="conversation",
        conversation='"' * 512,
        memory_type="conversation",
        trust_base=0.30000000000000004,
    )
    assert_within_metadata_budget(md)
    assert metadata_bytes(to_metadata(md)) < 34_200  # 32,000 + at most ~2,200 for the rest


def test_tags_count_toward_the_40000_byte_total() -> None:
    with pytest.raises(BudgetExceeded, match="Shorten the tags"):
        assert_within_metadata_budget(memory(content="a" * 30_000, tags=tuple("t" * 100 for _ in range(100))))
