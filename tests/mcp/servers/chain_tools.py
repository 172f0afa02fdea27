"""A registry with a chain and a versioned tool, for ``satchel serve --tools``."""

from pydantic import BaseModel

from satchel import ToolRegistry, chain, step, tool


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
    body = "the server is down" if ticket_id % 2 else "please change my email"
    return Ticket(body=body, priority=ticket_id)


@tool(read_only=True)
def classify(text: str) -> Label:
    """Classify a ticket's text as urgent or normal.

    Args:
        text: The ticket's text.
    """
    return Label(label="urgent" if "down" in text else "normal")


@tool(read_only=True)
def escalate(label: str, ticket_id: int) -> Escalation:
    """Escalate a ticket to the on-call engineer.

    Args:
        label: Why it is escalated.
        ticket_id: The ticket's number.
    """
    return Escalation(escalated=f"ticket {ticket_id} ({label})")


@tool(name="convert", version="1", deprecated="use convert@2, which returns metres")
def convert_v1(feet: float) -> float:
    """Convert feet to inches."""
    return feet * 12


@tool(name="convert", version="2")
def convert_v2(feet: float) -> float:
    """Convert feet to metres."""
    return round(feet * 0.3048, 4)


registry = ToolRegistry([fetch_ticket, classify, escalate, convert_v1, convert_v2])
registry.register(
    chain(
        "triage",
        "fetch_ticket",
        step("classify", map={"text": "body"}),
        step("escalate", when="label == 'urgent'"),
        description="Fetch a ticket, classify it, and escalate it when it is urgent.",
    )
)
