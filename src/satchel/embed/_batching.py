"""Grouping texts into model runs so little time goes on padding.

Every text in a run is padded to the run's longest, and a run costs about as much as
its padded size. Texts are taken shortest first; a run is closed when it is full, or
when adding the next (longest so far) text would make the run mostly padding. A lone
long text among short ones thus gets a run of its own instead of padding every short
text up to its length.

:class:`RunPool` then spreads the runs of one call over a few threads. A run of one
short text is made of small matrix products, which a second onnxruntime thread barely
speeds up (it costs a wake-up per operator); two single-threaded runs side by side use
both cores fully. Measured in ``bench/README.md`` ("Embeddings").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Final

__all__ = ["RunPool", "plan_batches"]

_MIN_TOLERATED_PADDING: Final = 32
"""Padding tokens a run may always carry: cheaper than the fixed cost of another run."""
_TOLERATED_PADDING_SHARE: Final = 0.2
"""Beyond that, the share of a run's padded size that may be padding."""


def plan_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Group texts, by index, into runs of similar length.

    Args:
        lengths: The number of tokens of each text.
        batch_size: The most texts in one run.

    Returns:
        Runs of indices into ``lengths``, each sorted by length (shortest first), together
        covering every index once.

    Example:
        >>> plan_batches([3, 160, 2, 8], batch_size=16)
        [[2, 0, 3], [1]]
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for index in order:
        length = lengths[index]
        padded = (len(current) + 1) * length  # this text is the run's longest so far
        padding = padded - (real + length)
        too_much_padding = padding > max(_MIN_TOLERATED_PADDING, _TOLERATED_PADDING_SHARE * padded)
        if current and (len(current) >= batch_size or too_much_padding):
            batches.append(current)
            current, real = [], 0
        current.append(index)
        real += length
    if current:
        batches.append(current)
    return batches


class RunPool:
    """Runs the model runs of one call on up to ``width`` threads at once: the calling
    thread takes a share, and ``width - 1`` worker threads (started on first need,
    shared by every call) take the rest. Thread-safe.

    Args:
        width: How many runs may go at once (1: all on the calling thread).
    """

    def __init__(self, width: int) -> None:
        self.width = max(1, width)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def run(self, batches: Sequence[list[int]], work: Callable[[list[int]], None]) -> None:
        """Call ``work`` once per batch and return when every call has, raising the first
        error after all of them have ended. Batches are dealt out in turn, so each thread
        gets a like share of short and long ones."""
        shares = min(self.width, len(batches))
        if shares <= 1:
            for batch in batches:
                work(batch)
            return
        executor = self._workers()
        dealt = [list(batches[i::shares]) for i in range(shares)]
        futures: list[Future[None]] = [executor.submit(_each, work, share) for share in dealt[1:]]
        try:
            _each(work, dealt[0])
        finally:
            wait(futures)
        for future in futures:
            future.result()

    def _workers(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.width - 1, thread_name_prefix="satchel-embed"
                )
            return self._executor


def _each(work: Callable[[list[int]], None], batches: list[list[int]]) -> None:
    for batch in batches:
        work(batch)
