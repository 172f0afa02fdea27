"""Compatibility with the tool systems satchel's design came from: Pattern (seeds 000
and 002) and AgenticPal (seed 004).

Their argument forms are accepted by the tools themselves, always, and never shown in
a schema (docs/compat.md lists each with its seed). Their result shapes are a
*profile*, chosen per catalog: :func:`with_compat` shows a registry's tools answering
in a profile's shapes, ``MetaTools(..., compat=...)`` shapes the meta-tools' answers,
and ``satchel serve --compat agenticpal|pattern`` does both. Without a profile,
satchel's own shapes are unchanged.

Example:
    >>> served = with_compat(registry, "agenticpal")
    >>> (await served.call("add", {"a": 1, "b": 2}, ctx)).output
    {'success': True, 'message': 'add succeeded.', 'data': 3}
"""

from satchel.compat._agenticpal import agenticpal_error, agenticpal_result
from satchel.compat._aliases import SEED_ALIASES, SeedAlias
from satchel.compat._pattern import pattern_result
from satchel.compat._profile import COMPAT_PROFILES, CompatProfile, check_profile
from satchel.compat._view import META_TOOL_NAMES, compat_spec, with_compat

__all__ = [
    "COMPAT_PROFILES",
    "META_TOOL_NAMES",
    "SEED_ALIASES",
    "CompatProfile",
    "SeedAlias",
    "agenticpal_error",
    "agenticpal_result",
    "check_profile",
    "compat_spec",
    "pattern_result",
    "with_compat",
]
