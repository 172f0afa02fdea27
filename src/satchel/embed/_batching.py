"""Grouping texts into model runs so little time goes on padding.

Every text in a run is padded to the run's longest, and a run costs about as much as
its padded size. Texts are taken shortest first; a run is closed when it is full, or
when adding the next (longest so far) text would make the run mostly padding. A lone
long text among short ones thus gets a run of its own instead of padding every short
text up to its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["plan_batches"]

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
