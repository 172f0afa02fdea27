""":class:`AnsweredConsent`: a memory store's consent handler that asks a human only
where someone answers on the channel a write came from.

``satchel run`` and ``satchel up`` open the same agent (``opened_agent``). Without a
handler, a write to a ``human`` or ``partner`` block fails at once with
:class:`~satchel.ConsentRequiredError`; that stays so for every write whose origin no
answerer reaches. A write from a chat that :class:`~satchel.channels.ChannelConsent`
answers (``telegram:123456789``) instead waits for the person's answer there, through
the broker (:meth:`PermissionBroker.answer_wait`).
"""

from __future__ import annotations

from satchel._errors import ConsentRequiredError
from satchel.consent._broker import PermissionBroker
from satchel.memory import ConsentHandler, ConsentRequest

__all__ = ["AnsweredConsent"]


class AnsweredConsent:
    """Asks ``broker`` about a memory write when an answerer reaches the write's
    origin (the broker's :meth:`~PermissionBroker.answer_wait`); otherwise defers to
    ``fallback``, or, without one, fails as a store without a handler does.

    Args:
        broker: The broker the answerers are registered with.
        fallback: The handler for every other write (``satchel chat``'s inline
            question); ``None`` raises :class:`~satchel.ConsentRequiredError`.

    Example:
        >>> store = SQLiteStore(db, consent=AnsweredConsent(broker))
        >>> async with ChannelConsent(broker, [telegram]).running():
        ...     ...  # writes from telegram:... wait for the person's answer there
    """

    def __init__(self, broker: PermissionBroker, fallback: ConsentHandler | None = None) -> None:
        self.broker = broker
        self.fallback = fallback

    async def __call__(self, request: ConsentRequest, /) -> bool:
        """Decide whether the memory write ``request`` describes may happen.

        Raises:
            ConsentRequiredError: No answerer reaches the write's origin and there is no
                fallback.
        """
        if self.broker.answer_wait(request.origin) is not None:
            return await self.broker(request)
        if self.fallback is not None:
            return await self.fallback(request)
        raise ConsentRequiredError(
            f"{request.operation.value} on block {request.label!r} needs a human's consent "
            f"at permission {request.permission.value!r}",
            details={
                "label": request.label,
                "owner": request.owner,
                "operation": request.operation.value,
                "permission": request.permission.value,
            },
        )
