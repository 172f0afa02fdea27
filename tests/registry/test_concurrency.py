"""The registry under many threads: registering, replacing, unregistering and calling
at once must neither raise nor leave an inconsistent state."""

from __future__ import annotations

import threading
import time

from satchel import ToolRegistry, tool


def make_tool(name: str, value: int) -> object:
    def fn(x: int) -> int:
        """Return x plus a constant.

        Args:
            x: The input.
        """
        return x + value

    return tool(name=name)(fn)


def test_eight_threads_registering_replacing_and_calling_stay_consistent() -> None:
    registry = ToolRegistry([make_tool("stable", 0)])  # type: ignore[list-item]
    errors: list[BaseException] = []
    deadline = time.monotonic() + 2.0
    counts = [0] * 8

    def worker(idx: int) -> None:
        own = f"tool_{idx}"
        try:
            while time.monotonic() < deadline:
                registry.register(make_tool(own, idx), replace=True)  # type: ignore[arg-type]
                result = registry.call_sync("stable", {"x": idx})
                assert result.ok, result.error
                assert result.output == idx
                mine = registry.call_sync(own, {"x": 1})
                assert mine.ok or (mine.error is not None and mine.error.kind == "unknown_tool")
                if counts[idx] % 3 == 2:
                    registry.unregister(own)
                registry.schemas("openai")
                counts[idx] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors[:3]
    assert all(c > 0 for c in counts)
    # The final state agrees with what each thread did last.
    names = set(registry.names())
    for idx in range(8):
        assert (f"tool_{idx}" in names) == (counts[idx] % 3 != 0)
    assert "stable" in names
    assert len(registry.schemas("openai")) == len(registry)
