"""The model request of :class:`~satchel.agent.Agent`: the system prompt (instructions,
the rendered memory or the tool usage rules, the tool rules, the summary of what left
the prompt), the history that fits the budget (:mod:`satchel.agent._context`), and the
tools the rules offer now, in the model's dialect.

:func:`build_request` builds it from the agent's parts. Before memory is rendered, the
tools' context hooks run (:class:`~satchel.registry.ContextHook`: the productivity
toolkit's ``schedule_reminder`` moves due reminders into working memory there), so the
model reads what they changed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from satchel.agent._agent_calls import ToolRunner
from satchel.agent._agent_history import ConversationLog
from satchel.agent._context import fit_history
from satchel.agent._messages import ChatMessage, ModelRequest
from satchel.agent._models import Model
from satchel.agent._run import RunResult
from satchel.agent._summary import summarize
from satchel.schema import Dialect

__all__ = ["build_request"]


async def build_request(
    *,
    model: Model,
    instructions: str,
    log: ConversationLog,
    runner: ToolRunner,
    run: RunResult,
    history: list[ChatMessage],
    allowed: list[str],
) -> ModelRequest:
    """The next request of ``run`` to ``model`` (see the module docstring), offering
    the ``allowed`` tools."""
    budget, tools = runner.budget, runner.tools
    kept, summary = fit_history(history, budget, runner.count)
    if budget.summarizer == "model":
        left = history[: len(history) - len(kept)]
        summary = await _running_summary(model, log, runner, run, left)
    parts = [instructions.strip()]
    if log.memory is not None:
        from satchel.builtin import render_context

        for hook in tools.context_hooks():
            await hook.before_context(log.name)
        parts.append(await render_context(log.memory, log.name, tools))
    else:
        parts.append(tools.usage_rules())
    if runner.rules:
        parts.append("## Tool Rules\n" + "\n".join(f"- {r.render()}" for r in runner.rules))
    if summary:
        parts.append("## Earlier in this conversation\n" + summary)
    offered = set(allowed)
    dialect: Dialect = "anthropic" if getattr(model, "dialect", "") == "anthropic" else "openai"
    schemas = [s for s in tools.schemas(dialect) if _schema_name(s) in offered]
    return ModelRequest(
        system="\n\n".join(p for p in parts if p),
        messages=kept,
        tools=schemas,
        tool_names=allowed,
        require_tool=bool(allowed) and len(allowed) < len(tools),
    )


async def _running_summary(
    model: Model, log: ConversationLog, runner: ToolRunner, run: RunResult, left: list[ChatMessage]
) -> str:
    """The model-written summary of the messages that ``left`` the prompt, folding in
    those the stored summary does not cover yet."""
    previous, through = log.summary(run.conversation_id)
    new = [m for m in left if through is None or m.created_at is None or m.created_at > through]
    if not new:
        return previous
    text, usage = await summarize(model, previous, new, words=runner.budget.summary_words)
    run.usage = run.usage + usage
    stamps = [m.created_at for m in new if m.created_at is not None]
    await log.save_summary(run.conversation_id, text, max(stamps) if stamps else datetime.now(UTC))
    return text


def _schema_name(schema: dict[str, Any]) -> str:
    function = schema.get("function")
    if isinstance(function, dict):
        return str(function.get("name", ""))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return str(schema.get("name", ""))
