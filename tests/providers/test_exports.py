from __future__ import annotations

import satchel.cli
import satchel.providers


def test_providers_all_is_sorted_and_complete() -> None:
    exported = satchel.providers.__all__
    public = {n for n in vars(satchel.providers) if not n.startswith("_")}

    assert exported == sorted(exported)
    assert set(exported) == public


def test_cli_all_is_sorted() -> None:
    assert satchel.cli.__all__ == sorted(satchel.cli.__all__)
