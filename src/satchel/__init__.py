"""satchel: typed tools and stateful memory for LLM agents.

Import what you need from here; the subpackages (``satchel.tools``,
``satchel.registry``, ``satchel.schema``, ``satchel.memory``, ...) hold the rest.
"""

import importlib as _importlib
import typing as _typing

from satchel._errors import (
    AlreadyExistsError,
    ApprovalError,
    ApprovalRequired,
    CharLimitError,
    ConsentRequiredError,
    EmbeddingError,
    ErrorKind,
    InvalidInputError,
    MemoryStoreError,
    ModelError,
    NotFoundError,
    PermissionDeniedError,
    RemoteToolError,
    SatchelError,
    SatchelUsageError,
    SchemaError,
    StorageError,
    ToolFailed,
    ToolRetry,
    ToolSignal,
    VersionConflictError,
)
from satchel._version import __version__

if _typing.TYPE_CHECKING:
    from satchel.agent import Agent
    from satchel.compose import chain, step
    from satchel.consent import PermissionBroker, SQLiteApprovalStore
    from satchel.memory import MemoryStore, SQLiteStore
    from satchel.meta import MetaTools
    from satchel.registry import (
        RegistryEvent,
        ToolRegistry,
        WrapperTool,
        filtered,
        prefixed,
        with_logging,
        with_rate_limit,
        with_timeout,
    )
    from satchel.tools import (
        BaseTool,
        ErrorInfo,
        FunctionTool,
        OperationSpec,
        RawTool,
        Tool,
        ToolAnnotations,
        ToolContext,
        ToolResult,
        ToolSpec,
        tool,
    )

# Each lazily exported name and the subpackage that defines it: ``import satchel``
# loads none of them (nor numpy, the vector index or the database drivers) until a
# name is first used (PEP 562).
_LAZY: dict[str, str] = {
    "Agent": "satchel.agent",
    "chain": "satchel.compose",
    "step": "satchel.compose",
    "PermissionBroker": "satchel.consent",
    "SQLiteApprovalStore": "satchel.consent",
    "MemoryStore": "satchel.memory",
    "SQLiteStore": "satchel.memory",
    "MetaTools": "satchel.meta",
    "RegistryEvent": "satchel.registry",
    "ToolRegistry": "satchel.registry",
    "WrapperTool": "satchel.registry",
    "filtered": "satchel.registry",
    "prefixed": "satchel.registry",
    "with_logging": "satchel.registry",
    "with_rate_limit": "satchel.registry",
    "with_timeout": "satchel.registry",
    "BaseTool": "satchel.tools",
    "ErrorInfo": "satchel.tools",
    "FunctionTool": "satchel.tools",
    "OperationSpec": "satchel.tools",
    "RawTool": "satchel.tools",
    "Tool": "satchel.tools",
    "ToolAnnotations": "satchel.tools",
    "ToolContext": "satchel.tools",
    "ToolResult": "satchel.tools",
    "ToolSpec": "satchel.tools",
    "tool": "satchel.tools",
}

__all__ = [
    "Agent",
    "AlreadyExistsError",
    "ApprovalError",
    "ApprovalRequired",
    "BaseTool",
    "CharLimitError",
    "ConsentRequiredError",
    "EmbeddingError",
    "ErrorInfo",
    "ErrorKind",
    "FunctionTool",
    "InvalidInputError",
    "MemoryStore",
    "MemoryStoreError",
    "MetaTools",
    "ModelError",
    "NotFoundError",
    "OperationSpec",
    "PermissionBroker",
    "PermissionDeniedError",
    "RawTool",
    "RegistryEvent",
    "RemoteToolError",
    "SQLiteApprovalStore",
    "SQLiteStore",
    "SatchelError",
    "SatchelUsageError",
    "SchemaError",
    "StorageError",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolFailed",
    "ToolRegistry",
    "ToolResult",
    "ToolRetry",
    "ToolSignal",
    "ToolSpec",
    "VersionConflictError",
    "WrapperTool",
    "__version__",
    "chain",
    "filtered",
    "prefixed",
    "step",
    "tool",
    "with_logging",
    "with_rate_limit",
    "with_timeout",
]


def __getattr__(name: str) -> object:
    """Import a lazily exported name from its subpackage on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'satchel' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the public names, loaded or not."""
    return sorted(set(globals()) | set(__all__))
