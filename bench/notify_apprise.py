"""apprise against satchel's own senders (issue 30 item 2): should outbound
notifications go through apprise?

Measures, in one run on this machine:

1. **Import time**, each in a fresh process (median of ``--imports`` runs): ``import
   apprise`` alone, ``import satchel.channels`` alone, and apprise's marginal cost in a
   process that has already imported ``satchel.channels``.
2. **Dependency weight**: the installed distributions apprise needs that satchel's own
   runtime dependencies do not already bring, with their size on disk.
3. **Send latency** to one loopback fake JSON webhook (a threaded ``http.server``):
   satchel's ``WebhookEndpoint`` as ``channel_router`` builds it (an ``httpx`` client per
   delivery) and with a shared client, against apprise's ``json://`` URL through
   ``async_notify`` (its asyncio path) and ``notify``; interleaved rounds, median and p90
   per send, each as a ratio to satchel's endpoint.
4. **Behaviour** on the same fake server: one ``503`` before success, and a ``429`` with
   ``Retry-After: 1`` before success (with each side's defaults, and apprise with
   ``?retry=2``), and whether a URL outside the allowed ones is refused.

Run: ``uv run python bench/notify_apprise.py [--sends 200]`` (apprise is in the dev group,
and the ``apprise`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
from packaging.requirements import Requirement

from satchel.channels import OutgoingMessage, WebhookEndpoint, WebhookTarget
from satchel.channels._delivery import Delivery


class _Hook:
    """The fake webhook: counts posts, answers ``200 {"id": n}`` unless told to fail the
    next ones with a status (and ``Retry-After``)."""

    def __init__(self) -> None:
        self.posts = 0
        self.fail: list[tuple[int, str | None]] = []
        self.lock = threading.Lock()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                self.rfile.read(length)
                with hook.lock:
                    hook.posts += 1
                    failing = hook.fail.pop(0) if hook.fail else None
                    number = hook.posts
                status, retry_after = failing if failing else (200, None)
                body = json.dumps({"id": str(number)}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                if retry_after is not None:
                    self.send_header("retry-after", retry_after)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook/satchel"


def _import_seconds(code: str, runs: int) -> float:
    script = (
        "import time, sys\n"
        f"{code.split('|')[0]}\n"
        "t = time.perf_counter()\n"
        f"{code.split('|')[1]}\n"
        "print(time.perf_counter() - t)\n"
    )
    times = [
        float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True).stdout)
        for _ in range(runs)
    ]  # fmt: skip
    return statistics.median(times)


def _closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` need, transitively (markers evaluated, no
    extras)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for raw in dist.requires or ():
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def _size(name: str) -> int:
    dist = metadata.distribution(name)
    total = 0
    for file in dist.files or ():
        path = Path(str(dist.locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
    return total


def _dependency_weight() -> tuple[list[str], int]:
    satchel = _closure([Requirement(r).name for r in metadata.requires("satchel") or ()
                        if "extra ==" not in r])  # fmt: skip
    added = sorted(_closure(["apprise"]) - satchel)
    return added, sum(_size(name) for name in added)


async def _timed(send: Callable[[], Awaitable[Any]], hook: _Hook) -> float:
    before = hook.posts
    start = time.perf_counter()
    await send()
    elapsed = time.perf_counter() - start
    assert hook.posts == before + 1, "a send did not arrive exactly once"
    return elapsed


def _summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


async def _latency(hook: _Hook, sends: int) -> dict[str, list[float]]:
    import apprise

    target = WebhookTarget(type="webhook", url=hook.url)
    message = OutgoingMessage(sender="ada", target=target, content="Reminder: water the plants")
    per_delivery = WebhookEndpoint(allowed_urls=[hook.url])
    shared_client = httpx.AsyncClient(timeout=10)
    shared = WebhookEndpoint(allowed_urls=[hook.url], client=shared_client)
    notifier = apprise.Apprise()
    assert notifier.add(f"json://127.0.0.1:{hook.port}/hook/satchel")

    async def apprise_async() -> None:
        assert await notifier.async_notify(body="Reminder: water the plants", title="satchel")

    async def apprise_sync() -> None:
        assert notifier.notify(body="Reminder: water the plants", title="satchel")

    ways: dict[str, Callable[[], Awaitable[Any]]] = {
        "satchel WebhookEndpoint (client per delivery)": lambda: per_delivery.deliver(message),
        "satchel WebhookEndpoint (shared client)": lambda: shared.deliver(message),
        "apprise json:// async_notify": apprise_async,
        "apprise json:// notify (blocking)": apprise_sync,
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for send in ways.values():  # warm-up
        for _ in range(5):
            await _timed(send, hook)
    for _ in range(sends):
        for name, send in ways.items():
            times[name].append(await _timed(send, hook))
    await shared_client.aclose()
    return times


async def _behaviour(hook: _Hook) -> list[tuple[str, str, str]]:
    import apprise

    rows: list[tuple[str, str, str]] = []
    target = WebhookTarget(type="webhook", url=hook.url)
    message = OutgoingMessage(sender="ada", target=target, content="x")
    satchel = WebhookEndpoint(allowed_urls=[hook.url], delivery=Delivery(backoff=0.1))

    async def satchel_send() -> str:
        start = time.perf_counter()
        try:
            receipt = await satchel.deliver(message)
        except Exception as exc:  # a bench reports whatever it raised
            return f"failed ({type(exc).__name__})"
        took = time.perf_counter() - start
        return f"delivered, {receipt.attempts} attempts in {took:.2f} s"

    def apprise_send(query: str = "") -> str:
        notifier = apprise.Apprise()
        notifier.add(f"json://127.0.0.1:{hook.port}/hook/satchel{query}")
        before = hook.posts
        start = time.perf_counter()
        ok = notifier.notify(body="x")
        took = time.perf_counter() - start
        outcome = "delivered" if ok else "failed"
        return f"{outcome}, {hook.posts - before} attempts in {took:.2f} s"

    for case, fail in (
        ("one 503, then 200", [(503, None)]),
        ("one 429 Retry-After: 1, then 200", [(429, "1")]),
    ):
        hook.fail = list(fail)
        rows.append((case, "satchel (defaults)", await satchel_send()))
        hook.fail = list(fail)
        rows.append((case, "apprise (defaults)", apprise_send()))
        hook.fail = list(fail)
        rows.append((case, "apprise ?retry=2", apprise_send("?retry=2")))
        hook.fail = []
    outside = WebhookTarget(type="webhook", url=f"http://127.0.0.1:{hook.port}/elsewhere")
    try:
        await satchel.deliver(OutgoingMessage(sender="ada", target=outside, content="x"))
        refused = "sent"
    except Exception as exc:  # a bench reports whatever it raised
        refused = f"refused ({type(exc).__name__})"
    rows.append(("a URL outside the allowed ones", "satchel", refused))
    before = hook.posts
    notifier = apprise.Apprise()
    notifier.add(f"json://127.0.0.1:{hook.port}/elsewhere")
    notifier.notify(body="x")
    rows.append(("a URL outside the allowed ones", "apprise", "sent" if hook.posts > before
                 else "not sent"))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sends", type=int, default=200)
    parser.add_argument("--imports", type=int, default=5)
    options = parser.parse_args()
    import apprise

    print(f"apprise {apprise.__version__}, python {sys.version.split()[0]}")
    print("\n## import time (median of fresh processes)")
    alone = _import_seconds("|import apprise", options.imports)
    ours = _import_seconds("|import satchel.channels", options.imports)
    marginal = _import_seconds("import satchel.channels|import apprise", options.imports)
    print(f"import apprise               {alone * 1000:7.0f} ms")
    print(f"import satchel.channels      {ours * 1000:7.0f} ms")
    print(f"apprise after satchel.channels {marginal * 1000:5.0f} ms (marginal)")
    added, size = _dependency_weight()
    print("\n## dependency weight")
    print(f"distributions apprise adds to satchel's runtime: {len(added)} ({', '.join(added)})")
    print(f"their size on disk: {size / 1e6:.1f} MB")
    hook = _Hook()
    times = asyncio.run(_latency(hook, options.sends))
    print(f"\n## send latency to a loopback JSON webhook ({options.sends} sends each, interleaved)")
    base, _ = _summary(times["satchel WebhookEndpoint (client per delivery)"])
    for name, values in times.items():
        median, p90 = _summary(values)
        print(f"{name:48} median {median * 1000:6.2f} ms  p90 {p90 * 1000:6.2f} ms  "
              f"x{median / base:.2f}")  # fmt: skip
    print("\n## behaviour")
    for case, who, outcome in asyncio.run(_behaviour(hook)):
        print(f"{case:34} {who:20} {outcome}")
    hook.server.shutdown()


if __name__ == "__main__":
    main()
