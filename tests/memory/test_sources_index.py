"""Sources: folders of notes indexed beside an agent's memory, on both backends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satchel._errors import InvalidInputError, ToolFailed, ToolRetry
from satchel.memory import Domain, MemoryStore
from satchel.memory.sources._chunks import CHUNK_CHARS, chunk_text
from satchel.sources import SourceIndex

pytestmark = pytest.mark.anyio


def _notes(root: Path) -> Path:
    notes = root / "notes"
    (notes / "health").mkdir(parents=True)
    (notes / "health" / "dentist.md").write_text(
        "# Dentist\n\nDr. Okafor, 14 Rue Lepic.\nThe next cleaning is booked for March.\n"
    )
    (notes / "garden.md").write_text(
        "# Garden\n\n" + "\n".join(f"Row {i}: tomatoes and basil" for i in range(1, 80)) + "\n"
        "\n## Compost\nTurn the compost heap every second Sunday.\n"
    )
    return notes


async def test_a_folder_of_notes_is_searchable_with_file_and_line(
    store: MemoryStore, tmp_path: Path
) -> None:
    index = SourceIndex(store, "ada")
    report = await index.add(_notes(tmp_path))
    assert sorted(report.indexed) == ["notes/garden.md", "notes/health/dentist.md"]
    hits = await index.search("when is the compost turned")
    assert hits[0].file == "notes/garden.md"
    assert "compost heap" in hits[0].text
    lines = (tmp_path / "notes" / "garden.md").read_text().split("\n")
    assert any("compost heap" in line for line in lines[hits[0].start - 1 : hits[0].end])
    dentist = await index.search("dentist address")
    assert dentist[0].file == "notes/health/dentist.md"
    assert (dentist[0].start, dentist[0].end) == (1, 4)


async def test_sources_stay_out_of_the_agents_own_memory(
    store: MemoryStore, tmp_path: Path
) -> None:
    await store.create_block("ada", "human", "Ada likes tomatoes.")
    await SourceIndex(store, "ada").add(_notes(tmp_path))
    hits = await store.search("ada", "compost heap Sunday", domains=Domain.ALL)
    assert all("compost" not in hit.text for hit in hits)
    assert [b.label for b in await store.list_blocks("ada")] == ["human"]


async def test_an_edited_note_is_found_anew_and_a_deleted_one_leaves(
    store: MemoryStore, tmp_path: Path
) -> None:
    notes = _notes(tmp_path)
    index = SourceIndex(store, "ada")
    await index.add(notes)
    dentist = notes / "health" / "dentist.md"
    dentist.write_text("# Dentist\n\nMoved: Dr. Okafor is now at 3 Avenue Trudaine.\n")
    os.utime(dentist, ns=(1, 1))  # a new modification time, whatever the clock says
    (notes / "garden.md").unlink()
    report = await index.refresh()
    assert report.indexed == ["notes/health/dentist.md"]
    assert report.removed == ["notes/garden.md"]
    hits = await index.search("where is the dentist now")
    assert "Avenue Trudaine" in hits[0].text
    assert all("Rue Lepic" not in hit.text for hit in hits)
    assert all(hit.file != "notes/garden.md" for hit in await index.search("compost tomatoes"))
    assert [r.name for r in await index.files()] == ["notes/health/dentist.md"]


async def test_adding_again_reindexes_nothing_unchanged(store: MemoryStore, tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    index = SourceIndex(store, "ada")
    await index.add(notes)
    again = await index.add(notes)
    assert (again.indexed, again.unchanged) == ([], 2)


async def test_binary_huge_and_outside_links_are_skipped_with_a_reason(
    store: MemoryStore, tmp_path: Path
) -> None:
    notes = _notes(tmp_path)
    (notes / "photo.bin").write_bytes(b"\x00\x01\x02" * 100)
    (notes / "huge.txt").write_text("x" * 5_000_001)
    secret = tmp_path / "secret.txt"
    secret.write_text("the safe code is 4711")
    (notes / "link.txt").symlink_to(secret)
    (notes / ".git").mkdir()
    (notes / ".git" / "HEAD").write_text("ref: refs/heads/main")
    report = await SourceIndex(store, "ada").add(notes)
    reasons = {p.name: r for p, r in ((s.path, s.reason) for s in report.skipped)}
    assert reasons == {
        "photo.bin": "binary",
        "huge.txt": "larger than 5 MB",
        "link.txt": "a link to a file outside the source",
    }
    assert all("4711" not in hit.text for hit in await SourceIndex(store, "ada").search("code"))


async def test_a_pdf_is_read_through_pypdf(store: MemoryStore, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "lease.pdf").write_bytes(_pdf("The rent is due on the fifth of each month"))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    index = SourceIndex(store, "ada")
    report = await index.add(folder)
    assert report.indexed == ["docs/lease.pdf"]
    assert [s.path.name for s in report.skipped] == ["broken.pdf"]
    hits = await index.search("when is the rent due")
    assert hits[0].file == "docs/lease.pdf"
    assert "fifth" in hits[0].text


async def test_open_file_shows_a_window_of_lines_read_from_disk(
    store: MemoryStore, tmp_path: Path
) -> None:
    index = SourceIndex(store, "ada")
    await index.add(_notes(tmp_path))
    window = await index.open("notes/garden.md", line=3, lines=2)
    assert (window.start, window.end) == (3, 4)
    assert window.lines == ["Row 1: tomatoes and basil", "Row 2: tomatoes and basil"]
    with pytest.raises(ToolRetry, match=r"notes/garden\.md"):
        await index.open("garden.md")
    with pytest.raises(ToolRetry, match="has 84 lines"):
        await index.open("notes/garden.md", line=500)
    (tmp_path / "notes" / "garden.md").unlink()
    with pytest.raises(ToolFailed, match="no longer on disk"):
        await index.open("notes/garden.md")


async def test_grep_finds_lines_by_regex_bounded_and_refuses_a_bad_pattern(
    store: MemoryStore, tmp_path: Path
) -> None:
    index = SourceIndex(store, "ada")
    await index.add(_notes(tmp_path))
    found = await index.grep(r"row 1\d:", limit=3)
    assert [(h.file, h.line) for h in found.hits] == [
        ("notes/garden.md", 12),
        ("notes/garden.md", 13),
        ("notes/garden.md", 14),
    ]
    assert found.truncated
    only = await index.grep("okafor", files="notes/health/*")
    assert [(h.file, h.line) for h in only.hits] == [("notes/health/dentist.md", 3)]
    with pytest.raises(ToolRetry, match="not a regular expression"):
        await index.grep("tomatoes (and")


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(?R)", "recursion"),
        ("x(?1)(a)", "recursion"),
        ("(?&n)(?<n>a)", "recursion"),
        ("a{99999999}", "repeats too many times"),
        ("a{,99999999}", "repeats too many times"),
        ("(a{1000}){1000}", "repeats too many times"),
    ],
)
async def test_a_pattern_that_would_eat_the_machine_is_refused_before_it_runs(
    store: MemoryStore, tmp_path: Path, pattern: str, why: str
) -> None:
    # each of these takes gigabytes in the regex engine (compiling, or recursing on a match)
    index = SourceIndex(store, "ada")
    await index.add(_notes(tmp_path))
    with pytest.raises(ToolRetry, match=why):
        await index.grep(pattern)
    assert (await index.grep(r"\d{1,2}: tomatoes", limit=1)).hits


async def test_a_source_is_removed_with_its_files_and_a_clash_of_names_is_refused(
    store: MemoryStore, tmp_path: Path
) -> None:
    index = SourceIndex(store, "ada")
    await index.add(_notes(tmp_path))
    other = tmp_path / "elsewhere" / "notes"
    other.mkdir(parents=True)
    with pytest.raises(InvalidInputError, match="a source named 'notes' exists already"):
        await index.add(other)
    removed = await index.remove("notes")
    assert sorted(removed) == ["notes/garden.md", "notes/health/dentist.md"]
    assert await index.files() == []
    assert await index.search("compost") == []
    with pytest.raises(InvalidInputError, match="no source"):
        await index.remove("notes")


async def test_an_index_run_stopped_half_way_is_finished_by_the_next(
    store: MemoryStore, tmp_path: Path
) -> None:
    notes = _notes(tmp_path)
    index = SourceIndex(store, "ada")
    await index.add(notes)
    # the passages of garden.md are there, its record is gone: as if stopped before it
    from satchel.memory.sources._records import file_label, sources_agent

    await store.delete_block(sources_agent("ada"), file_label("notes/garden.md"))
    report = await index.add(notes)
    assert report.indexed == ["notes/garden.md"]
    assert (await index.search("compost heap"))[0].file == "notes/garden.md"


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=5_000))
def test_passages_cover_every_line_and_stay_within_their_size(text: str) -> None:
    chunks = chunk_text(text)
    lines = text.split("\n")
    covered = {n for c in chunks for n in range(c.start, c.end + 1)}
    for number, line in enumerate(lines, start=1):
        if line.strip():
            assert number in covered
    for chunk in chunks:
        assert chunk.text.strip()
        assert len(chunk.text) <= CHUNK_CHARS * 2


def _pdf(text: str) -> bytes:
    """A one-page PDF whose page shows ``text`` in Helvetica."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


