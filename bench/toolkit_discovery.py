"""Finding the right productivity tool: recall@1 and recall@3 of ``discover_tools`` over
the toolkit, on requests a person makes of an assistant. A script, not a test.

The requests are written here, each with the one tool that serves it. Requests whose
tool is not in this build (the mail tools, reminders) are left out and counted. Two
rankings run in the same process: BM25 only (the baseline) and the shipped hybrid
(BM25 + the local MiniLM embedder).

Run:  uv run python bench/toolkit_discovery.py
"""

from __future__ import annotations

import time

import anyio
from toolkit_common import whole_toolkit

from satchel import ToolRegistry
from satchel.meta import MetaTools, Ranking

REQUESTS: list[tuple[str, str]] = [
    # calendar: add
    ("Put a dentist appointment on my calendar for tomorrow at 3pm", "add_calendar_event"),
    ("Schedule a meeting with Sam next Tuesday morning", "add_calendar_event"),
    ("Block two hours on Friday afternoon for deep work", "add_calendar_event"),
    ("Add my sister's birthday party this weekend", "add_calendar_event"),
    ("Set up a weekly standup every Monday at 9", "add_calendar_event"),
    ("Book lunch with Priya on Thursday at noon", "add_calendar_event"),
    ("Create an event for the team offsite on December 3", "add_calendar_event"),
    # calendar: update
    ("Move my 3pm meeting to 4pm", "update_calendar_event"),
    ("Reschedule the dentist to next week", "update_calendar_event"),
    ("Change the location of tomorrow's lunch to the Italian place", "update_calendar_event"),
    ("Make the standup 15 minutes instead of 30", "update_calendar_event"),
    ("Add Alex as an attendee to the planning meeting", "update_calendar_event"),
    ("Rename the event 'sync' to 'quarterly review'", "update_calendar_event"),
    # calendar: delete
    ("Cancel my meeting with Sam", "delete_calendar_event"),
    ("Delete the dentist appointment", "delete_calendar_event"),
    ("Remove the gym session from my calendar", "delete_calendar_event"),
    ("Get rid of Friday's team lunch event", "delete_calendar_event"),
    ("Clear the offsite from my schedule", "delete_calendar_event"),
    # calendar: list
    ("What's on my calendar today?", "list_calendar_events"),
    ("Show me my schedule for next week", "list_calendar_events"),
    ("Am I free tomorrow afternoon?", "list_calendar_events"),
    ("What meetings do I have this week?", "list_calendar_events"),
    ("List my events between Monday and Wednesday", "list_calendar_events"),
    ("What does my Friday look like?", "list_calendar_events"),
    # calendar: search
    ("When is my next dentist appointment?", "search_calendar_events"),
    ("Find the meeting about the budget", "search_calendar_events"),
    ("Search my calendar for anything with Priya", "search_calendar_events"),
    ("When did I last have a one-on-one with Alex?", "search_calendar_events"),
    ("Look up the event at the conference center", "search_calendar_events"),
    # tasks: create
    ("Remind me to buy milk, add it to my to-do list", "create_task"),
    ("Add a task to file my taxes by Friday", "create_task"),
    ("I need to call the plumber, put that on my list", "create_task"),
    ("Create a to-do: send the report by end of day tomorrow", "create_task"),
    ("New task: renew passport, due next month", "create_task"),
    # tasks: update
    ("Change the due date of the taxes task to next Monday", "update_task"),
    ("Rename my 'call plumber' task to 'call electrician'", "update_task"),
    ("Add a note to the report task that it needs charts", "update_task"),
    ("Push the passport task back a week", "update_task"),
    # tasks: complete / incomplete
    ("I bought the milk, mark it done", "mark_task_complete"),
    ("Check off the plumber task", "mark_task_complete"),
    ("Mark the report as finished", "mark_task_complete"),
    ("I finished filing my taxes", "mark_task_complete"),
    ("Oops, the report isn't actually done, reopen it", "mark_task_incomplete"),
    ("Uncheck the milk task", "mark_task_incomplete"),
    ("Mark the taxes task as not completed", "mark_task_incomplete"),
    # tasks: delete
    ("Delete the milk task", "delete_task"),
    ("Remove 'call plumber' from my to-do list", "delete_task"),
    ("I don't need the passport task anymore, get rid of it", "delete_task"),
    # tasks: list
    ("What's on my to-do list?", "list_tasks"),
    ("Show me my open tasks", "list_tasks"),
    ("Which tasks are due this week?", "list_tasks"),
    ("What have I already finished on my list?", "list_tasks"),
    ("List everything I still have to do", "list_tasks"),
    # tasks: lists
    ("Which task lists do I have?", "get_task_lists"),
    ("Show me all my to-do lists", "get_task_lists"),
    ("What lists can I put tasks on?", "get_task_lists"),
    # mail (counted only when the mail tools are in this build)
    ("Do I have any new emails?", "list_unread_emails"),
    ("Show my unread messages", "list_unread_emails"),
    ("What came into my inbox I haven't read?", "list_unread_emails"),
    ("Read me my latest emails", "read_emails"),
    ("Show the last ten messages in my inbox", "read_emails"),
    ("Find the email from the bank about my statement", "search_emails"),
    ("Search my mail for the flight confirmation", "search_emails"),
    ("Did Sam email me about the contract?", "search_emails"),
    ("Open that email and show me the whole message", "get_email_details"),
    ("Give me the full text and attachments of the message from Alex", "get_email_details"),
    ("Summarize my emails from this week", "summarize_weekly_emails"),
    ("Give me a digest of the week's mail and what needs a reply", "summarize_weekly_emails"),
    ("Email Sam that I'll be late", "send_email"),
    ("Send a message to the team with the agenda, cc Alex", "send_email"),
    ("Reply to Priya saying thanks", "send_email"),
    # the agent's own reminders and tracked work
    ("Remind yourself to check the build in 2 hours", "schedule_reminder"),
    ("Set a reminder for every Monday at 9 to review the week", "schedule_reminder"),
    ("Cancel the reminder about the build", "schedule_reminder"),
    ("Keep track of this migration and break it into steps", "track_task"),
    ("Update the status of the research task you are tracking", "track_task"),
]

