"""Issue 27 end to end: facts told to ``satchel run`` on earlier turns (one process per
turn, one ``--db``) are what the model's own ``search`` finds first on later turns,
not the question being asked, the replies or the tool traffic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.fake_openai import FakeOpenAI, completion, serving
from agent.test_run_cli import satchel_run

pytestmark = pytest.mark.anyio

FACTS = [  # (what the person says, how the model stores it, what it stores, question)
    ("My sister Ana lives in Porto.", "append", "Sister Ana lives in Porto.",
     "Where does my sister Ana live?"),
    ("I drive a blue Volvo estate.", "append", "Drives a blue Volvo estate.",
     "Which car do I drive?"),
    ("I am allergic to hazelnuts.", "append", "Allergic to hazelnuts.",
     "Which food allergy do I have?"),
    ("My dentist is Dr Okafor on Elm Street.", "insert", "Dentist: Dr Okafor, Elm Street.",
     "Who is my dentist?"),
    ("Our wifi password is tangerine-42.", "insert", "Wifi password: tangerine-42.",
     "What is the wifi password?"),
    ("My daughter's school play is on 12 March.", "insert", "Daughter's school play: 12 March.",
     "When is my daughter's school play?"),
]  # fmt: skip
ANSWERS = {question: stored.split(" ")[-1].rstrip(".") for _, _, stored, question in FACTS}
"""A word of each fact that no question and no other fact holds."""


class Scripted:
    """Answers like a model that stores what it is told and searches when asked: it
    reads the last message of each request, and keeps every search result it saw."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Any]] = {}
        self._asked: dict[str, str] = {}

    def __call__(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        last = body["messages"][-1]
        if last["role"] == "tool":
            call_id = last["tool_call_id"]
            if call_id in self._asked:
                self.seen[self._asked[call_id]] = json.loads(last["content"])
            return 200, completion("Done.")
        said = last["content"]
        for told, how, stored, question in FACTS:
            if said == told:
                args = (
                    {"operation": "append", "label": "human", "content": stored}
                    if how == "append"
                    else {"operation": "insert", "content": stored}
                )
                return 200, completion(calls=[("context" if how == "append" else "recall", args)])
            if said == question:
                reply = completion(calls=[("search", {"query": question})])
                self._asked[reply["choices"][0]["message"]["tool_calls"][0]["id"]] = question
                return 200, reply
        return 200, completion("Nice.")


@pytest.mark.timeout(900)
async def test_facts_told_on_earlier_turns_are_the_first_hits_of_later_searches(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    model = Scripted()
    fake = FakeOpenAI(model)
    turns = [told for told, *_ in FACTS] + ["Lovely weather today."]
    turns += [question for *_, question in FACTS]
    with serving(fake) as url:
        for message in turns:
            done = await anyio.to_thread.run_sync(
                lambda m=message: satchel_run(
                    db, "--model", "openai:fake-model", "--base-url", url, m
                )
            )
            assert done.returncode == 0, done.stderr
    assert set(model.seen) == set(ANSWERS)
    for question, output in model.seen.items():
        first = output["results"][0]
        assert ANSWERS[question] in first["text"], (question, output["results"][:3])
        assert first["text"] != question
        assert first["role"] != "tool"
