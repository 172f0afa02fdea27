"""Consent answered where it was asked: a real agent's held memory write or tool call,
announced in the chat its turn came from, waits for the person's answer there, then
runs once (or not at all) and the turn goes on with the result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from channels.consent_world import NOTES, ChatChannel, DictState, model_server, world
from satchel.agent import RunResult
from satchel.channels import ChannelConsent
from satchel.consent import ConsentScope, PermissionBroker, SQLiteApprovalStore

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with model_server() as base:
        yield base


def _said(result: RunResult) -> str:
    assert result.reply is not None
    return result.reply


def _request_id(text: str) -> str:
    [word] = [w for w in text.split() if w.startswith("ap_")][:1]
    return word.rstrip(".,;:)'")


@pytest.mark.parametrize("handler", ["answered", "memory-consent", "broker"])
async def test_a_yes_reply_to_the_announcement_writes_once_and_the_turn_reports_it(
    tmp_path: Path, url: str, handler: str
) -> None:
    results: list[RunResult] = []
    async with world(tmp_path / "m.db", url, handler=handler) as w:
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                results.append(await w.turn("Buy oat milk."))

            group.start_soon(turn)
            announced = await w.channel.next_sent()
            request_id = _request_id(announced.text)
            answer = w.message("yes", reply_to=announced.message.message_id)
            assert await w.consent.intercept(answer)
            confirmed = await w.channel.next_sent()
        notes = await w.notes()
        decided = await w.broker.get(request_id)

    assert announced.chat == "42"
    assert "agent 'ada' wants to append to memory block 'notes'" in announced.text
    assert "\nContent: text='Buy oat milk.'\n" in announced.text
    assert [a.label for a in announced.actions] == ["Approve", "Deny"]
    assert confirmed.reply_to == answer.message_id
    assert confirmed.text.startswith("Approved: agent 'ada' may append to memory block 'notes'")
    assert notes == f"{NOTES}\nBuy oat milk."  # exactly once
    [result] = results
    assert result.stop == "reply"
    assert "Appended 13 characters to 'notes'" in _said(result)
    assert decided is not None
    assert (decided.status, decided.decided_by) == ("used", "telegram:7")


async def test_a_deny_reply_refuses_the_write_and_nothing_is_written(
    tmp_path: Path, url: str
) -> None:
    results: list[RunResult] = []
    async with world(tmp_path / "m.db", url) as w:
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                results.append(await w.turn("Sell the car."))

            group.start_soon(turn)
            announced = await w.channel.next_sent()
            reply = w.message("No.", reply_to=announced.message.message_id)
            assert await w.consent.intercept(reply)
            confirmed = await w.channel.next_sent()
        notes = await w.notes()

    assert confirmed.text.startswith("Denied: agent 'ada' may not append")
    assert notes == NOTES
    [result] = results
    assert "refused" in _said(result)


async def test_a_strangers_yes_does_nothing_and_the_persons_answer_still_counts(
    tmp_path: Path, url: str
) -> None:
    results: list[RunResult] = []
    async with world(tmp_path / "m.db", url) as w:
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                results.append(await w.turn("Call mum."))

            group.start_soon(turn)
            announced = await w.channel.next_sent()
            request_id = _request_id(announced.text)
            message_id = announced.message.message_id
            stranger = [
                w.message("yes", sender="666", reply_to=message_id),
                w.message(f"approve {request_id}", sender="666"),
                w.message("", sender="666", action=f"consent:approve:{request_id}"),
            ]
            taken = [await w.consent.intercept(m) for m in stranger]
            still = await w.broker.get(request_id)
            notes_meanwhile = await w.notes()
            assert await w.consent.intercept(w.message("yes", reply_to=message_id))
        notes = await w.notes()

    assert taken == [False, False, False]  # left to the host, which refuses strangers
    assert still is not None
    assert still.status == "pending"
    assert notes_meanwhile == NOTES
    assert notes == f"{NOTES}\nCall mum."
    assert not any(s.chat == "42" and s.reply_to in {m.message_id for m in stranger}
                   for s in w.channel.sent)  # fmt: skip


async def test_the_approve_button_runs_a_held_tool_call_once(tmp_path: Path, url: str) -> None:
    results: list[RunResult] = []
    async with world(tmp_path / "m.db", url) as w:
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                results.append(await w.turn("wipe /tmp/old.log"))

            group.start_soon(turn)
            announced = await w.channel.next_sent()
            approve, _ = announced.actions
            pressed = w.message("Approve", action=approve.data)
            assert await w.consent.intercept(pressed)
            confirmed = await w.channel.next_sent()
        again = await w.consent.intercept(w.message("", action=approve.data))
        second = w.channel.sent[-1]

    assert "wants to run wipe" in announced.text
    assert "Arguments: path='/tmp/old.log'" in announced.text
    assert confirmed.text.startswith("Approved: agent 'ada' may run wipe")
    assert w.wiped == ["/tmp/old.log"]  # once
    [result] = results
    assert result.stop == "reply"
    assert "wiped /tmp/old.log" in _said(result)
    assert again  # a second press is answered, and consumed
    assert "already answered (used by telegram:7)" in second.text


async def test_a_deny_command_refuses_a_held_tool_call(tmp_path: Path, url: str) -> None:
    results: list[RunResult] = []
    async with world(tmp_path / "m.db", url) as w, anyio.create_task_group() as group:

        async def turn() -> None:
            results.append(await w.turn("wipe /etc"))

        group.start_soon(turn)
        announced = await w.channel.next_sent()
        request_id = _request_id(announced.text)
        assert await w.consent.intercept(w.message(f"deny {request_id}"))
        await w.channel.next_sent()

    assert w.wiped == []
    [result] = results
    [(_, held)] = result.tool_calls
    assert held.error is not None
    assert held.error.kind == "denied"
    assert "refused" in held.error.message


async def test_an_unknown_id_gets_a_short_answer_and_other_text_is_a_normal_turn(
    tmp_path: Path, url: str
) -> None:
    async with world(tmp_path / "m.db", url) as w:
        unknown = await w.consent.intercept(w.message("approve ap_doesnotexist"))
        said = w.channel.sent[-1].text
        plain = await w.consent.intercept(w.message("yes"))  # nothing waits: a turn
        other = await w.consent.intercept(w.message("approve the plan"))
        button = await w.consent.intercept(w.message("", action="menu:open"))

    assert unknown
    assert said == "There is no approval request ap_doesnotexist."
    assert (plain, other, button) == (False, False, False)


async def test_ambiguous_replies_to_an_announcement_are_left_for_a_turn(
    tmp_path: Path, url: str
) -> None:
    async with world(tmp_path / "m.db", url) as w:
        async with anyio.create_task_group() as group:
            group.start_soon(w.turn, "Water the plants.")
            announced = await w.channel.next_sent()
            message_id = announced.message.message_id
            unsure = await w.consent.intercept(
                w.message("what does this mean?", reply_to=message_id)
            )
            # a plain yes, not a reply, with exactly one request waiting in the chat
            assert await w.consent.intercept(w.message("ok"))
        notes = await w.notes()

    assert not unsure
    assert notes == f"{NOTES}\nWater the plants."


async def test_two_waiting_requests_answered_in_the_other_order(tmp_path: Path, url: str) -> None:
    results: dict[str, RunResult] = {}
    async with world(tmp_path / "m.db", url) as w:
        async with anyio.create_task_group() as group:

            async def turn(text: str, chat: str) -> None:
                results[chat] = await w.turn(text, chat)

            group.start_soon(turn, "First note.", "41")
            first = await w.channel.next_sent()
            group.start_soon(turn, "wipe /tmp/second", "42")
            second = await w.channel.next_sent()
            bare = await w.consent.intercept(w.message("yes", chat="41"))  # one waits in 41
            assert bare
            await w.channel.next_sent()
            assert await w.consent.intercept(
                w.message("no", chat="42", reply_to=second.message.message_id)
            )
            await w.channel.next_sent()
        notes = await w.notes()

    assert (first.chat, second.chat) == ("41", "42")
    assert notes == f"{NOTES}\nFirst note."
    assert w.wiped == []
    assert "Appended 11 characters" in _said(results["41"])
    [(_, held)] = results["42"].tool_calls
    assert held.error is not None
    assert held.error.kind == "denied"


async def test_two_waiting_requests_in_one_chat_need_a_reply_or_an_id(
    tmp_path: Path, url: str
) -> None:
    results: list[RunResult] = []
    async with world(tmp_path / "m.db", url) as w:
        async with anyio.create_task_group() as group:

            async def turn(text: str, conversation: str) -> None:
                origin = "telegram:42"
                results.append(await w.agent.run(text, conversation_id=conversation, origin=origin))

            group.start_soon(turn, "One.", "a")
            one = await w.channel.next_sent()
            group.start_soon(turn, "Two.", "b")
            two = await w.channel.next_sent()
            ambiguous = await w.consent.intercept(w.message("yes"))
            assert await w.consent.intercept(w.message("yes", reply_to=two.message.message_id))
            await w.channel.next_sent()
            assert await w.consent.intercept(w.message(f"no {_request_id(one.text)}"))
            await w.channel.next_sent()
        notes = await w.notes()

    assert not ambiguous
    assert notes == f"{NOTES}\nTwo."


async def test_no_answer_in_time_is_a_refusal_and_a_late_yes_is_told_so(
    tmp_path: Path, url: str
) -> None:
    async with world(tmp_path / "m.db", url, wait=0.5) as w:
        result = await w.turn("Too late.")
        announced = w.channel.sent[0]
        late = await w.consent.intercept(w.message("yes", reply_to=announced.message.message_id))
        said = w.channel.sent[-1].text
        notes = await w.notes()

    assert notes == NOTES
    assert "refused" in _said(result)
    assert late
    assert said == f"Request {_request_id(announced.text)} has expired; nothing ran."


async def test_a_reply_after_a_restart_still_resolves_the_request(tmp_path: Path, url: str) -> None:
    state = DictState()
    db = tmp_path / "m.db"
    async with world(db, url, state=state) as w, anyio.create_task_group() as group:
        group.start_soon(w.turn, "Before the restart.")
        announced = await w.channel.next_sent()
        group.cancel_scope.cancel()  # the process stops while the turn waits
    request_id = _request_id(announced.text)
    channel = ChatChannel(allowed={"7"})
    async with PermissionBroker(SQLiteApprovalStore(db)) as broker:
        consent = ChannelConsent(broker, [channel], state=state)  # a new process
        taken = await consent.intercept(w.message("yes", reply_to=announced.message.message_id))
        decided = await broker.get(request_id)
    async with world(db, url, state=state) as again:
        result = await again.turn("Before the restart.")  # the turn runs again
        notes = await again.notes()

    assert taken
    assert channel.sent[-1].text.startswith("Approved:")
    assert decided is not None
    assert decided.status == "approved"
    assert notes == f"{NOTES}\nBefore the restart."
    assert "Appended 19 characters" in _said(result)


async def test_a_request_from_elsewhere_goes_to_notify_and_the_call_is_not_held(
    tmp_path: Path, url: str
) -> None:
    async with world(tmp_path / "m.db", url) as w:
        result = await w.agent.run("wipe /srv", origin="agent:bob")
        announced = await w.channel.next_sent()
        waits = [w.broker.answer_wait(o) for o in ("telegram:42", "agent:bob", "discord:1")]

    assert waits == [60.0, None, None]
    assert w.broker.answer_wait("telegram:42") is None  # once the consent stopped running
    assert result.stop == "needs_approval"  # as without channels
    assert announced.chat == "7"  # the channel's notify chat
    assert "wants to run wipe" in announced.text
    assert w.wiped == []


async def test_a_mail_reply_is_read_without_its_quote_and_signature(
    tmp_path: Path, url: str
) -> None:
    async with world(tmp_path / "m.db", url) as w:
        scope = ConsentScope.tool_execution("wipe", {"path": "/a"}, agent="ada")
        asked = await w.broker.request(
            scope, "Run wipe", "telegram:42", arguments={"path": "/a"}, wait=False
        )
        announced = await w.channel.next_sent()
        mail = (
            "Yes, go ahead.\n\nOn Fri, 27 Nov 2026, ada wrote:\n> Approval needed: ...\n"
            "> Request: ...\n-- \nSam\nsent from my phone, yes\n"
        )
        taken = await w.consent.intercept(w.message(mail, reply_to=announced.message.message_id))
        decided = await w.broker.get(asked.id)

    assert taken
    assert decided is not None
    assert decided.status == "approved"


REPLIES = {
    "yes": "approved",
    "Yes, go ahead!": "approved",
    "ok": "approved",
    "👍": "approved",
    "do it": "approved",
    "No": "denied",
    "no thanks": "denied",
    "no, not now.": "denied",
    "deny": "denied",
    "yes but change the text first": "pending",
    "no, do it": "pending",
    "what is this?": "pending",
    "": "pending",
}


async def test_only_a_plain_yes_or_no_answers_a_reply(tmp_path: Path, url: str) -> None:
    seen: dict[str, str] = {}
    async with world(tmp_path / "m.db", url) as w:
        for number, (text, _) in enumerate(REPLIES.items()):
            scope = ConsentScope.tool_execution("wipe", {"n": number}, agent="ada")
            asked = await w.broker.request(scope, "Run wipe", "telegram:42", wait=False)
            announced = await w.channel.next_sent()
            await w.consent.intercept(w.message(text, reply_to=announced.message.message_id))
            decided = await w.broker.get(asked.id)
            assert decided is not None
            seen[text] = decided.status
            if decided.status != "pending":
                await w.channel.next_sent()  # the confirmation

    assert seen == REPLIES
