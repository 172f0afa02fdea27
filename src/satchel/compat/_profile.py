"""The compatibility profiles: which seed's result shapes a served catalog answers in."""

from __future__ import annotations

from typing import Final, Literal, get_args

from satchel._errors import SatchelUsageError

__all__ = ["COMPAT_PROFILES", "CompatProfile", "check_profile"]

CompatProfile = Literal["agenticpal", "pattern"]
"""A seed whose result shapes a profile reproduces: ``agenticpal`` (seed 004: the
``{success, ...}`` envelope, ``pending_confirmation`` with ``tool_name`` and
``parameters``, its ``discover_tools`` rows and ``get_tool_schema`` fields) or
``pattern`` (seeds 000 and 002: ``send_message`` answers ``{success, message}``)."""

COMPAT_PROFILES: Final[tuple[CompatProfile, ...]] = get_args(CompatProfile)
"""Every profile's name."""


def check_profile(name: str | None) -> CompatProfile | None:
    """``name`` as a :data:`CompatProfile` (``None`` stays ``None``: satchel's own
    shapes).

    Raises:
        SatchelUsageError: ``name`` is no profile.
    """
    if name is None:
        return None
    if name not in COMPAT_PROFILES:
        raise SatchelUsageError(
            f"There is no compatibility profile {name!r}; choose one of "
            f"{', '.join(COMPAT_PROFILES)}.",
            details={"profile": name},
        )
    return name
