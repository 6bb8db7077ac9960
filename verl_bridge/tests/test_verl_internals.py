"""veRL's private names the bridge relies on are reached through one module (vistool_verl/
verl_internals.py) that checks them at start-up (M6 of issue 41). The installed veRL 0.9.1 has every
one; a veRL without one stops the import with the name, what uses it, the installed version and the fix."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from vistool_verl import verl_internals
from vistool_verl.verl_internals import Internal, VerlInternalsError

BRIDGE = Path(verl_internals.__file__).parent


def test_the_installed_veRL_has_every_name_the_bridge_uses():
    assert verl_internals.problems() == []
    verl_internals.check()
    assert isinstance(verl_internals.agent_loop_registry(), dict) and isinstance(verl_internals.rollout_registry(), dict)


def test_a_missing_name_stops_the_start_with_what_uses_it_and_the_fix():
    renamed = (Internal("verl.experimental.agent_loop.agent_loop", "ct_merge_assistant_tokens_v2", "method:AgentLoopBase", "agent_loop (a turn)"),
               Internal("verl.workers.rollout.base", "_NO_SUCH_TABLE", "dict", "cpu_stand_in", "cpu_stand_in"),
               Internal("verl.no_such_module", "x", "callable", "nothing"))
    with pytest.raises(VerlInternalsError) as caught:
        verl_internals.check(None, renamed)
    message = str(caught.value)
    assert "needs veRL 0.9.1, and the installed veRL (0.9.1) lacks" in message
    assert "AgentLoopBase.ct_merge_assistant_tokens_v2 is gone (used by agent_loop (a turn))" in message
    assert "verl.workers.rollout.base._NO_SUCH_TABLE is gone" in message and "verl.no_such_module does not import" in message
    assert "make verl-env" in message
    # A group checks only its own names.
    assert verl_internals.problems("agent_loop", renamed) == [
        "verl.experimental.agent_loop.agent_loop.AgentLoopBase.ct_merge_assistant_tokens_v2 is gone (used by agent_loop (a turn))",
        "verl.no_such_module does not import (No module named 'verl.no_such_module') (used by nothing)"]


def test_no_other_bridge_module_names_a_private_veRL_attribute():
    """Private veRL names (a leading underscore, reached on a veRL module) appear only in verl_internals.py."""
    offenders = []
    for path in BRIDGE.rglob("*.py"):
        if path.name == "verl_internals.py":
            continue
        tree = ast.parse(path.read_text())
        verl_modules = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                        for alias in node.names if (getattr(node, "module", None) or alias.name).startswith("verl")}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and isinstance(node.value, ast.Name) and node.value.id in verl_modules:
                offenders.append(f"{path.relative_to(BRIDGE)}:{node.lineno} {node.value.id}.{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("verl"):
                offenders += [f"{path.relative_to(BRIDGE)}:{node.lineno} from {node.module} import {a.name}" for a in node.names
                              if a.name.startswith("_")]
    assert offenders == []
