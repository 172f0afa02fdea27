"""Exports validate against Letta's own published models (``letta-client``, a dev
dependency): blocks, tools, tool rules, model and embedding settings; and every
satchel rule maps to a Letta rule and back (issue 31 item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from letta_client.types import (
    BlockResponse,
    ChildToolRule,
    ConditionalToolRule,
    ContinueToolRule,
    EmbeddingConfig,
    InitToolRule,
    LlmConfig,
    MaxCountPerStepToolRule,
    ParentToolRule,
    RequiredBeforeExitToolRule,
    RequiresApprovalToolRule,
    TerminalToolRule,
    Tool,
)

from memory.conftest import StoreFactory
from satchel._errors import InvalidInputError
from satchel.agentfile import LettaToolRule, export_agent_file, import_agent_file, letta_rule
from satchel.agentfile import satchel_rule as to_satchel
from satchel.rules import (
    AllowedChildren,
    Conditional,
    Continue,
    Init,
    MaxCalls,
    RequiredBeforeExit,
    Terminal,
    ToolRule,
)

from .conftest import SHARED_FILES

pytestmark = pytest.mark.anyio

_RULE_MODELS: dict[str, Any] = {
    "constrain_child_tools": ChildToolRule,
    "run_first": InitToolRule,
    "exit_loop": TerminalToolRule,
    "conditional": ConditionalToolRule,
    "continue_loop": ContinueToolRule,
    "required_before_exit": RequiredBeforeExitToolRule,
    "max_count_per_step": MaxCountPerStepToolRule,
    "parent_last_tool": ParentToolRule,
    "requires_approval": RequiresApprovalToolRule,
}


def letta_validated(rule: dict[str, Any]) -> Any:
    """``rule`` checked by the letta-client model of its type."""
    return _RULE_MODELS[rule["type"]].model_validate(rule)


@pytest.mark.skipif(not SHARED_FILES, reason="the shared data folder is absent")
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: p.stem)
async def test_exports_validate_against_letta_models(
    make_store: StoreFactory, path: Path, tmp_path: Path
) -> None:
    store = await make_store()
    report = await import_agent_file(store, path, name="x")
    out = tmp_path / "x.af"
    await export_agent_file(store, report.agents[0], out)
    document: dict[str, Any] = json.loads(out.read_text())
    assert set(document) >= {"agents", "groups", "blocks", "files", "sources", "tools"}
    for block in document["blocks"]:
        checked = BlockResponse.model_validate(block)
        assert checked.label == block["label"]
    for tool in document["tools"]:
        assert Tool.model_validate(tool).name == tool["name"]
    for agent in document["agents"]:
        for rule in agent["tool_rules"]:
            assert letta_validated(rule).tool_name == rule["tool_name"]
        if agent.get("llm_config"):
            LlmConfig.model_validate(agent["llm_config"])
        if agent.get("embedding_config"):
            EmbeddingConfig.model_validate(agent["embedding_config"])
        listed = set(agent["block_ids"])
        assert listed <= {b["id"] for b in document["blocks"]}
        assert set(agent["tool_ids"]) <= {t["id"] for t in document["tools"]}


RULES: list[ToolRule] = [
    Terminal("send_message"),
    Continue("search"),
    Init("load", {"label": "notes"}),
    RequiredBeforeExit("save"),
    AllowedChildren("plan", ["act", "ask"]),
    MaxCalls(3, "search"),
    Conditional("check", {"yes": "go", "no": "stop"}, default="stop"),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: type(r).__name__)
def test_each_satchel_rule_maps_to_a_letta_rule_and_back(rule: ToolRule) -> None:
    letta = letta_rule(rule)
    letta_validated(letta)
    assert to_satchel(LettaToolRule.model_validate(letta, strict=False)) == rule


def test_letta_rules_without_a_satchel_rule_are_kept_not_run() -> None:
    for kind in ("parent_last_tool", "requires_approval"):
        rule = LettaToolRule(tool_name="x", type=kind, children=["y"])
        assert to_satchel(rule) is None


def test_a_limit_on_all_tools_has_no_letta_rule() -> None:
    with pytest.raises(InvalidInputError, match="all tools"):
        letta_rule(MaxCalls(5))
