"""Fixtures for the consent tests: a controllable clock and brokers on real stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from satchel.consent import InMemoryApprovalStore, PermissionBroker, SQLiteApprovalStore


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["memory", "sqlite"])
async def broker(
    request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> AsyncIterator[PermissionBroker]:
    store = (
        InMemoryApprovalStore()
        if request.param == "memory"
        else SQLiteApprovalStore(tmp_path / "s.db")
    )
    async with PermissionBroker(store, clock=clock, poll_interval=0.05) as made:
        yield made
