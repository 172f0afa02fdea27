"""The tool registry and the wrappers that compose around tools and registries."""

from satchel.registry._base import BaseRegistry, RegistryEvent
from satchel.registry._hooks import ContextHook
from satchel.registry._registry import Mount, ToolRegistry
from satchel.registry._view import RegistryView, merged
from satchel.registry._wrappers import (
    WrapperTool,
    filtered,
    prefixed,
    with_logging,
    with_rate_limit,
    with_timeout,
    with_write_hook,
)

__all__ = [
    "BaseRegistry",
    "ContextHook",
    "Mount",
    "RegistryEvent",
    "RegistryView",
    "ToolRegistry",
    "WrapperTool",
    "filtered",
    "merged",
    "prefixed",
    "with_logging",
    "with_rate_limit",
    "with_timeout",
    "with_write_hook",
]