HELD_OUT: list[tuple[str, str]] = [
    # written after the one wording pass over the tool descriptions, never tuned on
    ("Pencil in coffee with Jordan on Wednesday at 10", "add_calendar_event"),
    ("I have a doctor's visit on the 14th at 11am, save it", "add_calendar_event"),
    ("Push my call with the bank to Thursday", "update_calendar_event"),
    ("The board meeting now starts at 2, fix it", "update_calendar_event"),
    ("Scrap the yoga class on Saturday", "delete_calendar_event"),
    ("Take the webinar off my calendar", "delete_calendar_event"),
    ("Anything planned for Sunday?", "list_calendar_events"),
    ("Give me my agenda for the next three days", "list_calendar_events"),
    ("Have I got anything booked with the accountant?", "search_calendar_events"),
    ("When was the kickoff meeting?", "search_calendar_events"),
    ("Jot down: pick up dry cleaning", "create_task"),
    ("Make a note to water the plants every day, as a to-do", "create_task"),
    ("The dry cleaning can wait until Saturday, change its date", "update_task"),
    ("Done with watering the plants", "mark_task_complete"),
    ("Put the dry cleaning back on my list as not done", "mark_task_incomplete"),
    ("Erase the plants task", "delete_task"),
    ("What do I still need to do today?", "list_tasks"),
    ("How many lists of tasks are there?", "get_task_lists"),
]


async def recall(meta: MetaTools, cases: list[tuple[str, str]]) -> tuple[float, float, float]:
    hit1 = hit3 = 0
    start = time.perf_counter()
    for query, gold in cases:
        result = await meta.registry.call("discover_tools", {"query": query, "limit": 3})
        assert result.ok, result.to_text()
        names = [row[0] for row in result.output["tools"]]
        hit1 += names[:1] == [gold]
        hit3 += gold in names
    ms = (time.perf_counter() - start) * 1000 / len(cases)
    return hit1 / len(cases), hit3 / len(cases), ms


async def main() -> None:
    tools, _ = await whole_toolkit()
    await measure(tools, REQUESTS, "requests")
    await measure(tools, HELD_OUT, "held-out requests")
    await show_misses(tools, [(q, g) for q, g in REQUESTS + HELD_OUT if g in tools])


async def measure(tools: ToolRegistry, requests: list[tuple[str, str]], label: str) -> None:
    cases = [(q, g) for q, g in requests if g in tools]
    left = sorted({g for _, g in requests if g not in tools})
    print(f"\n{len(tools)} tools; {len(cases)} of {len(requests)} {label} have their tool here")
    if left:
        print(f"   left out (tool not in this build): {', '.join(left)}")
    rankings = {"BM25 only (baseline)": Ranking(mode="bm25"), "shipped hybrid": Ranking()}
    base: tuple[float, float, float] | None = None
    print(
        f"   {'ranking':<22} {'recall@1':>9} {'recall@3':>9} {'vs BM25 @1':>11} {'@3':>6} {'ms':>6}"
    )
    for label, ranking in rankings.items():
        meta = MetaTools(ToolRegistry(list(tools)), ranking=ranking)
        await meta.prepare()
        r1, r3, ms = await recall(meta, cases)
        base = base or (r1, r3, ms)
        print(
            f"   {label:<22} {r1:>9.3f} {r3:>9.3f} {r1 / base[0]:>10.2f}x {r3 / base[1]:>5.2f}x "
            f"{ms:>6.2f}"
        )


async def show_misses(tools: ToolRegistry, cases: list[tuple[str, str]]) -> None:
    meta = MetaTools(ToolRegistry(list(tools)))
    misses: list[str] = []
    for query, gold in cases:
        result = await meta.registry.call("discover_tools", {"query": query, "limit": 3})
        names = [row[0] for row in result.output["tools"]]
        if names[:1] != [gold]:
            misses.append(f"      {query!r}: wanted {gold}, got {names}")
    print(f"   shipped hybrid misses at @1 ({len(misses)}):")
    print("\n".join(misses))


if __name__ == "__main__":
    anyio.run(main)
