"""``satchel memory import`` on hostile and unusual files (issue 11, items 4, 6, 7) and
its progress bar (issue 10 §4): every bad file is one ``Error:`` line naming the line
and the problem, exit 2, nothing written; the header's agent decides where records go;
line separators inside text round-trip; a bar shows on a terminal and nowhere else."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from satchel.memory import Block, BlockKind, MemoryStore, Message, Permission

from .test_memory_cli import _rich_memory, ok, one_error_line, run, seed

HEADER = {"format": "satchel-memory", "version": 1, "agent": "default"}
BLOCK = Block(
    id="b1", agent="default", label="notes", value="v",
    created_at="2026-01-02T03:04:05Z", updated_at="2026-01-02T03:04:05Z",  # pyright: ignore[reportArgumentType]
).model_dump(mode="json")  # fmt: skip
MESSAGE = Message(
    id="m1", agent="default", role="user", content="hi",
    created_at="2026-01-02T03:04:05Z",  # pyright: ignore[reportArgumentType]
).model_dump(mode="json")  # fmt: skip


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def export_file(*records: dict[str, Any], header: dict[str, Any] | None = None) -> bytes:
    lines = [json.dumps(header or HEADER)]
    for record in records:
        kind = "block" if "label" in record else "message"
        lines.append(json.dumps({"type": kind, kind: record}))
    return "".join(line + "\n" for line in lines).encode()


def deep(levels: int) -> str:
    return '{"a":' * levels + "{}" + "}" * levels


HOSTILE: list[tuple[str, bytes, tuple[str, ...]]] = [
    (
        "lone surrogate in a block",
        export_file(BLOCK).replace(b'"value": "v"', b'"value": "a \\ud800 b"'),
        ("line 2", "block 'notes'", "lone surrogate", "U+D800"),
    ),
    (
        "lone surrogate in a message",
        export_file(MESSAGE).replace(b'"content": "hi"', b'"content": "\\udfff"'),
        ("line 2", "message 'm1'", "lone surrogate"),
    ),
    (
        "version 2**70",
        export_file({**BLOCK, "version": 2**70}),
        ("line 2", "version must be from 1 to 2147483647"),
    ),
    (
        "char_limit 2**70",
        export_file({**BLOCK, "char_limit": 2**70}),
        ("line 2", "char_limit must be from 0"),
    ),
    (
        "a value over its char_limit",
        export_file({**BLOCK, "value": "x" * 20, "char_limit": 5}),
        ("block 'notes'", "20 characters, over its char_limit of 5", "Nothing was imported"),
    ),
    (
        "metadata nested 5,000 deep",
        export_file(BLOCK).replace(b'"metadata": {}', b'"metadata": ' + deep(5_000).encode()),
        ("line 2", "nested too deeply"),
    ),
    (
        "invalid UTF-8",
        export_file(BLOCK).replace(b'"value": "v"', b'"value": "\xff\xfe"'),
        ("line 2", "not UTF-8", "0xff"),
    ),
    (
        "an admin share on a read_only block",
        export_file({**BLOCK, "permission": "read_only", "shares": {"bob": "admin"}}),
        ("line 2", "'bob' is 'admin', above the block's own permission 'read_only'"),
    ),
    (
        "a record of another agent",
        export_file(BLOCK, {**MESSAGE, "agent": "bob"}),
        ("line 3", "belongs to agent 'bob'", "export is of agent 'default'"),
    ),
    (
        "another agent's export",
        export_file({**BLOCK, "agent": "bob"}, header={**HEADER, "agent": "bob"}),
        ("line 1", "agent 'bob', not 'default'", "--agent bob"),
    ),
    (
        "a whole-store export without --all-agents",
        export_file(BLOCK, header={**HEADER, "agent": None}),
        ("line 1", "whole-store export", "--all-agents"),
    ),
]


@pytest.mark.parametrize(
    ("content", "words"), [(c, w) for _, c, w in HOSTILE], ids=[name for name, _, _ in HOSTILE]
)
def test_a_hostile_import_file_is_one_error_line_exit_2_and_writes_nothing(
    db: Path, tmp_path: Path, content: bytes, words: tuple[str, ...]
) -> None:
    seed(db, _rich_memory)
    before = ok(db, "export", "--all-agents").stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)

    one_error_line(run(db, "import", str(bad)), 2, *words)

    assert ok(db, "export", "--all-agents").stdout == before


def test_a_conflict_on_the_last_record_imports_nothing_and_says_so(
    db: Path, tmp_path: Path
) -> None:
    seed(db, _rich_memory)
    stored = json.loads(ok(db, "export").stdout.splitlines()[-1])["message"]
    before = ok(db, "export", "--all-agents").stdout
    bad = tmp_path / "clash.jsonl"
    bad.write_bytes(export_file(*[{**MESSAGE, "id": f"n{i}"} for i in range(1200)], stored))

    one_error_line(run(db, "import", str(bad)), 2, "already holds", "Nothing")

    assert ok(db, "export", "--all-agents").stdout == before


async def _line_breakers(store: MemoryStore) -> None:
    text = "one\u2028two\u2029three\u0085four\r\nfive\x0bsix\x1cseven"
    await store.create_block("default", "odd", text, tags=["\u2028"], metadata={"\u2029": text})
    await store.create_block("default", "fact", text, kind=BlockKind.ARCHIVAL)
    await store.add_message("default", "user", text, conversation_id="c\u0085")


def test_text_with_unicode_line_separators_survives_export_and_import(tmp_path: Path) -> None:
    first_db, second_db = tmp_path / "a.db", tmp_path / "b.db"
    seed(first_db, _line_breakers)
    dump = tmp_path / "dump.jsonl"
    ok(first_db, "export", str(dump))

    ok(second_db, "import", str(dump))

    assert ok(second_db, "export").stdout.encode() == dump.read_bytes()
    assert "\u2028".encode() not in dump.read_bytes()
    odd = seed(second_db, lambda s: s.get_block("default", "odd"))
    assert odd.value == "one\u2028two\u2029three\u0085four\r\nfive\x0bsix\x1cseven"


def test_an_export_imports_as_its_own_agent_and_a_whole_store_export_with_all_agents(
    tmp_path: Path,
) -> None:
    first_db, second_db, third_db = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "c.db"
    seed(first_db, _rich_memory)
    bob, everything = tmp_path / "bob.jsonl", tmp_path / "all.jsonl"
    ok(first_db, "export", "--agent", "bob", str(bob))
    ok(first_db, "export", "--all-agents", str(everything))

    ok(second_db, "import", "--agent", "bob", str(bob))
    ok(third_db, "import", "--all-agents", str(everything))

    assert ok(second_db, "export", "--agent", "bob").stdout == bob.read_text()
    assert ok(third_db, "export", "--all-agents").stdout == everything.read_text()
    assert json.loads(everything.read_text().splitlines()[0])["agent"] is None
    mine = seed(third_db, lambda s: s.get_block("default", "bob/mine"))
    assert mine.shares == {"default": Permission.READ_ONLY}


def test_import_prints_no_progress_when_not_a_terminal_and_json_with_json(
    db: Path, tmp_path: Path
) -> None:
    source = tmp_path / "a.db"
    seed(source, _rich_memory)
    dump = ok(source, "export").stdout

    plain = ok(db, "import", "-", stdin=dump)
    again = ok(db, "import", "-", "--on-conflict", "skip", "--json", stdin=dump)

    assert plain.stderr == "Imported 6 records.\n"
    assert plain.stdout == ""
    assert json.loads(again.stdout) == {"blocks": 0, "messages": 0, "skipped": 6}
    assert again.stderr == ""


def test_import_on_a_terminal_shows_a_progress_bar(tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    seed(source, _rich_memory)
    dump = tmp_path / "dump.jsonl"
    ok(source, "export", str(dump))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env |= {"COLUMNS": "100", "SATCHEL_DB": str(target)}
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "satchel", "memory", "import", str(dump)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
        env=env,
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert process.wait(timeout=100) == 0
    assert process.stdout is not None
    assert process.stdout.read() == b""
    text = shown.decode()
    assert "Importing" in text
    assert "6/6" in text
    assert "Imported 6 records." in text


def test_an_older_export_with_raw_line_separators_in_text_still_imports(
    db: Path, tmp_path: Path
) -> None:
    raw = "a\u2028b\u2029c\u0085d"
    older = tmp_path / "older.jsonl"
    line = json.dumps({"type": "block", "block": {**BLOCK, "value": raw}}, ensure_ascii=False)
    older.write_text(json.dumps(HEADER) + "\n" + line + "\n", encoding="utf-8")
    assert "\u2028" in older.read_text(encoding="utf-8")

    ok(db, "import", str(older))

    assert seed(db, lambda s: s.get_block("default", "notes")).value == raw


def test_a_failed_export_leaves_the_file_it_would_replace_untouched(tmp_path: Path) -> None:
    backup = tmp_path / "backup.jsonl"
    backup.write_text("yesterday's backup\n")

    one_error_line(run(tmp_path / "missing.db", "export", str(backup)), 2, "missing.db")

    assert backup.read_text() == "yesterday's backup\n"
    assert [p.name for p in tmp_path.iterdir()] == ["backup.jsonl"]


def test_an_export_into_a_missing_directory_is_one_error_line(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    seed(db, _rich_memory)

    one_error_line(run(db, "export", str(tmp_path / "nope" / "x.jsonl")), 2, "nope")


async def _alice_notes(store: MemoryStore) -> None:
    await store.create_block("alice", "notes", "Alice's own.", permission=Permission.READ_ONLY)


@pytest.mark.parametrize("mode", ["error", "skip", "replace"])
def test_an_import_file_cannot_take_another_agents_block_by_its_id(
    db: Path, tmp_path: Path, mode: str
) -> None:
    seed(db, _alice_notes)
    alice = json.loads(ok(db, "export", "--agent", "alice").stdout.splitlines()[1])["block"]
    before = ok(db, "export", "--all-agents").stdout
    bad = tmp_path / "bob.jsonl"
    stolen = {**BLOCK, "id": alice["id"], "agent": "bob", "label": "stolen"}
    bad.write_bytes(export_file(stolen, header={**HEADER, "agent": "bob"}))

    result = run(db, "import", "--agent", "bob", "--on-conflict", mode, str(bad))

    one_error_line(result, 2, "cannot be used for 'bob'", "Nothing was imported")
    assert "alice" not in result.stderr + result.stdout
    assert ok(db, "export", "--all-agents").stdout == before


_CHECK_PASS = """
import re, sys
from pathlib import Path
from satchel.cli._backup import check_export

