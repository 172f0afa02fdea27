"""User tools for ``--tools`` in the learning tests: tools with example requests, and
plain ones a query can be taught to."""

from satchel import ToolRegistry, tool


@tool(category="weather", actions=["read"], examples=["will I need an umbrella tomorrow"])
def forecast(city: str) -> str:
    """Give the weather forecast of a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


@tool(category="notes", actions=["create"])
def jot(text: str) -> str:
    """Write a short line into the scratch pad.

    Args:
        text: The line.
    """
    return f"jotted {text}"


@tool(category="notes", actions=["read"])
def recite(text: str) -> str:
    """Read a line back aloud.

    Args:
        text: The line.
    """
    return text


registry = ToolRegistry([forecast, jot, recite])
