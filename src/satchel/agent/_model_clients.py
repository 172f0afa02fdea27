"""Model clients (the wire-format adapters are :mod:`satchel.providers`): ``openai:MODEL``
through the official ``openai`` SDK (Chat Completions, so any OpenAI-compatible server
by base URL: vLLM, llama.cpp, Ollama, LM Studio, OpenRouter), and
:func:`model_from_string` to pick one by name.

The SDK is an optional extra (``pip install 'satchel[openai]'``) imported only when an
OpenAI model is made. Its errors are mapped to :class:`~satchel.ModelError`, and each
request is bounded in time and retried by :class:`~satchel.agent._sdk.SdkModel` (rate
limits and server errors, with backoff; never a silent or unreachable server). Tool
schemas come from satchel's own ``openai`` dialect.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from satchel._errors import SatchelUsageError
from satchel.agent._messages import ChatMessage, ModelRequest, ModelResponse, Usage
from satchel.agent._models import Model
from satchel.agent._sdk import DEFAULT_TIMEOUT, SdkModel
from satchel.providers import parse_openai_tool_calls

__all__ = ["OpenAIModel", "model_from_string"]


def model_from_string(
    spec: str, *, base_url: str | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Model:
    """The model ``spec`` names: ``openai:MODEL`` (``base_url`` or ``$OPENAI_BASE_URL``
    for another OpenAI-compatible server) or ``anthropic:MODEL`` (``base_url`` or
    ``$ANTHROPIC_BASE_URL``), whose requests may each take ``timeout`` seconds.

    Raises:
        SatchelUsageError: an unknown provider, no model name, or the provider's SDK
            is not installed.
        ModelError: the API key is missing.
    """
    provider, _, name = spec.partition(":")
    if not name.strip():
        raise SatchelUsageError(
            f"{spec!r} is not a model: write PROVIDER:MODEL, e.g. openai:gpt-4o-mini."
        )
    if provider == "openai":
        return OpenAIModel(name, base_url=base_url, timeout=timeout)
    if provider == "anthropic":
        from satchel.agent._anthropic import AnthropicModel

        return AnthropicModel(name, base_url=base_url, timeout=timeout)
    raise SatchelUsageError(
        f"Unknown model provider {provider!r} in {spec!r}; satchel knows 'openai' (any "
        "OpenAI-compatible server, with --base-url) and 'anthropic'."
    )


class OpenAIModel(SdkModel):
    """A model behind the OpenAI Chat Completions API.

    Args:
        model: The model's name on the server (``gpt-4o-mini``).
        base_url: Another OpenAI-compatible server (default ``$OPENAI_BASE_URL``, else
            OpenAI's).
        api_key: The key (default ``$OPENAI_API_KEY``).
        max_retries: Retries of a request the server asks to have retried (rate
            limits, server errors) or whose connection dropped, with backoff.
        timeout: Seconds one request may take, retries included; a streamed response
            must start within it and never pause longer (see
            :class:`~satchel.agent._sdk.SdkModel`). A connection gets at most 5 of them.

    Raises:
        SatchelUsageError: the ``openai`` package is not installed.
        ModelError: no API key.
    """

    family = "openai"
    dialect = "openai"
    provider = "openai"
    client_class = "AsyncOpenAI"
    key_env = "OPENAI_API_KEY"
    url_env = "OPENAI_BASE_URL"
    default_host = "api.openai.com"
    key_hint = "export it (any value for a local server that needs none)"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._connect(
            model, base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One Chat Completions request.

        Raises:
            ModelError: the server refused the request or could not be reached.
        """
        body = self._body(request)
        completion = await self._answer(lambda: self._client.chat.completions.create(**body))
        message = completion.choices[0].message
        usage = completion.usage
        return ModelResponse(
            text=message.content or "",
            tool_calls=tuple(parse_openai_tool_calls(message)),
            usage=Usage(
                input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                requests=1,
            ),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """One streamed Chat Completions request (server-sent events): yields each
        text delta as it arrives, then the whole response, tool calls assembled.

        Raises:
            ModelError: the server refused the request or could not be reached.
        """
        body = {**self._body(request), "stream": True, "stream_options": {"include_usage": True}}
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: Any = None
        chunks = await self._answer(lambda: self._client.chat.completions.create(**body))
        async for chunk in self._pieces(chunks):
            usage = chunk.usage or usage
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    yield delta.content
                for part in delta.tool_calls or ():
                    slot = calls.setdefault(part.index, {"id": None, "name": "", "args": ""})
                    slot["id"] = part.id or slot["id"]
                    if part.function is not None:
                        slot["name"] += part.function.name or ""
                        slot["args"] += part.function.arguments or ""
        assembled = {
            "tool_calls": [
                {"id": c["id"], "function": {"name": c["name"], "arguments": c["args"]}}
                for _, c in sorted(calls.items())
            ]
        }
        yield ModelResponse(
            text="".join(text),
            tool_calls=tuple(parse_openai_tool_calls(assembled)) if calls else (),
            usage=Usage(
                input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                requests=1,
            ),
        )

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                *(_wire(m) for m in request.messages),
            ],
        }
        if request.tools:
            body["tools"] = list(request.tools)
            body["tool_choice"] = "required" if request.require_tool else "auto"
        return body


def _wire(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id or f"call_{index}",
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for index, call in enumerate(message.tool_calls)
            ],
        }
    return {"role": message.role, "content": message.content}
