"""Small tools the composition tests chain together."""

from __future__ import annotations

from pydantic import BaseModel

from satchel import ToolFailed, ToolRegistry, tool


class Ticket(BaseModel):
    body: str
    priority: int


class Label(BaseModel):
    label: str


class Escalation(BaseModel):
    escalated: str


@tool(read_only=True)
def fetch_ticket(ticket_id: int) -> Ticket:
    """Fetch a support ticket.

    Args:
        ticket_id: The ticket's number.
    """
    if ticket_id < 0:
        raise ToolFailed(f"There is no ticket {ticket_id}.")
    body = "the server is down" if ticket_id % 2 else "please change my email"
    return Ticket(body=body, priority=ticket_id)


@tool(read_only=True)
def classify(text: str) -> Label:
    """Classify a ticket's text as urgent or normal.

    Args:
        text: The ticket's text.
    """
    return Label(label="urgent" if "down" in text else "normal")


@tool
def escalate(label: str, ticket_id: int) -> Escalation:
    """Escalate a ticket to the on-call engineer.

    Args:
        label: Why it is escalated.
        ticket_id: The ticket's number.
    """
    return Escalation(escalated=f"ticket {ticket_id} ({label})")


def support_registry() -> ToolRegistry:
    """The three ticket tools."""
    return ToolRegistry([fetch_ticket, classify, escalate])
