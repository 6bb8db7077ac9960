"""A checkpoint's config.json written before a run config key was removed still loads: the removed
key is dropped with a warning event naming it. Anything else wrong is still the schema's error."""
import io
import json

import pytest

from vistool_trainer.run.config_migration import REMOVED_KEYS, load_saved_config
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.run_config import ConfigError, load_config


def _old_config(tmp_path, **rl):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"name": "old-run", "output_dir": str(tmp_path / "run"), "rl": {"steps": 7, **rl}}))
    return path


def _events(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_checkpoint_config_with_a_removed_key_loads_with_a_warning_event_naming_it(tmp_path):
    path = _old_config(tmp_path, no_tool_reward_scale=0.8)
    stdout = io.StringIO()
    config = load_saved_config(path, EventStream(stdout=stdout, stderr=io.StringIO()).warning)
    assert not hasattr(config.rl, "no_tool_reward_scale") and config.rl.steps == 7
    warnings = [event for event in _events(stdout) if event["event"] == "warning"]
    assert len(warnings) == 1
    assert "rl.no_tool_reward_scale" in warnings[0]["message"] and "0.8" in warnings[0]["message"]
    assert "rewards.tool.no_tool_factor" in warnings[0]["message"]


def test_a_valid_config_loads_without_warnings(tmp_path):
    messages: list[str] = []
    config = load_saved_config(_old_config(tmp_path), messages.append)
    assert config.rl.steps == 7 and messages == []


def test_a_removed_key_next_to_another_mistake_still_fails_with_the_schema_error(tmp_path):
    messages: list[str] = []
    with pytest.raises(ConfigError, match=r"rl: .*'stpes'") as failure:
        load_saved_config(_old_config(tmp_path, no_tool_reward_scale=0.8, stpes=3), messages.append)
    assert "run config is invalid" in str(failure.value)
    assert messages == []


def test_an_unknown_key_that_was_never_in_the_schema_still_fails(tmp_path):
    with pytest.raises(ConfigError, match="made_up_key"):
        load_saved_config(_old_config(tmp_path, made_up_key=1), lambda message: None)


def test_a_config_to_train_with_still_rejects_a_removed_key(tmp_path):
    # Only saved configs are migrated; a run about to start must not silently lose a setting.
    with pytest.raises(ConfigError, match="no_tool_reward_scale"):
        load_config(_old_config(tmp_path, no_tool_reward_scale=0.8))


def test_every_removed_key_is_really_gone_from_the_schema():
    from vistool_trainer.run.run_config import resolved_schema

    schema = resolved_schema()
    for dotted in REMOVED_KEYS:
        node = schema
        *parents, leaf = dotted.split(".")
        for parent in parents:
            node = node["properties"][parent]
        assert leaf not in node["properties"], f"{dotted} is back in the schema: remove it from REMOVED_KEYS"
