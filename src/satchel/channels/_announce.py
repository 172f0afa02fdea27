"""Consent where the human is: an approval request that came from a channel is
announced on that channel, saying which agent asks, what it wants to change, the
request's id and how to answer.

The announcement is a notice, not a vote: the answer still comes from whoever can run
``satchel approvals`` on the database, and a request nobody answers expires as a
refusal, as everywhere else. Requests from Discord and webhooks are announced; a
Bluesky origin is not, since every Bluesky post is public.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Final

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from satchel._errors import SatchelError
from satchel.channels._discord import DiscordEndpoint
from satchel.channels._messaging import (
    DiscordTarget,
    MessageRouter,
    OutgoingMessage,
    Receipt,
    WebhookTarget,
)
from satchel.consent import ApprovalRequest, PermissionBroker

__all__ = ["ConsentAnnouncer"]

logger = logging.getLogger("satchel.channels")

_ANNOUNCED: Final = ("discord", "webhook")
_REASON_CHARS: Final = 600
_QUEUE: Final = 100
_DRAIN_SECONDS: Final = 5.0


class ConsentAnnouncer:
    """Announces new approval requests on the channel they came from
    (:attr:`ApprovalRequest.origin <satchel.consent.ApprovalRequest.origin>`, such as
    ``discord:1234``), through the router's endpoint for that channel.

    Args:
        router: Holds the endpoints (only channels it has an endpoint for, and a
            Discord channel on its allow-list, are announced to).
        approve_command: How a human approves, with ``{id}`` for the request id.
        deny_command: How a human denies, with ``{id}``.

    Example:
        >>> announcer = ConsentAnnouncer(router, approve_command="satchel approvals "
        ...                              "approve {id} --db memory.db")
        >>> async with announcer.announcing(broker):
        ...     ...  # every request the broker files from discord:... is announced there
    """

    def __init__(
        self,
        router: MessageRouter,
        *,
        approve_command: str = "satchel approvals approve {id}",
        deny_command: str = "satchel approvals deny {id}",
    ) -> None:
        self.router = router
        self.approve_command = approve_command
        self.deny_command = deny_command

    def target_for(self, origin: str) -> DiscordTarget | WebhookTarget | None:
        """Where to announce a request from ``origin``; ``None`` when that is not a
        configured channel that announcements go to."""
        kind, _, address = origin.partition(":")
        if kind not in _ANNOUNCED or not address or kind not in self.router.endpoints:
            return None
        if kind == "discord":
            endpoint = self.router.endpoints[kind]
            channels = endpoint.channels if isinstance(endpoint, DiscordEndpoint) else None
            if channels is not None and address not in channels.values():
                return None
            return DiscordTarget(type="discord", channel_id=address[:32])
        return WebhookTarget(type="webhook", url=address[:2000])

    def message(self, request: ApprovalRequest) -> str:
        """The announcement's text."""
        reason = request.reason
        if len(reason) > _REASON_CHARS:
            reason = reason[: _REASON_CHARS - 1] + "…"
        expires = request.expires_at.strftime("%Y-%m-%d %H:%M UTC")
        return (
            f"Approval needed: agent {request.agent!r} wants to {request.scope.describe()}.\n"
            f"What: {reason}\n"
            f"Request: {request.id} (expires {expires}; no answer means no)\n"
            f"Approve: {self.approve_command.format(id=request.id)}\n"
            f"Deny: {self.deny_command.format(id=request.id)}"
        )

    async def announce(
        self, request: ApprovalRequest, broker: PermissionBroker | None = None
    ) -> Receipt | None:
        """Announce ``request`` on its origin's channel; ``None`` when its origin is not
        one, or (given its ``broker``) when it is no longer pending: a human answered
        already (by elicitation), or it expired. A failed delivery is logged, never
        raised: the request stands either way.
        """
        target = self.target_for(request.origin)
        if target is None:
            return None
        if broker is not None:
            current = await broker.get(request.id)
            if current is None or current.status != "pending":
                return None
            request = current
        endpoint = self.router.endpoints[target.type]
        message = OutgoingMessage(
            sender=request.agent,
            target=target,
            content=self.message(request),
            metadata={"approval_id": request.id},
            origin=request.origin,
        )
        try:
            receipt = await endpoint.deliver(message)
        except SatchelError as exc:
            logger.warning(
                "could not announce approval request %s on %s: %s",
                request.id,
                target.type,
                exc.message,
            )
            return None
        logger.info("announced approval request %s on %s", request.id, receipt.to)
        return receipt

    @asynccontextmanager
    async def announcing(self, broker: PermissionBroker) -> AsyncGenerator[None]:
        """While inside, announce every new request ``broker`` files that is still
        pending when its turn comes (one a human already answered, by elicitation, is
        not). On exit, announcements under way get a few seconds to finish."""
        send, receive = anyio.create_memory_object_stream[ApprovalRequest](_QUEUE)
        async with anyio.create_task_group() as group:
            group.start_soon(self._drain, receive, broker)

            def offer(request: ApprovalRequest) -> None:
                if self.target_for(request.origin) is None:
                    return
                try:
                    send.send_nowait(request)
                except anyio.WouldBlock:
                    logger.warning("too many approval requests to announce; %s is not", request.id)
                except anyio.ClosedResourceError:
                    pass

            unsubscribe = broker.subscribe(offer)
            try:
                yield
            finally:
                unsubscribe()
                await _close(send)
                group.cancel_scope.deadline = anyio.current_time() + _DRAIN_SECONDS

    async def _drain(
        self, receive: ObjectReceiveStream[ApprovalRequest], broker: PermissionBroker
    ) -> None:
        async with receive:
            async for request in receive:
                await self.announce(request, broker)


async def _close(send: ObjectSendStream[ApprovalRequest]) -> None:
    await send.aclose()