def peak():  # VmHWM, not ru_maxrss: that one starts at the forking parent's size
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))

idle = peak()
with open(sys.argv[1], "rb") as stream:
    assert check_export(stream, "default", show=False) == 1
print(peak() - idle)
"""


@pytest.mark.parametrize("wide", [False, True], ids=["ascii", "line-separators"])
def test_the_check_pass_holds_a_large_single_block_about_twice_not_four_times(
    tmp_path: Path, wide: bool
) -> None:
    """Issue 28, item 14: the line's bytes, its stripped copy, its text and a UTF-8
    re-encoding of the value were all alive at once. Now the bytes go once decoded
    and the text once parsed: about 2 x the file at the peak (was 4 x)."""
    unit = "harbour ferry compiler Kyoto tea " * 30 + ("\u2028" if wide else "")
    value = unit * (40_000_000 // len(unit))
    big = tmp_path / "big.jsonl"
    big.write_bytes(export_file({**BLOCK, "value": value}).replace(b"\\u2028", "\u2028".encode()))
    del value
    done = subprocess.run(
        [sys.executable, "-c", _CHECK_PASS, str(big)], capture_output=True, text=True, check=True
    )
    peak = int(done.stdout) * 1024
    size = big.stat().st_size
    python_chars = 2 if wide else 1  # U+2028 makes Python keep 2 bytes per character
    # text and value at 2 x (4 x wide) now, 4 x (6 x wide) before
    assert peak < (1 + 2 * python_chars) * size, (peak / size, done.stderr)
