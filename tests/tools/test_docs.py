"""Descriptions built from docstrings carry Markdown, not Sphinx's reST markup."""

from __future__ import annotations

from pydantic import BaseModel, Field

from satchel import tool
from satchel.tools._docs import plain_schema, plain_text


def test_literals_and_roles_become_markdown_code() -> None:
    assert plain_text("The input of ``search``.") == "The input of `search`."
    assert plain_text("A :class:`~satchel.memory.Block`.") == "A `Block`."
    assert plain_text("See :func:`satchel.tool`.") == "See `satchel.tool`."
    assert plain_text("See :py:meth:`the store <satchel.MemoryStore>`.") == "See `the store`."
    assert plain_text(r"Many :class:`Endpoint`\ s.") == "Many `Endpoint`s."


def test_text_without_markup_is_kept_as_written() -> None:
    for text in ("plain words", "`already markdown`", "a ` lone backtick", ""):
        assert plain_text(text) == text


def test_only_descriptions_change_and_data_stays_as_given() -> None:
    schema = {
        "description": "Of ``x``.",
        "properties": {
            "default": {"description": "A field named default, ``y``."},
            "z": {"type": "string", "default": "``kept``", "enum": ["``kept``"]},
        },
    }
    assert plain_schema(schema) == {
        "description": "Of `x`.",
        "properties": {
            "default": {"description": "A field named default, `y`."},
            "z": {"type": "string", "default": "``kept``", "enum": ["``kept``"]},
        },
    }


class Note(BaseModel):
    """A note, as :class:`~satchel.memory.Block` keeps it."""

    text: str = Field(description="The ``text`` itself.")


def test_a_function_tool_made_from_rest_docstrings_describes_itself_in_markdown() -> None:
    @tool
    def keep(note: Note, times: int = 1) -> Note:
        """Keep a note; see ``recall``.

        Args:
            note: What :func:`keep` stores.
            times: How often.
        """
        return note

    spec = keep.spec
    assert spec.description == "Keep a note; see `recall`."
    text = str(spec.input_schema) + str(spec.output_schema)
    assert "``" not in text
    assert ":class:" not in text
    assert ":func:" not in text
    assert "What `keep` stores." in text
    assert "The `text` itself." in text
