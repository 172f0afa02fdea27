"""The model request of :class:`~satchel.agent.Agent`: the system prompt (instructions,
the rendered memory or the tool usage rules, the tool rules, the summary of what left
the prompt), the history that fits the budget (:mod:`satchel.agent._context`), and the
tools the rules offer now, in the model's dialect.

:class:`RequestBuilder` is a part of the agent (a base), kept in its own module; it
holds no state of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from satchel.agent._context import ContextBudget, fit_history
from satchel.agent._messages import ChatMessage, ModelRequest
from satchel.agent._models import Model
from satchel.agent._run import RunResult
from satchel.agent._summary import SUMMARY_KIND, summarize
from satchel.memory import MemoryStore
from satchel.registry import ToolRegistry
from satchel.rules import ToolRule
from satchel.schema import Dialect

__all__ = ["RequestBuilder"]


class RequestBuilder:
    """The model request of :class:`~satchel.agent.Agent` (see the module docstring);
    the agent supplies the attributes below."""

    name: str
    model: Model
    memory: MemoryStore | None
    tools: ToolRegistry
    rules: list[ToolRule]
    instructions: str
    budget: ContextBudget
    _count: Callable[[str], int]
    _summaries: dict[str, tuple[str, datetime | None]]

    async def _request(
        self, run: RunResult, history: list[ChatMessage], allowed: list[str]
    ) -> ModelRequest:
        kept, summary = fit_history(history, self.budget, self._count)
        if self.budget.summarizer == "model":
            summary = await self._running_summary(run, history[: len(history) - len(kept)])
        parts = [self.instructions.strip()]
        if self.memory is not None:
            from satchel.builtin import render_context

            await _deliver_reminders(self.tools, self.name)
            parts.append(await render_context(self.memory, self.name, self.tools))
        else:
            parts.append(self.tools.usage_rules())
        if self.rules:
            parts.append("## Tool Rules\n" + "\n".join(f"- {r.render()}" for r in self.rules))
        if summary:
            parts.append("## Earlier in this conversation\n" + summary)
        offered = set(allowed)
        dialect: Dialect = (
            "anthropic" if getattr(self.model, "dialect", "") == "anthropic" else "openai"
        )
        schemas = [s for s in self.tools.schemas(dialect) if _schema_name(s) in offered]
        return ModelRequest(
            system="\n\n".join(p for p in parts if p),
            messages=kept,
            tools=schemas,
            tool_names=allowed,
            require_tool=bool(allowed) and len(allowed) < len(self.tools),
        )

    async def _running_summary(self, run: RunResult, left: list[ChatMessage]) -> str:
        """The model-written summary of the messages that ``left`` the prompt, folding
        in those the stored summary does not cover yet."""
        previous, through = self._summaries.get(run.conversation_id, ("", None))
        new = [m for m in left if through is None or m.created_at is None or m.created_at > through]
        if not new:
            return previous
        text, usage = await summarize(self.model, previous, new, words=self.budget.summary_words)
        run.usage = run.usage + usage
        stamps = [m.created_at for m in new if m.created_at is not None]
        covered = max(stamps) if stamps else datetime.now(UTC)
        self._summaries[run.conversation_id] = (text, covered)
        if self.memory is not None:
            await self.memory.add_message(
                self.name,
                "system",
                text,
                conversation_id=run.conversation_id,
                metadata={"kind": SUMMARY_KIND, "through": covered.isoformat()},
            )
        return text


async def _deliver_reminders(tools: ToolRegistry, agent: str) -> None:
    """Deliver ``agent``'s due reminders (the productivity toolkit's
    ``schedule_reminder``) before its context is rendered, so the model sees them."""
    if "schedule_reminder" not in tools:
        return
    from satchel.toolkit import reminder_agenda

    agenda = reminder_agenda(tools)
    if agenda is not None:
        await agenda.fire_due(agent)


def _schema_name(schema: dict[str, Any]) -> str:
    function = schema.get("function")
    if isinstance(function, dict):
        return str(function.get("name", ""))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return str(schema.get("name", ""))
