"""The one exception tree: every exception class satchel defines descends from
SatchelError, and input errors are also ValueErrors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from datetime import datetime

import pytest

import satchel
from satchel import (
    EmbeddingError,
    InvalidInputError,
    SatchelError,
    SatchelUsageError,
    ToolRegistry,
)
from satchel.memory import SearchFilters
from satchel.tools import ArgumentsError, ErrorInfo

pytestmark = pytest.mark.anyio


def _modules() -> list[str]:
    names = ["satchel"]
    for info in pkgutil.walk_packages(satchel.__path__, "satchel."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_every_exception_class_satchel_defines_descends_from_satchel_error() -> None:
    outside: list[str] = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not issubclass(value, SatchelError)
            ):
                outside.append(f"{name}.{attr}")
    assert outside == []


def test_input_errors_are_value_errors_and_map_to_invalid_arguments() -> None:
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(ArgumentsError, InvalidInputError)
    assert InvalidInputError.error_kind == "invalid_arguments"
    assert EmbeddingError.error_kind == "internal"
    assert not issubclass(EmbeddingError, SatchelUsageError)


def test_error_info_is_a_record_not_an_exception() -> None:
    assert not issubclass(ErrorInfo, BaseException)


def test_a_naive_search_time_is_an_input_error_inside_the_validation_error() -> None:
    with pytest.raises(ValueError, match="timezone-aware") as caught:
        SearchFilters(start_time=datetime(2026, 1, 1))
    assert "timezone-aware" in str(caught.value)


async def test_a_tool_raising_an_input_error_gives_the_model_invalid_arguments() -> None:
    def pick(n: int) -> int:
        """Pick a number.

        Args:
            n: The number.
        """
        if n > 3:
            raise InvalidInputError("n must be at most 3", details={"max": 3})
        return n

    result = await ToolRegistry([pick]).call("pick", {"n": 9})
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("invalid_arguments", "n must be at most 3")
    assert result.error.details == {"max": 3}
