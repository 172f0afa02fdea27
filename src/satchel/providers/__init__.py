"""Provider adapters: a model's tool calls in, tool results out, with no glue.

Parse a provider's response into :class:`ToolCall`\\ s, run them through a
:class:`~satchel.ToolRegistry`, and turn the results into that provider's own message
shape::

    calls = parse_openai_tool_calls(completion.choices[0].message)
    results = await run_tool_calls(registry, calls)
    messages.extend(openai_tool_messages(results))

* OpenAI Chat Completions: :func:`parse_openai_tool_calls`, :func:`openai_tool_messages`;
* OpenAI Responses: :func:`parse_openai_responses_calls`, :func:`openai_responses_outputs`;
* Anthropic Messages: :func:`parse_anthropic_tool_uses`, :func:`anthropic_tool_results`;
* Gemini: :func:`parse_gemini_function_calls`, :func:`gemini_function_responses` (parts)
  and :func:`gemini_tool_content` (a whole ``user`` turn).

Parsers accept plain dicts in the wire format and the providers' SDK objects alike (read
by attribute, so satchel needs none of the SDKs). Malformed **arguments** are the model's
mistake: they are kept as raw text in :attr:`ToolCall.arguments` and come back from the
registry as an ``invalid_arguments`` result the model can act on. A malformed
**envelope** (no id where the provider needs one, no name, not a list) is the caller's
mistake and raises :class:`~satchel.SatchelUsageError`.
"""

from satchel.providers._anthropic import anthropic_tool_results, parse_anthropic_tool_uses
from satchel.providers._call import ToolCall
from satchel.providers._gemini import (
    gemini_function_responses,
    gemini_tool_content,
    parse_gemini_function_calls,
)
from satchel.providers._openai import (
    openai_responses_outputs,
    openai_tool_messages,
    parse_openai_responses_calls,
    parse_openai_tool_calls,
)
from satchel.providers._run import run_tool_calls, run_tool_calls_sync

__all__ = [
    "ToolCall",
    "anthropic_tool_results",
    "gemini_function_responses",
    "gemini_tool_content",
    "openai_responses_outputs",
    "openai_tool_messages",
    "parse_anthropic_tool_uses",
    "parse_gemini_function_calls",
    "parse_openai_responses_calls",
    "parse_openai_tool_calls",
    "run_tool_calls",
    "run_tool_calls_sync",
]
