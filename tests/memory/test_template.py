"""Template files: TOML or JSON, checked field by field, every error one line naming
the file and the field."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import SatchelUsageError
from satchel.memory import (
    AgentTemplate,
    BlockKind,
    BlockTemplate,
    Permission,
    default_template,
    load_template,
)

EXAMPLE = """\
name = "bakery"

[[blocks]]
label = "persona"
description = "Who you are and how you speak."
value = "I am Sam, a terse assistant for a small bakery."
char_limit = 3000

[[blocks]]
label = "orders"
kind = "working"
permission = "append"
description = "Open customer orders: who, what, when due."
pinned = true
"""


def test_a_toml_file_gives_every_field(tmp_path: Path) -> None:
    path = tmp_path / "bakery.toml"
    path.write_text(EXAMPLE, encoding="utf-8")

    template = load_template(path)

    assert template.name == "bakery"
    persona, orders = template.blocks
    assert persona == BlockTemplate(
        label="persona",
        description="Who you are and how you speak.",
        value="I am Sam, a terse assistant for a small bakery.",
        char_limit=3000,
    )
    assert (orders.kind, orders.permission, orders.pinned) == (
        BlockKind.WORKING,
        Permission.APPEND,
        True,
    )
    assert orders.char_limit is None


def test_a_json_file_reads_the_same_and_is_named_after_the_file(tmp_path: Path) -> None:
    data = tomllib.loads(EXAMPLE)
    del data["name"]
    path = tmp_path / "bakery.JSON"
    path.write_text(json.dumps(data), encoding="utf-8")

    template = load_template(path)

    assert template.name == "bakery.JSON"
    assert template.labels == ("persona", "orders")


def test_a_file_with_no_blocks_is_an_empty_template(tmp_path: Path) -> None:
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")

    assert load_template(path).blocks == ()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[[blocks]]\nlabel = "a"\nlimit = 5\n', "blocks[0] (label 'a').limit: Extra inputs"),
        ('[[blocks]]\nvalue = "x"\n', "blocks[0].label: Field required"),
        ('[[blocks]]\nlabel = "a/b"\n', "blocks[0] (label 'a/b').label: invalid label"),
        ('[[blocks]]\nlabel = "a"\nkind = "cor"\n', "blocks[0] (label 'a').kind:"),
        ('[[blocks]]\nlabel = "a"\npermission = "root"\n', "(label 'a').permission:"),
        ('[[blocks]]\nlabel = "a"\nvalue = "abc"\nchar_limit = 2\n', "over char_limit 2"),
        ('[[blocks]]\nlabel = "a"\n[[blocks]]\nlabel = "a"\n', "'a' appears twice"),
        ('blocks = "persona"\n', "blocks: Input should be a valid"),
        ("agents = []\n", "agents: Extra inputs"),
        ("blocks = [", "not valid TOML"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_the_field(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(SatchelUsageError) as caught:
        load_template(path)

    message = caught.value.message
    assert message.startswith(f"{path}: ")
    assert where in message
    assert "\n" not in message


def test_a_missing_file_or_an_unknown_extension_is_named(tmp_path: Path) -> None:
    with pytest.raises(SatchelUsageError, match="cannot read the template"):
        load_template(tmp_path / "missing.toml")
    with pytest.raises(SatchelUsageError, match=r"\.toml or \.json"):
        load_template(tmp_path / "blocks.yaml")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    with pytest.raises(SatchelUsageError, match="must be a table"):
        load_template(tmp_path / "list.json")


def test_the_default_blocks_describe_what_belongs_in_them() -> None:
    persona, human = default_template().blocks

    for block in (persona, human):
        assert block.kind is BlockKind.CORE
        assert block.permission is Permission.READ_WRITE
        assert block.char_limit == 5000
        assert block.value == ""
    assert "Who you are" in persona.description
    assert "the person you talk with" in human.description


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
_block_like = st.dictionaries(
    st.sampled_from(
        ["label", "value", "description", "kind", "permission", "char_limit", "pinned", "x"]
    ),
    _json_values | st.sampled_from(["core", "archival", "read_only", "persona"]),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    document=st.dictionaries(st.sampled_from(["name", "blocks", "other"]), _json_values)
    | st.fixed_dictionaries({"blocks": st.lists(_block_like, max_size=4)})
)
def test_any_json_document_loads_or_fails_with_one_line(tmp_path: Path, document: object) -> None:
    path = tmp_path / "any.json"
    path.write_text(json.dumps(document), encoding="utf-8")

    outcome: AgentTemplate | str
    try:
        outcome = load_template(path)
    except SatchelUsageError as exc:
        outcome = exc.message

    if isinstance(outcome, str):
        assert outcome.startswith(f"{path}: ")
        assert "\n" not in outcome
    else:
        assert len(set(outcome.labels)) == len(outcome.labels)
        for block in outcome.blocks:
            assert block.char_limit is None or len(block.value) <= block.char_limit
