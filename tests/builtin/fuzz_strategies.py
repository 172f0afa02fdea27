"""Hypothesis strategies for arguments to the built-in memory tools, shared by the
fast fuzz test (``tests/builtin/test_fuzz.py``) and the soak run
(``bench/fuzz_soak.py``).

:func:`strategies` gives, per tool, mostly well-typed calls (which reach the store),
some with a wrong or unknown field, and some pure noise. With ``hostile=True`` the
text may hold lone surrogates, and values may be huge (strings of up to a megabyte,
lists of thousands of labels) or nested thousands of levels deep.

A webhook URL is written ``HOOK/...``: the caller replaces ``HOOK`` with its local
service's address (:func:`with_hook`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["LABELS", "TOOLS", "strategies", "with_hook"]

LABELS = ["persona", "rules", "notes", "old", "bob/secret", "secret", "bob/team", "team"]
TOOLS = ("context", "recall", "search", "send_message")
_SPECIAL = ["a/b", "x" * 300, "persona ", "\x00", "*", 'AND (" NEAR/2']


def _nested(depth: int) -> Any:
    value: Any = "deep"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def strategies(*, hostile: bool = False) -> dict[str, st.SearchStrategy[dict[str, Any]]]:
    """Per built-in tool, a strategy for its arguments (see the module docstring)."""
    chars = st.characters(
        codec=None if hostile else "utf-8",
        exclude_categories=() if hostile else ("Cs",),
    )
    special = list(_SPECIAL)
    if hostile:
        special += ["\ud800", "a\udfffb", "\u2028\u2029\x85", "y" * 100_000]
    weird_text = st.text(chars, max_size=30) | st.sampled_from(["", " ", *special])
    some_text = st.text(chars, min_size=1, max_size=30) | st.sampled_from([*special, "Ada"])
    if hostile:
        some_text = some_text | st.integers(1, 20).map(lambda n: "z" * (n * 50_000))
    labels = st.sampled_from(LABELS) | some_text
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=True, allow_infinity=True)
        | weird_text
    )
    if hostile:
        scalars = scalars | st.integers(-(2**80), 2**80) | st.integers(50, 5_000).map(_nested)
    json_values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(weird_text, inner, max_size=3),
        max_leaves=6,
    )
    noise = st.dictionaries(weird_text, json_values, max_size=4)
    label_lists = st.lists(labels, max_size=2)
    if hostile:
        label_lists = label_lists | st.integers(500, 3_000).map(
            lambda n: [f"label-{i}" for i in range(n)]
        )

    def op(name: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({"operation": st.just(name), **fields})

    def mixed(*shaped: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        good = st.one_of(*shaped)
        broken = st.tuples(good, weird_text, json_values).map(lambda t: {**t[0], t[1]: t[2]})
        return st.one_of(good, good, good, good, good, good, broken, noise)

    dates = (
        st.sampled_from(["yesterday", "2026-11-01", "2020", "soon-ish", "", "9999-12-31"])
        | weird_text
    )
    return {
        "context": mixed(
            op("append", label=labels, content=some_text),
            op(
                "replace",
                label=labels,
                old=weird_text | st.sampled_from(["Ada", "a", "."]),
                new=weird_text,
            ),
            op("set", label=labels, value=some_text),
            op("set", label=labels, value=some_text, description=weird_text),
            op("archive", label=labels),
            op("load", label=labels),
            op("swap", archive_label=labels, load_label=labels),
            op("list"),
        ),
        "recall": mixed(
            op("insert", content=some_text),
            op("insert", content=some_text, label=labels, tags=st.lists(weird_text, max_size=3)),
            op("append", label=labels, content=some_text),
            op("read", label=labels),
            op("delete", label=labels),
        ),
        "search": mixed(
            st.fixed_dictionaries(
                {
                    "domain": st.sampled_from(["archival_memory", "conversations", "all"]),
                    "query": some_text,
                },
                optional={
                    "limit": st.integers(1, 100) | st.integers(-5, 150),
                    "filters": st.fixed_dictionaries(
                        {},
                        optional={
                            "role": st.sampled_from(["user", "assistant", "tool"]),
                            "start_time": dates,
                            "end_time": dates,
                            "tags": st.lists(weird_text, max_size=2) | label_lists,
                            "labels": label_lists,
                        },
                    ),
                },
            )
        ),
        "send_message": mixed(
            st.fixed_dictionaries(
                {
                    "target": st.one_of(
                        st.just({"type": "user"}),
                        st.fixed_dictionaries({"type": st.just("agent"), "id": labels}),
                        st.fixed_dictionaries(
                            {"type": st.just("group"), "name": st.sampled_from(["team", "nope"])}
                        ),
                        st.fixed_dictionaries(
                            {
                                "type": st.just("discord"),
                                "channel_id": st.sampled_from(["1", "429", "404", "../x"])
                                | some_text,
                            }
                        ),
                        st.fixed_dictionaries(
                            {
                                "type": st.just("webhook"),
                                "url": st.sampled_from(["HOOK/ok", "HOOK/broken", "http://[::1"])
                                | some_text,
                            }
                        ),
                    ),
                    "content": some_text,
                },
                optional={"metadata": st.dictionaries(weird_text, json_values, max_size=3)},
            )
        ),
    }


def with_hook(args: dict[str, Any], hook: str) -> dict[str, Any]:
    """``args`` with a webhook target's ``HOOK`` replaced by ``hook`` (in place)."""
    target = args.get("target")
    if isinstance(target, dict) and isinstance(target.get("url"), str):
        target["url"] = target["url"].replace("HOOK", hook)  # pyright: ignore[reportUnknownMemberType]
    return args
