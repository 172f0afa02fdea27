"""Tool composition: chains of tools, their conditions, and chains written as config.

Example:
    >>> from satchel import chain, step
    >>> triage = chain(
    ...     "triage",
    ...     "fetch_ticket",
    ...     step("classify", map={"text": "body"}),
    ...     step("escalate", when="label == 'urgent'", on_error="skip"),
    ...     description="Fetch a ticket, classify it, and escalate it when urgent.",
    ... )
    >>> registry.register(triage)
"""

from satchel.compose._chain import ChainTool, chain
from satchel.compose._conditions import Condition, Expr, Predicate, as_condition, truthy
from satchel.compose._config import ChainConfig, ChainsFile, StepConfig, load_chains
from satchel.compose._steps import MAX_ITEMS, Fallback, Step, StepTool, step

__all__ = [
    "MAX_ITEMS",
    "ChainConfig",
    "ChainTool",
    "ChainsFile",
    "Condition",
    "Expr",
    "Fallback",
    "Predicate",
    "Step",
    "StepConfig",
    "StepTool",
    "as_condition",
    "chain",
    "load_chains",
    "step",
    "truthy",
]
