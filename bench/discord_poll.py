"""The inbound Discord channel's cost, against the loopback fake Discord of the tests.

1. Reads per minute: how many requests a minute of polling sends, with N listened
   channels at ``poll_seconds``, on a simulated clock (the channel's own pacing and
   Discord's rate-limit headers decide; nothing is slept for real).
2. Inbound-to-reply overhead: one message said, fetched and replied to through
   :class:`~satchel.channels.DiscordChannel` (a read of every channel, the parse, the
   threaded post), as a ratio to the floor measured in the same run: the same requests
   sent bare with ``httpx`` (one GET per channel, one POST).

    uv run python bench/discord_poll.py --channels 5 --messages 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio
import anyio.lowlevel
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_services import DISCORD_TOKEN, FakeServices, running_services
from satchel.channels import Delivery, DiscordChannel, MemoryCursorStore

SAM = "420000000000000001"


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _channels(services: FakeServices, count: int) -> dict[str, str]:
    listen: dict[str, str] = {}
    for i in range(count):
        cid = str(777000000000000001 + i)
        services.discord.add_channel(cid, f"c{i}")
        listen[f"c{i}"] = cid
    return listen


async def reads_per_minute(count: int, poll_seconds: float) -> int:
    with running_services() as services:
        listen = _channels(services, count)
        clock = SimulatedClock()
        channel = DiscordChannel(
            DISCORD_TOKEN,
            listen=listen,
            poll_seconds=poll_seconds,
            base_url=f"{services.base_url}/api/v10",
            cursor_store=MemoryCursorStore(),
            clock=clock,
            sleep=clock.sleep,
        )
        await channel.start()
        before = len(services.requests)
        while clock.now < 60.0:
            await channel.fetch()
        await channel.aclose()
        return len(services.requests) - before


async def overhead(count: int, messages: int) -> tuple[float, float]:
    """Median seconds of one fetch + reply, and of the same requests bare, interleaved
    message by message so both see the same machine load."""
    with running_services() as services:
        listen = _channels(services, count)
        first = next(iter(listen.values()))
        channel = DiscordChannel(
            DISCORD_TOKEN,
            listen=listen,
            allowed_users=[SAM],
            dm=False,
            base_url=f"{services.base_url}/api/v10",
            cursor_store=MemoryCursorStore(),
            delivery=Delivery(),
            sleep=lambda _: anyio.lowlevel.checkpoint(),
        )
        await channel.start()
        spent: list[float] = []
        floor: list[float] = []
        headers = {"Authorization": f"Bot {DISCORD_TOKEN}"}
        async with httpx.AsyncClient(base_url=f"{services.base_url}/api/v10") as client:
            for i in range(messages):
                services.discord.say(first, SAM, f"message {i}")
                began = time.perf_counter()
                (message,) = await channel.fetch()
                await channel.reply(message, "noted")
                await channel.acknowledge(message)
                spent.append(time.perf_counter() - began)

                said = services.discord.say(first, SAM, f"floor {i}")
                began = time.perf_counter()
                after = str(int(said["id"]) - 1)
                for cid in listen.values():
                    got = await client.get(
                        f"/channels/{cid}/messages",
                        params={"after": after, "limit": "100"},
                        headers=headers,
                    )
                    got.json()
                await client.post(
                    f"/channels/{first}/messages", json={"content": "noted"}, headers=headers
                )
                floor.append(time.perf_counter() - began)
                (stray,) = await channel.fetch()  # the floor's message, out of the way
                await channel.acknowledge(stray)
        await channel.aclose()
        return statistics.median(spent), statistics.median(floor)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--channels", type=int, default=5)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    for poll in (2.0, 5.0):
        sent = await reads_per_minute(args.channels, poll)
        print(
            f"{args.channels} channels, poll_seconds={poll:g}: {sent} reads a minute "
            f"({sent / 60:.2f}/s; Discord's global limit is 50/s)"
        )
    median, floor = await overhead(args.channels, args.messages)
    print(
        f"fetch + reply with {args.channels} channels: median {median * 1000:.2f} ms; "
        f"floor (bare GETs + POST): {floor * 1000:.2f} ms; x{median / floor:.2f}"
    )


if __name__ == "__main__":
    anyio.run(main)
