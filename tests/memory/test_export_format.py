"""The export format lives with memory: a program reads and writes it without the CLI."""

from __future__ import annotations

import io
import json

import pytest

from satchel import InvalidInputError
from satchel.memory import EXPORT_FORMAT, read_export


def test_a_bad_line_is_an_invalid_input_error_naming_the_line() -> None:
    header = json.dumps({"format": EXPORT_FORMAT, "version": 1, "agent": "ada"})
    stream = io.BytesIO(f"{header}\nnot json\n".encode())
    with pytest.raises(InvalidInputError, match=r"^line 2: not JSON"):
        list(read_export(stream, agent="ada"))


def test_an_empty_file_is_not_an_export() -> None:
    with pytest.raises(InvalidInputError, match="empty, not an export"):
        list(read_export(io.BytesIO(b""), agent=None))
