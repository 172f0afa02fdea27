"""Scripted models a ``satchel run`` process loads with ``--model FILE:ATTR``."""

from satchel.agent import TestModel, call

remember = TestModel(
    [
        call("context", {"operation": "append", "label": "human", "content": "Likes green tea."}),
        call("send_message", {"target": {"type": "user"}, "content": "Noted, green tea."}),
    ]
)
"""Edits memory, then answers the user with send_message."""

looping = TestModel([call("context", {"operation": "list"})] * 50)
"""Calls the same tool forever."""

not_a_model = 42

greeter = TestModel(
    [
        call("discover_tools", {"query": "greet someone by name"}),
        call("invoke_tool", {"tool_name": "toy_greet", "parameters": {"name": "Ada"}}),
        "Greeted.",
    ]
)
"""Finds a mounted tool behind the meta-tools and calls it."""

direct_greeter = TestModel([call("toy_greet", {"name": "Ada"}), "Greeted."])
"""Calls a mounted tool served directly."""

wiper = TestModel([call("wipe", {"path": "/nonexistent/file"}), "never"])
"""Calls a destructive tool, which waits for approval."""

own_searcher = TestModel(
    [call("search", {"query": "Kyoto"}), call("read_note", {"label": "notes"}), "Found."]
)
"""Calls ``search`` (a user's, with ``--replace search``) and a tool that reads memory."""

memoryless = TestModel(
    [call("context", {"operation": "list"}), call("read_note", {"label": "notes"}), "Done."]
)
"""Tries a built-in (absent with ``--no-memory``), then a user's tool that reads memory."""
