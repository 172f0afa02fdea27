"""Chains written in TOML, YAML or JSON, loaded into a registry and written back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from satchel import SatchelUsageError, chain, step
from satchel.compose import Fallback, load_chains

from .helpers import support_registry

pytestmark = pytest.mark.anyio

TRIAGE_TOML = """
[[chains]]
name = "triage"
description = "Fetch a ticket, classify it, and escalate it when it is urgent."
category = "support"

[[chains.steps]]
tool = "fetch_ticket"

[[chains.steps]]
tool = "classify"
map = { text = "body" }

[[chains.steps]]
tool = "escalate"
when = "label == 'urgent'"
on_error = "skip"
"""


async def test_a_toml_chain_loads_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "chains.toml"
    path.write_text(TRIAGE_TOML)
    registry = support_registry()
    [made] = load_chains(path, registry)
    result = await registry.call("triage", {"ticket_id": 1})
    assert made.spec.category == "support"
    assert result.output == {"escalated": "ticket 1 (urgent)"}


async def test_yaml_and_json_give_the_same_chain(tmp_path: Path) -> None:
    registry = support_registry()
    [from_toml] = load_chains(_write(tmp_path / "a.toml", TRIAGE_TOML), registry)
    data = {"chains": [from_toml.to_config()]}
    for suffix, text in ((".yaml", yaml.safe_dump(data)), (".json", json.dumps(data))):
        other = support_registry()
        [made] = load_chains(_write(tmp_path / f"b{suffix}", text), other)
        assert made.spec == from_toml.spec


def test_a_chain_round_trips_through_its_config_form() -> None:
    registry = support_registry()
    made = chain(
        "triage",
        "fetch_ticket",
        step("classify", map={"text": "body"}, on_error=Fallback("classify")),
        step("escalate", when="label == 'urgent'", limit=2),
        description="Triage.",
        registry=registry,
    )
    config = made.to_config()
    assert config["steps"][1] == {
        "tool": "classify",
        "map": {"text": "body"},
        "on_error": {"fallback": "classify"},
    }
    [again] = load_chains({"chains": [config]}, support_registry())
    assert again.spec == made.spec


def test_a_python_predicate_has_no_config_form() -> None:
    made = chain(
        "c",
        "fetch_ticket",
        step("classify", map={"text": "body"}, when=lambda d: True),
        description="Predicate.",
        registry=support_registry(),
    )
    with pytest.raises(SatchelUsageError, match="JMESPath"):
        made.to_config()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[[chains]]\nname = 'x'\n", "description"),
        ("[[chains]]\nname='x'\ndescription='d'\nsteps=['fetch_ticket']\ncolour='red'\n", "colour"),
        ("[[chains]\n", "TOML"),
        (
            "[[chains]]\nname='x'\ndescription='d'\n[[chains.steps]]\ntool='fetch_ticket'\n"
            "[[chains.steps]]\ntool='classify'\nmap={text='priority'}\n",
            "priority",
        ),
    ],
)
def test_a_bad_chains_file_is_a_clear_usage_error(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(SatchelUsageError, match=words):
        load_chains(_write(tmp_path / "bad.toml", text), support_registry())


def test_a_file_of_another_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SatchelUsageError, match=r"\.toml"):
        load_chains(_write(tmp_path / "chains.ini", "[x]"), support_registry())


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
