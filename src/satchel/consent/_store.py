"""Where approval requests live: the :class:`ApprovalStore` protocol and the in-memory
store.

A store keeps records and offers one atomic primitive, :meth:`ApprovalStore.swap`
(compare-and-set on the status), which is all the broker needs to make decisions,
expiry and one-time use race-free across tasks, threads and processes.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from satchel._errors import InvalidInputError
from satchel.consent._models import ApprovalRequest, ApprovalStatus

__all__ = ["ApprovalStore", "InMemoryApprovalStore"]

_Requests = list[ApprovalRequest]


@runtime_checkable
class ApprovalStore(Protocol):
    """Storage of :class:`ApprovalRequest` records, shared by every broker that uses it.

    A store shared by several processes (a database) lets a request made in one be
    listed and decided in another.
    """

    async def insert(self, request: ApprovalRequest) -> None:
        """Store a new request (its id is new)."""
        ...

    async def get(self, request_id: str) -> ApprovalRequest | None:
        """The request with this id, or ``None``."""
        ...

    async def list(self, status: ApprovalStatus | None = None) -> _Requests:
        """Requests with this status (all when ``None``), oldest first."""
        ...

    async def by_scope(self, scope_key: str, status: ApprovalStatus) -> _Requests:
        """Requests whose scope has this :attr:`~ConsentScope.key` and this status,
        oldest first."""
        ...

    async def swap(self, request: ApprovalRequest, *, expect: ApprovalStatus) -> bool:
        """Replace the stored record with ``request`` (same id) if the stored status is
        still ``expect``; return whether it was replaced. Atomic."""
        ...

    async def close(self) -> None:
        """Release the store's resources (idempotent)."""
        ...


class InMemoryApprovalStore:
    """An :class:`ApprovalStore` in a dict: for tests, and for one process that needs
    no persistence."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, ApprovalRequest] = {}

    async def insert(self, request: ApprovalRequest) -> None:
        """Store a new request."""
        with self._lock:
            if request.id in self._records:
                raise InvalidInputError(f"approval id {request.id!r} exists already")
            self._records[request.id] = request

    async def get(self, request_id: str) -> ApprovalRequest | None:
        """The request with this id, or ``None``."""
        return self._records.get(request_id)

    async def list(self, status: ApprovalStatus | None = None) -> _Requests:
        """Requests with this status (all when ``None``), oldest first."""
        with self._lock:
            found = [r for r in self._records.values() if status is None or r.status == status]
        return sorted(found, key=lambda r: r.created_at)

    async def by_scope(self, scope_key: str, status: ApprovalStatus) -> _Requests:
        """Requests with this scope key and status, oldest first."""
        with self._lock:
            found = [
                r for r in self._records.values() if r.status == status and r.scope.key == scope_key
            ]
        return sorted(found, key=lambda r: r.created_at)

    async def swap(self, request: ApprovalRequest, *, expect: ApprovalStatus) -> bool:
        """Replace the record if its status is still ``expect``."""
        with self._lock:
            current = self._records.get(request.id)
            if current is None or current.status != expect:
                return False
            self._records[request.id] = request
            return True

    async def close(self) -> None:
        """Nothing to release."""
