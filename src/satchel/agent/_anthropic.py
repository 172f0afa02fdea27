"""``anthropic:MODEL``: the Anthropic Messages API through the official ``anthropic``
SDK (an optional extra, ``pip install 'satchel[anthropic]'``, imported only when such
a model is made). Tool schemas come from satchel's ``anthropic`` dialect; the SDK's
errors are mapped to :class:`~satchel.ModelError`, and each request is bounded in time
and retried (rate limits and server errors, with backoff) by
:class:`~satchel.agent._sdk.SdkModel`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from satchel.agent._messages import ChatMessage, ModelRequest, ModelResponse, Usage
from satchel.agent._sdk import DEFAULT_TIMEOUT, SdkModel
from satchel.providers import parse_anthropic_tool_uses

__all__ = ["AnthropicModel"]


class AnthropicModel(SdkModel):
    """A Claude model behind the Anthropic Messages API.

    Args:
        model: The model's name (``claude-sonnet-4-5``).
        base_url: Another server speaking the Messages API (default
            ``$ANTHROPIC_BASE_URL``, else Anthropic's).
        api_key: The key (default ``$ANTHROPIC_API_KEY``).
        max_tokens: The most tokens one answer may take.
        max_retries: Retries of a request the server asks to have retried (rate
            limits, server errors) or whose connection dropped, with backoff.
        timeout: Seconds one request may take, retries included; a streamed response
            must start within it and never pause longer (see
            :class:`~satchel.agent._sdk.SdkModel`). A connection gets at most 5 of them.

    Raises:
        SatchelUsageError: the ``anthropic`` package is not installed.
        ModelError: no API key.
    """

    family = "anthropic"
    dialect = "anthropic"
    provider = "anthropic"
    client_class = "AsyncAnthropic"
    key_env = "ANTHROPIC_API_KEY"
    url_env = "ANTHROPIC_BASE_URL"
    default_host = "api.anthropic.com"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 4096,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._connect(
            model, base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout
        )
        self.max_tokens = max_tokens

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One Messages request.

        Raises:
            ModelError: the server refused the request or could not be reached.
        """
        body = self._body(request)
        message = await self._answer(lambda: self._client.messages.create(**body))
        text = "".join(
            getattr(block, "text", "") for block in message.content if block.type == "text"
        )
        usage = message.usage
        return ModelResponse(
            text=text,
            tool_calls=tuple(parse_anthropic_tool_uses(message)),
            usage=Usage(
                input_tokens=getattr(usage, "input_tokens", 0) or 0,
                output_tokens=getattr(usage, "output_tokens", 0) or 0,
                requests=1,
            ),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """One streamed Messages request (server-sent events): yields each text delta,
        then the whole response with its ``tool_use`` blocks assembled.

        Raises:
            ModelError: the server refused the request or could not be reached.
        """
        text: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        usage = Usage(requests=1)
        body = self._body(request)
        events = await self._answer(lambda: self._client.messages.create(**body, stream=True))
        async for event in self._pieces(events):
            kind = event.type
            if kind == "message_start":
                used = event.message.usage
                usage = Usage(input_tokens=used.input_tokens or 0, requests=1)
            elif kind == "content_block_start" and event.content_block.type == "tool_use":
                block = event.content_block
                blocks[event.index] = {"id": block.id, "name": block.name, "json": ""}
            elif kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    text.append(delta.text)
                    yield delta.text
                elif delta.type == "input_json_delta" and event.index in blocks:
                    blocks[event.index]["json"] += delta.partial_json
            elif kind == "message_delta":
                usage = Usage(
                    input_tokens=usage.input_tokens,
                    output_tokens=event.usage.output_tokens or 0,
                    requests=1,
                )
        uses = [
            {"type": "tool_use", "id": b["id"], "name": b["name"], "input": _json(b["json"])}
            for _, b in sorted(blocks.items())
        ]
        yield ModelResponse(
            text="".join(text),
            tool_calls=tuple(parse_anthropic_tool_uses(uses)) if uses else (),
            usage=usage,
        )

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": _wire(request.messages),
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = list(request.tools)
            body["tool_choice"] = {"type": "any" if request.require_tool else "auto"}
        return body


def _json(text: str) -> Any:
    """The streamed arguments of a tool call; text that is not JSON is passed on as it
    is, so running the call reports ``invalid_arguments`` to the model."""
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _wire(messages: Any) -> list[dict[str, Any]]:
    """The conversation in Messages shape: tool results travel as ``tool_result``
    blocks of a user turn, and consecutive turns of one role are joined (the API
    wants them to alternate)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: ChatMessage) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for index, call in enumerate(message.tool_calls):
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_{index}",
                "name": call.name,
                "input": arguments,
            }
        )
    return message.role, blocks
