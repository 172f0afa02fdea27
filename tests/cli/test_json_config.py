"""Reading JSON with comments, and changing one server entry without touching the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from satchel.cli._json_config import merge_server, read_config, remove_server, strip_jsonc

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_plain_json_passes_through_strip_jsonc_unchanged(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert strip_jsonc(text) == text


@given(st.dictionaries(st.text(), st.text(), min_size=1, max_size=5))
def test_comments_and_trailing_commas_around_any_strings_are_dropped(
    value: dict[str, str],
) -> None:
    members = [f"/* c */ {json.dumps(k)}: {json.dumps(v)}, // note\n" for k, v in value.items()]
    text = "{\n" + "".join(members) + "}"
    assert json.loads(strip_jsonc(text)) == value


def test_strip_jsonc_keeps_line_numbers() -> None:
    text = '{\n  /* one\n two */\n  "a": 1,\n}'
    assert strip_jsonc(text).count("\n") == text.count("\n")


def test_a_missing_file_reads_as_an_empty_config(tmp_path: Path) -> None:
    assert read_config(tmp_path / "none.json") == ({}, False)


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_config(path) == ({"a": 1}, False)


def test_merge_and_remove_leave_the_input_and_the_other_servers_alone(tmp_path: Path) -> None:
    config = {"a": 1, "servers": {"x": {"command": "x"}}}
    merged, previous = merge_server(config, "servers", "s", {"command": "s"}, path=tmp_path)
    assert previous is None
    assert merged == {"a": 1, "servers": {"x": {"command": "x"}, "s": {"command": "s"}}}
    assert config == {"a": 1, "servers": {"x": {"command": "x"}}}

    removed, gone = remove_server(merged, "servers", "s", path=tmp_path)
    assert gone == {"command": "s"}
    assert removed == config
