"""Paged block listing: ``list_blocks_page`` gives the pages of ``list_blocks``, in its
order, with the listing's total, on every backend; bad offsets and limits are refused
with a clear error."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel._errors import InvalidInputError
from satchel.memory import (
    MAX_PAGE_LIMIT,
    AgentMemory,
    Block,
    BlockKind,
    BlockPage,
    MemoryStore,
    Permission,
)

pytestmark = pytest.mark.anyio

_KINDS = (BlockKind.CORE, BlockKind.WORKING, BlockKind.ARCHIVAL)
_LABELS = ["Zeta", "alpha", "beta", "Été", "a-1", "a_2", "B", "émile", "z9", "Alpha"]


async def _fill(store: MemoryStore) -> None:
    for n, label in enumerate(_LABELS):
        await store.create_block("ada", label, f"text {n}", kind=_KINDS[n % 3])
    await store.create_block("bo", "plans", "shared plans", kind=BlockKind.WORKING)
    await store.share_block("bo", "plans", "ada", Permission.READ_ONLY)
    await store.create_block("bo", "alpha", "bo's own alpha, shared too")
    await store.share_block("bo", "alpha", "ada", Permission.READ_WRITE)
    await store.create_block("bo", "secret", "not shared")


async def _all_pages(
    store: MemoryStore, limit: int, kinds: list[BlockKind] | None = None
) -> tuple[list[Block], list[BlockPage]]:
    pages = [await store.list_blocks_page("ada", kinds=kinds, limit=limit)]
    while pages[-1].next_offset is not None:
        offset = pages[-1].next_offset
        pages.append(await store.list_blocks_page("ada", kinds=kinds, offset=offset, limit=limit))
    return [b for page in pages for b in page.blocks], pages


@pytest.mark.parametrize("limit", [1, 3, 5, 12, 100])
async def test_pages_joined_are_the_whole_listing_in_its_order(
    store: MemoryStore, limit: int
) -> None:
    await _fill(store)
    whole = await store.list_blocks("ada")
    assert len(whole) == len(_LABELS) + 2
    assert "secret" not in {b.label for b in whole}
    joined, pages = await _all_pages(store, limit)
    assert joined == whole
    assert {page.total for page in pages} == {len(whole)}
    assert [page.offset for page in pages] == list(range(0, len(whole), limit))
    assert all(len(page.blocks) <= limit and page.limit == limit for page in pages)


@pytest.mark.parametrize(
    "kinds", [[BlockKind.CORE, BlockKind.WORKING], [BlockKind.ARCHIVAL], [BlockKind.WORKING]]
)
async def test_a_page_of_some_kinds_matches_the_listing_of_those_kinds(
    store: MemoryStore, kinds: list[BlockKind]
) -> None:
    await _fill(store)
    whole = await store.list_blocks("ada", kinds)
    joined, pages = await _all_pages(store, 2, kinds)
    assert joined == whole
    assert pages[0].total == len(whole)
    assert {b.kind for b in joined} <= set(kinds)


async def test_kinds_given_twice_or_as_strings_count_once(store: MemoryStore) -> None:
    await _fill(store)
    page = await store.list_blocks_page(
        "ada", kinds=[BlockKind.CORE, BlockKind.CORE, "working"], limit=50
    )  # type: ignore[list-item]
    assert page.blocks == await store.list_blocks("ada", [BlockKind.CORE, BlockKind.WORKING])


async def test_a_shared_block_is_listed_as_its_recipient_sees_it(store: MemoryStore) -> None:
    await _fill(store)
    page = await store.list_blocks_page("ada", kinds=[BlockKind.WORKING], limit=50)
    shared = [b for b in page.blocks if b.agent == "bo"]
    assert [b.label for b in shared] == ["plans"]
    assert shared[0] == await store.get_block("ada", "bo/plans")


async def test_an_offset_past_the_end_gives_an_empty_page_with_the_total(
    store: MemoryStore,
) -> None:
    await _fill(store)
    page = await store.list_blocks_page("ada", offset=10_000, limit=10)
    assert page.blocks == []
    assert page.total == len(_LABELS) + 2
    assert page.next_offset is None


async def test_an_unknown_agent_has_an_empty_listing(store: MemoryStore) -> None:
    await _fill(store)
    page = await store.list_blocks_page("nobody")
    assert (page.blocks, page.total, page.next_offset) == ([], 0, None)


async def test_the_agent_view_pages_its_own_blocks(store: MemoryStore) -> None:
    await _fill(store)
    memory = AgentMemory(store, "bo")
    page = await memory.list_blocks_page(limit=2)
    assert [b.label for b in page.blocks] == ["alpha", "secret"]
    assert (page.total, page.next_offset) == (3, 2)


@pytest.mark.parametrize(
    ("offset", "limit", "named"),
    [
        (-1, 10, "offset"),
        (2**63, 10, "offset"),
        ("3", 10, "offset"),
        (True, 10, "offset"),
        (1.5, 10, "offset"),
        (0, 0, "limit"),
        (0, -5, "limit"),
        (0, MAX_PAGE_LIMIT + 1, "limit"),
        (0, 10**18, "limit"),
        (0, None, "limit"),
    ],
)
async def test_a_bad_offset_or_limit_is_refused_clearly(
    store: MemoryStore, offset: object, limit: object, named: str
) -> None:
    await _fill(store)
    with pytest.raises(InvalidInputError, match=named) as caught:
        await store.list_blocks_page("ada", offset=offset, limit=limit)  # type: ignore[arg-type]
    assert named in caught.value.details


async def test_an_unknown_kind_is_refused_clearly(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="no kind of block") as caught:
        await store.list_blocks_page("ada", kinds=["core", "attic"])  # type: ignore[list-item]
    assert caught.value.details == {"kind": "attic"}


async def test_a_bad_agent_name_is_refused(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError):
        await store.list_blocks_page("")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(offset=st.integers(min_value=0, max_value=20), limit=st.integers(1, 15))
async def test_any_page_is_the_matching_slice_of_the_listing(
    store: MemoryStore, offset: int, limit: int
) -> None:
    if not await store.list_blocks("ada"):
        await _fill(store)
    whole = await store.list_blocks("ada")
    page = await store.list_blocks_page("ada", offset=offset, limit=limit)
    assert page.blocks == whole[offset : offset + limit]
    assert page.total == len(whole)
    expected_next = offset + limit if offset + limit < len(whole) else None
    assert page.next_offset == expected_next
