"""``satchel up``'s inbound-to-reply overhead with a scripted model, as a ratio to the
model's own time. A script, not a test.

Everything runs in one process: the fake Telegram Bot API server
(``tests/fake_telegram.py``, a real loopback HTTP server in a thread), and the
:class:`satchel.up.Host` with an :class:`~satchel.agent.Agent` whose model is a
:class:`~satchel.agent.FunctionModel` that waits ``--model-ms`` milliseconds and
answers (a fast local model), on a SQLite memory store (``--embedder none`` by
default: the local embedding model's cost is measured elsewhere; ``default`` adds it)
with the ledger in the same file. Telegram goes through python-telegram-bot's ``Bot``
over HTTP, as in production.

One message at a time (the next once the reply has arrived), ``--messages`` of them:

* inbound-to-reply: from the moment the fake holds the update to the moment it
  records the ``sendMessage`` (the long poll is already waiting, as in steady state);
* model: the time spent inside the model function, per turn;
* baseline, in the same run: ``agent.run`` alone for the same message on the same
  store (no channel, no ledger), so the host's own part is told apart from the
  agent's bookkeeping.

Run:  uv run python bench/up_overhead.py [--messages 100] [--model-ms 200] [--embedder none]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from fake_telegram import TOKEN, FakeTelegram, serving_telegram
from satchel.agent import Agent, FunctionModel, ModelRequest, ModelResponse
from satchel.channels import TelegramChannel
from satchel.memory import SQLiteStore
from satchel.up import Host, SQLiteUpLedger

SAM = 123456789


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _measure(messages: int, model_ms: float, embedder: str) -> None:
    spent: list[float] = []

    async def model(request: ModelRequest) -> ModelResponse:
        start = time.perf_counter()
        await anyio.sleep(model_ms / 1000)
        spent.append(time.perf_counter() - start)
        return ModelResponse(text=f"ok: {request.messages[-1].content}")

    folder = Path(tempfile.mkdtemp())
    db = folder / "m.db"
    store_args = {} if embedder == "default" else {"embedder": None}
    fake = FakeTelegram()
    async with SQLiteStore(db, **store_args) as store:  # pyright: ignore[reportArgumentType]
        await store.ensure_agent("ada")
        agent = Agent("ada", FunctionModel(model), memory=store)

        # baseline: the agent alone, same store, same model
        for i in range(5):
            await agent.run(f"warm {i}", conversation_id="baseline")
        spent.clear()
        alone: list[float] = []
        for i in range(messages):
            start = time.perf_counter()
            await agent.run(f"message {i}", conversation_id="baseline")
            alone.append(time.perf_counter() - start)
        model_alone = list(spent)
        spent.clear()

        with serving_telegram(fake) as url:
            channel = TelegramChannel(
                TOKEN, base_url=url, allowed_users=[SAM], notify_chat=SAM, poll_seconds=20
            )
            ledger = SQLiteUpLedger(db)
            host = Host(agent=agent, channels=[channel], ledger=ledger)
            through: list[float] = []
            async with anyio.create_task_group() as group:
                group.start_soon(host.run)
                for i in range(5 + messages):
                    sent_before = len(fake.sent)
                    start = time.perf_counter()
                    fake.message(SAM, f"message {i}")
                    await anyio.to_thread.run_sync(
                        lambda n=sent_before: fake.wait_sent(lambda s: True, count=n + 1)
                    )
                    if i >= 5:
                        through.append(time.perf_counter() - start)
                group.cancel_scope.cancel()
            await channel.aclose()
            await ledger.close()
        model_up = spent[5:]

    ms = 1000.0
    model_p50 = statistics.median(model_up) * ms
    print(f"messages {messages}, model {model_ms:g} ms, embedder {embedder}")
    print("| path | p50 ms | p95 ms | ratio to the model's p50 |")
    print("|---|---|---|---|")
    rows = [
        ("model (time inside FunctionModel, under up)", model_up),
        ("agent.run alone (baseline)", alone),
        ("satchel up: inbound to reply", through),
    ]
    for name, values in rows:
        p50, p95 = statistics.median(values) * ms, _p(values, 0.95) * ms
        print(f"| {name} | {p50:.1f} | {p95:.1f} | x{p50 / model_p50:.2f} |")
    host_part = statistics.median(through) - statistics.median(alone)
    print(
        f"host + Telegram part (up p50 - agent.run p50): {host_part * ms:.1f} ms; "
        f"agent bookkeeping (agent.run p50 - model p50 alone): "
        f"{(statistics.median(alone) - statistics.median(model_alone)) * ms:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--model-ms", type=float, default=200.0)
    parser.add_argument("--embedder", choices=["none", "default"], default="none")
    args = parser.parse_args()
    anyio.run(_measure, args.messages, args.model_ms, args.embedder)


if __name__ == "__main__":
    main()
