"""Tool definitions and executors: typed, function and raw tools."""

from satchel.tools._arguments import ArgumentsError, decode_arguments, validate_with_coercion
from satchel.tools._base import BaseTool, ToolLookup, result_from_exception
from satchel.tools._context import HumanAsker, ProgressReporter, ToolContext
from satchel.tools._function import FunctionTool, tool
from satchel.tools._metadata import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLES,
    VERSION_PATTERN,
    ToolMetadata,
    ToolOptions,
    build_spec,
    check_examples,
    check_version,
)
from satchel.tools._raw import RawTool
from satchel.tools._result import ErrorInfo, ToolResult
from satchel.tools._services import (
    ToolBroker,
    ToolMemory,
    ToolRouter,
    ToolSharedBlocks,
    ToolSources,
)
from satchel.tools._spec import (
    READ_ACTIONS,
    OperationSpec,
    ToolAnnotations,
    ToolSpec,
    derive_summary,
)
from satchel.tools._typed import Tool, build_plan, check_name

__all__ = [
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "READ_ACTIONS",
    "VERSION_PATTERN",
    "ArgumentsError",
    "BaseTool",
    "ErrorInfo",
    "FunctionTool",
    "HumanAsker",
    "OperationSpec",
    "ProgressReporter",
    "RawTool",
    "Tool",
    "ToolAnnotations",
    "ToolBroker",
    "ToolContext",
    "ToolLookup",
    "ToolMemory",
    "ToolMetadata",
    "ToolOptions",
    "ToolResult",
    "ToolRouter",
    "ToolSharedBlocks",
    "ToolSources",
    "ToolSpec",
    "build_plan",
    "build_spec",
    "check_examples",
    "check_name",
    "check_version",
    "decode_arguments",
    "derive_summary",
    "result_from_exception",
    "tool",
    "validate_with_coercion",
]
