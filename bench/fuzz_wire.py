"""What ``fuzz_soak.py``'s paths share: the tally of findings, a finding's safe
printout, JSON text of values nested thousands deep, and a ``satchel serve`` process
spoken to in raw JSON-RPC lines."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["SATCHEL", "Server", "Shown", "Tally", "encode"]

ANSWER_TIMEOUT = 60.0
SATCHEL = str(Path(sys.executable).parent / "satchel")


@dataclass
class Tally:
    """What one path did with one tool's cases."""

    counts: Counter[str] = field(default_factory=Counter[str])
    first: dict[str, str] = field(default_factory=dict[str, str])

    def note(self, what: str, example: object, reason: str = "") -> None:
        """Count one ``what``; keep the first example of each."""
        self.counts[what] += 1
        if what not in self.first:
            self.first[what] = f"{str(example)[:200]} -> {reason[:400]}"


@dataclass(frozen=True)
class Shown:
    """A case, printed only when it is a finding (and safely: some are nested too
    deeply for ``repr``)."""

    tool: str
    args: Any

    def __str__(self) -> str:
        try:
            return f"{self.tool} {self.args!r}"[:300]
        except RecursionError:
            return f"{self.tool} <arguments nested too deeply to print>"


@dataclass(frozen=True)
class _Raw:
    text: str


def encode(value: Any) -> str:
    """Compact ASCII JSON text of ``value``, without recursion: ``json.dumps`` cannot
    write the values nested thousands deep that the strategies make. NaN and the
    infinities are written as Python writes them (``NaN``), which is not JSON."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item.text)
        elif isinstance(item, dict):
            pairs = list(item.items())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            stack.append(_Raw("}"))
            for index in range(len(pairs) - 1, -1, -1):
                key, inner = pairs[index]  # pyright: ignore[reportUnknownVariableType]
                stack.append(inner)
                prefix = "," if index else ""
                stack.append(_Raw(prefix + json.dumps(str(key)) + ":"))  # pyright: ignore[reportUnknownArgumentType]
            stack.append(_Raw("{"))
        elif isinstance(item, list):
            items = list(item)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            stack.append(_Raw("]"))
            for index in range(len(items) - 1, -1, -1):
                stack.append(items[index])
                if index:
                    stack.append(_Raw(","))
            stack.append(_Raw("["))
        else:
            out.append(json.dumps(item))
    return "".join(out)


class Server:
    """A ``satchel serve`` child process spoken to in raw JSON-RPC lines.

    Args:
        args: The arguments after ``satchel``.
        env: Its environment (default: this process's, logging errors only).
        log: Where its stderr goes (default: nowhere).
    """

    def __init__(
        self, args: list[str], env: dict[str, str] | None = None, log: TextIO | None = None
    ) -> None:
        env = env if env is not None else {**os.environ, "SATCHEL_LOG_LEVEL": "error"}
        self.proc = subprocess.Popen(
            [SATCHEL, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log if log is not None else subprocess.DEVNULL,
            env=env,
        )
        self._next = 0
        self._buffer = b""
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "fuzz-soak", "version": "1"},
            },
            timeout=180.0,
        )
        if init is None or "result" not in init:
            raise SystemExit(f"satchel serve did not initialize: {init!r}")
        self._write(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())

    def _write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def _line(self, timeout: float) -> bytes | None:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def request(
        self, method: str, params: dict[str, Any], timeout: float = ANSWER_TIMEOUT
    ) -> dict[str, Any] | None:
        """Send one request; its answer (skipping notifications), or ``None``."""
        self._next += 1
        frame = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        return self.exchange(encode(frame).encode(), self._next, timeout)

    def exchange(
        self, line: bytes, ident: int, timeout: float = ANSWER_TIMEOUT
    ) -> dict[str, Any] | None:
        """Write one line (any bytes); the answer with ``ident``, or an error answer
        with id null (a frame the server could not read), or ``None`` (no answer)."""
        try:
            self._write(line)
        except (BrokenPipeError, OSError):
            return None
        while True:
            answer_line = self._line(timeout)
            if answer_line is None:
                return None
            answer = json.loads(answer_line)
            if not isinstance(answer, dict):
                continue
            if answer.get("id") == ident or (  # pyright: ignore[reportUnknownMemberType]
                answer.get("id") is None and "error" in answer  # pyright: ignore[reportUnknownMemberType]
            ):
                return answer  # pyright: ignore[reportUnknownVariableType]

    def close(self) -> int:
        """Close its stdin and wait for it; its exit code."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
