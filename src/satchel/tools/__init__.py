"""Tool definitions and executors: typed, function and raw tools."""

from satchel.tools._base import BaseTool
from satchel.tools._context import ProgressReporter, ToolContext
from satchel.tools._function import FunctionTool, tool
from satchel.tools._raw import RawTool
from satchel.tools._result import ToolError, ToolResult
from satchel.tools._spec import OperationSpec, ToolAnnotations, ToolSpec, derive_summary
from satchel.tools._typed import Tool

__all__ = [
    "BaseTool",
    "FunctionTool",
    "OperationSpec",
    "ProgressReporter",
    "RawTool",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "derive_summary",
    "tool",
]
