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