async def test_the_file_tools_search_grep_and_open_through_a_registry(
    store: MemoryStore, tmp_path: Path
) -> None:
    from satchel.builtin import memory_toolset
    from satchel.memory import AgentMemory
    from satchel.registry import ToolRegistry
    from satchel.sources import source_tools
    from satchel.tools import ToolContext

    await SourceIndex(store, "ada").add(_notes(tmp_path))
    registry = ToolRegistry([*memory_toolset(store), *source_tools(store)])
    ctx = ToolContext(agent="ada", memory=AgentMemory(store, "ada"))

    found = await registry.call("search_files", {"query": "compost heap"}, ctx)
    assert found.error is None
    assert found.output is not None
    first = found.output.model_dump()["results"][0]
    assert (first["file"], "compost" in first["text"]) == ("notes/garden.md", True)

    lines = await registry.call("grep_files", {"pattern": "okafor"}, ctx)
    assert lines.output is not None
    assert lines.output.model_dump()["matches"] == [
        {"file": "notes/health/dentist.md", "line": 3, "text": "Dr. Okafor, 14 Rue Lepic."}
    ]
    opened = await registry.call("open_file", {"file": "notes/health/dentist.md", "line": 3}, ctx)
    assert opened.output is not None
    assert opened.output.model_dump()["text"].splitlines()[0] == "3| Dr. Okafor, 14 Rue Lepic."

    bad = await registry.call("grep_files", {"pattern": "(unclosed"}, ctx)
    assert bad.error is not None
    assert bad.error.kind == "retry"
    missing = await registry.call("open_file", {"file": "notes/dentist.md"}, ctx)
    assert missing.error is not None
    assert "notes/health/dentist.md" in missing.error.message

    # search with domain "all" names the file and lines of a passage
    mixed = await registry.call("search", {"query": "compost heap Sunday"}, ctx)
    assert mixed.output is not None
    results = mixed.output.model_dump()["results"]
    files = [r for r in results if r["domain"] == "files"]
    assert files
    assert files[0]["label"].startswith("notes/garden.md:")
    archival = await registry.call(
        "search", {"query": "compost heap Sunday", "domain": "archival_memory"}, ctx
    )
    assert archival.output is not None
    assert all(r["domain"] != "files" for r in archival.output.model_dump()["results"])

    # a tool of the author's own reaches the same index
    hits = await ctx.sources().search("dentist")
    assert hits[0].file == "notes/health/dentist.md"


