"""The :class:`Model` protocol and the scripted models for tests: :class:`FunctionModel`
(a function answers each request) and :class:`TestModel` (replays a script).

Neither touches a network, so docs, satchel's own tests and users' tests can drive an
:class:`~satchel.agent.Agent` exactly.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from satchel._errors import SatchelUsageError
from satchel.agent._messages import ModelRequest, ModelResponse
from satchel.providers import ToolCall

__all__ = ["FunctionModel", "Model", "StreamingModel", "TestModel", "call"]


@runtime_checkable
class Model(Protocol):
    """A chat model that can call tools.

    ``name`` identifies it (``openai:gpt-4o-mini``); ``family`` picks the token counter
    (``openai`` counts with ``o200k_base``; anything else is estimated).
    """

    name: str
    family: str

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Answer one request: text, tool calls or both."""
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also stream: :meth:`stream` yields text deltas as they come,
    then the whole :class:`ModelResponse` last."""

    def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """Answer ``request``, streaming."""
        ...


def call(name: str, arguments: dict[str, Any] | None = None, *, id: str | None = None) -> ToolCall:
    """A tool call for a script.

    Example:
        >>> TestModel([call("context", {"operation": "list"}), "Done."])
    """
    return ToolCall(id, name, dict(arguments or {}))


Handler = Callable[[ModelRequest], ModelResponse | Awaitable[ModelResponse]]


class FunctionModel:
    """A model whose every answer comes from ``function(request)`` (sync or async).

    Args:
        function: Reads the :class:`ModelRequest` and returns a :class:`ModelResponse`.
        name: How the model is named in run records.

    Example:
        >>> def reply(request: ModelRequest) -> ModelResponse:
        ...     return ModelResponse(text=f"{len(request.messages)} messages so far")
        >>> agent = Agent("ada", FunctionModel(reply))
    """

    family = "test"

    def __init__(self, function: Handler, *, name: str = "function") -> None:
        self.function = function
        self.name = name
        self.requests: list[ModelRequest] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Record ``request`` and let the function answer it."""
        self.requests.append(request)
        answer = self.function(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer


Step = str | ToolCall | Sequence[ToolCall] | ModelResponse


class TestModel:
    """A model that replays a script, one step per request: a string is a text reply,
    a :func:`call` (or a list of them) asks for tool calls, a :class:`ModelResponse` is
    used as it is. Past the end of the script it answers ``"(end of script)"``.

    Every request it received is kept in :attr:`requests`, so a test can check what the
    model was shown (the system prompt, the history, the tools offered).

    Example:
        >>> model = TestModel([call("context", {"operation": "append", "label": "human",
        ...                                      "content": "Likes green tea."}), "Noted."])
    """

    __test__ = False  # not a pytest class
    family = "test"

    def __init__(self, script: Sequence[Step] = (), *, name: str = "test") -> None:
        self.script = list(script)
        self.name = name
        self.requests: list[ModelRequest] = []
        self._calls = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The next step of the script."""
        self.requests.append(request)
        index = len(self.requests) - 1
        if index >= len(self.script):
            return ModelResponse(text="(end of script)")
        return self._response(self.script[index])

    def _response(self, step: Step) -> ModelResponse:
        if isinstance(step, ModelResponse):
            return step
        if isinstance(step, str):
            return ModelResponse(text=step)
        calls = (step,) if isinstance(step, ToolCall) else tuple(step)
        named: list[ToolCall] = []
        for item in calls:
            if not isinstance(item, ToolCall):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise SatchelUsageError(f"A script step holds {item!r}, not a call().")
            self._calls += 1
            named.append(ToolCall(item.id or f"call_{self._calls}", item.name, item.arguments))
        return ModelResponse(tool_calls=tuple(named))
