"""The built-in memory tools of the Letta/MemGPT pattern, as ordinary satchel tools.

* ``context``: edit core and working memory (append, replace, set, archive, load,
  swap, list);
* ``recall``: archival memory (insert, append, read, delete);
* ``search``: hybrid search of archival memory and past conversations;
* ``send_message``: speak to the user, other agents, groups and channels through a
  :class:`MessageRouter` with pluggable :class:`Endpoint`\\ s (Discord, Bluesky,
  webhooks, your own).

:class:`BuiltinTools` (or :func:`builtin_tools`) chooses which of them to build, with
their options and the user's replacements, and binds them to a
:class:`~satchel.memory.MemoryStore`; :func:`memory_toolset` binds all four;
:func:`render_context` renders an agent's memory and tool rules as its system context.

Example:
    >>> store = await SQLiteStore.open("memory.db", embedder=default_embedder())
    >>> tools = memory_toolset(store)
    >>> system = await render_context(store, "ada", tools)
    >>> await tools.call("context", {"operation": "append", "label": "human",
    ...                              "content": "Likes tea."}, ToolContext(agent="ada"))
"""

from satchel.builtin._builder import BuiltinTools, builtin_tools
from satchel.builtin._context import (
    ContextAppend,
    ContextArchive,
    ContextCreate,
    ContextList,
    ContextLoad,
    ContextOperation,
    ContextOutput,
    ContextReplace,
    ContextSet,
    ContextSwap,
    ContextTool,
)
from satchel.builtin._dates import TimeParser
from satchel.builtin._recall import (
    RecallAppend,
    RecallDelete,
    RecallInsert,
    RecallOperation,
    RecallOutput,
    RecallRead,
    RecallTool,
)
from satchel.builtin._render import render_context
from satchel.builtin._search import (
    SearchFiltersInput,
    SearchInput,
    SearchOutput,
    SearchResult,
    SearchTool,
)
from satchel.builtin._send import (
    SendMessageInput,
    SendMessageOutput,
    SendMessageTool,
    send_message_input,
)
from satchel.builtin._toolset import memory_toolset
from satchel.builtin._views import BlockInfo
from satchel.channels import (
    AgentCallback,
    AgentTarget,
    BlueskyEndpoint,
    BlueskyTarget,
    Delivery,
    DiscordEndpoint,
    DiscordTarget,
    Endpoint,
    GroupTarget,
    MessageRouter,
    OutgoingMessage,
    RateLimit,
    Receipt,
    SendReport,
    Target,
    UserCallback,
    UserTarget,
    WebhookEndpoint,
    WebhookTarget,
    describe_target,
    grapheme_count,
)
from satchel.embed import load_model_with_progress, with_model_progress

__all__ = [
    "AgentCallback",
    "AgentTarget",
    "BlockInfo",
    "BlueskyEndpoint",
    "BlueskyTarget",
    "BuiltinTools",
    "ContextAppend",
    "ContextArchive",
    "ContextCreate",
    "ContextList",
    "ContextLoad",
    "ContextOperation",
    "ContextOutput",
    "ContextReplace",
    "ContextSet",
    "ContextSwap",
    "ContextTool",
    "Delivery",
    "DiscordEndpoint",
    "DiscordTarget",
    "Endpoint",
    "GroupTarget",
    "MessageRouter",
    "OutgoingMessage",
    "RateLimit",
    "RecallAppend",
    "RecallDelete",
    "RecallInsert",
    "RecallOperation",
    "RecallOutput",
    "RecallRead",
    "RecallTool",
    "Receipt",
    "SearchFiltersInput",
    "SearchInput",
    "SearchOutput",
    "SearchResult",
    "SearchTool",
    "SendMessageInput",
    "SendMessageOutput",
    "SendMessageTool",
    "SendReport",
    "Target",
    "TimeParser",
    "UserCallback",
    "UserTarget",
    "WebhookEndpoint",
    "WebhookTarget",
    "builtin_tools",
    "describe_target",
    "grapheme_count",
    "load_model_with_progress",
    "memory_toolset",
    "render_context",
    "send_message_input",
    "with_model_progress",
]
