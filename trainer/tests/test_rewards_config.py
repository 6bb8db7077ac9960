"""The run config's `rewards` section is the reward module's schema, and it reaches the real env
server (`--reward-config`): no-tool down-weighting happens there, once, and never in the trainer."""
import io
import json

import pytest

from vistool_trainer.run.events import EventStream
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.run_config import ConfigError, resolve_config, resolved_schema
from vistool_trainer.run.run_directory import RunDirectory
from vistool_trainer.run.train import open_env


def test_rewards_defaults_come_from_the_reward_modules_own_schema():
    from vistool_trainer.checkout import repo_root

    reward_schema = json.loads((repo_root() / "env" / "rewards" / "config.schema.json").read_text())
    config = resolve_config({})
    assert config.rewards["tool"]["no_tool_factor"] == reward_schema["properties"]["tool"]["properties"]["no_tool_factor"]["default"]
    assert set(config.rewards) == set(reward_schema["properties"])
    assert resolved_schema()["properties"]["rewards"]["properties"]["judge"]["properties"]["mode"]["enum"] == ["replace", "average", "either"]


def test_a_misspelt_reward_key_is_an_error_naming_it():
    with pytest.raises(ConfigError, match=r"rewards\.tool: .*'no_tool_factr'"):
        resolve_config({"rewards": {"tool": {"no_tool_factr": 0.5}}})


def test_the_trainer_has_no_second_no_tool_scale():
    with pytest.raises(ConfigError, match="no_tool_reward_scale"):
        resolve_config({"rl": {"no_tool_reward_scale": 0.8}})


def _answer_directly(client, task):
    opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                      "options": {"tools": True, "max_turns": 2, "max_tool_calls": 1, "images": "path"}}])[0]
    answer = "||".join(task["answer"]) if isinstance(task["answer"], list) else task["answer"]
    client.step_episodes([{"episode_id": opened["episode_id"], "text": f"<answer>{answer}</answer>"}])
    return client.score_episodes([opened["episode_id"]])[0]


def test_the_servers_no_tool_factor_is_the_one_in_the_run_config(tmp_path, vbar_data):
    task = load_tasks(vbar_data[0])[0]
    for factor in (0.8, 0.5):
        config = resolve_config({"output_dir": str(tmp_path / f"f{factor}"), "rewards": {"tool": {"no_tool_factor": factor}}})
        run = RunDirectory(tmp_path / f"f{factor}")
        server, client = open_env(config, run, vbar_data[0].parent.parent, EventStream(stdout=io.StringIO(), stderr=io.StringIO()))
        try:
            score = _answer_directly(client, task)
        finally:
            server.__exit__(None, None, None)
        # A correct direct answer: (0.8 accuracy + 0.2 format) · no_tool_factor.
        assert score["correct"] is True
        assert score["reward"] == pytest.approx(1.0 * factor)
        assert json.loads((run.root / "logs" / "reward-config.json").read_text())["tool"]["no_tool_factor"] == factor


def test_judge_settings_reach_the_server_and_its_counters_come_back_with_scores(tmp_path, vbar_data, judge_server):
    task = load_tasks(vbar_data[0])[0]
    judge = {"enabled": True, "base_url": f"http://127.0.0.1:{judge_server.server_port}/v1", "model": "test-judge", "max_retries": 0}
    config = resolve_config({"output_dir": str(tmp_path / "run"), "rewards": {"judge": judge}})
    server, client = open_env(config, RunDirectory(tmp_path / "run"), vbar_data[0].parent.parent, EventStream(stdout=io.StringIO(), stderr=io.StringIO()))
    try:
        score = _answer_directly(client, task)
    finally:
        server.__exit__(None, None, None)
    assert len(judge_server.requests) == 1 and judge_server.requests[0]["model"] == "test-judge"
    assert score["metrics"]["judge/requests"] == 1 and score["metrics"]["judge/failures"] == 0
    assert score["components"]["accuracy_judge"] == 1