def test_a_context_without_memory_has_no_sources() -> None:
    from satchel._errors import SatchelUsageError
    from satchel.tools import ToolContext

    with pytest.raises(SatchelUsageError, match="no sources"):
        ToolContext().sources()


async def test_a_watch_keeps_the_index_current_as_notes_change(
    store: MemoryStore, tmp_path: Path
) -> None:
    import anyio

    from satchel.sources import IndexReport, watch_sources

    notes = _notes(tmp_path)
    index = SourceIndex(store, "ada")
    await index.add(notes)
    (notes / "later.md").write_text("Before the watch: the boiler was serviced in May.\n")
    reports: list[IndexReport] = []
    changed = anyio.Event()

    def seen(report: IndexReport) -> None:
        reports.append(report)
        if report.indexed or report.removed:
            changed.set()

    ready = anyio.Event()
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: watch_sources(index, on_report=seen, ready=ready))
            await ready.wait()
            assert reports[0].indexed == ["notes/later.md"]  # the catch-up refresh
            changed = anyio.Event()
            (notes / "health" / "new.md").write_text("The physiotherapist is on Thursday.\n")
            (notes / ".git").mkdir()
            (notes / ".git" / "index").write_text("physiotherapist secret")
            await changed.wait()
            hits = await index.search("when is the physiotherapist")
            assert hits[0].file == "notes/health/new.md"
            changed = anyio.Event()
            (notes / "garden.md").unlink()
            await changed.wait()
            group.cancel_scope.cancel()
    names = [r.name for r in await index.files()]
    assert "notes/garden.md" not in names
    assert not any(".git" in n for n in names)


def test_a_final_newline_makes_no_passage_of_only_repeated_lines() -> None:
    text = "\n".join(f"line {i} " + "x" * 40 for i in range(40))
    assert chunk_text(text + "\n") == chunk_text(text)
    assert chunk_text(text + "\n\n\n") == chunk_text(text)


_HOSTILE = st.one_of(
    st.text(max_size=200),
    st.sampled_from(["(a+)+$", "(", "[", "\\", "*", "(?P<x", "a{99999999}", "\x00", "(?R)"]),
)


@given(pattern=_HOSTILE, name=st.text(max_size=300))
def test_any_pattern_or_file_name_is_an_answer_or_a_retry_never_a_crash(
    pattern: str, name: str
) -> None:
    import tempfile

    import anyio

    from satchel.memory import SQLiteStore

    async def check() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "notes"
            folder.mkdir()
            (folder / "a.md").write_text("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\nplain words\n")
            store = await SQLiteStore.open(Path(tmp) / "m.db")
            try:
                index = SourceIndex(store, "ada")
                await index.add(folder)
                refused: list[ToolRetry] = []
                try:
                    found = await index.grep(pattern, limit=5)
                    assert len(found.hits) <= 5
                except ToolRetry as exc:
                    refused.append(exc)
                try:
                    await index.open(name)
                except ToolRetry as exc:
                    refused.append(exc)
                for exc in refused:
                    assert exc.details.get("pattern", pattern[:200]) == pattern[:200]
                    assert "pattern" in exc.details or "no source file is named" in exc.message
                assert [r.name for r in await index.files()] == ["notes/a.md"]
            finally:
                await store.close()

    anyio.run(check)
