"""The shipped recipes (examples/verl/) compose over veRL 0.9.1's own config tree and pass veRL's own
validation, with what each claims: vistool DAPO's clip-higher and group filter, and VTool-R1 v2's
published settings once as-published.sh's overrides are applied (each one checked against the
value the source states: VTool-R1/training-v2 at d2aa283, recipe/vtool/run_qwen2_5_vl_3b_chart.sh).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from verl.utils.config import validate_config

from vistool_trainer.checkout import repo_root

EXAMPLES = repo_root() / "examples" / "verl"


def as_published_overrides(script: Path) -> list[str]:
    """The Hydra overrides as-published.sh passes to run.sh (its `exec "$DIR/run.sh" ... "$@"` command)."""
    text = script.read_text()
    command = text[text.index('exec "$DIR/run.sh"'):].replace("\\\n", " ")
    words = shlex.split(command.split("\n")[0])
    return [w for w in words[2:] if w != "$@"]


def composed(recipe: str, overrides: list[str], monkeypatch) -> OmegaConf:
    folder = EXAMPLES / recipe
    monkeypatch.setenv("VISTOOL_VERL_DIR", str(folder))
    monkeypatch.setenv("VISTOOL_REPO", str(repo_root()))
    monkeypatch.setenv("VISTOOL_RUN_DIR", "/runs/x")
    with initialize_config_dir(config_dir=str(folder), version_base=None):
        cfg = compose(config_name="verl", overrides=overrides)
    validate_config(cfg, use_reference_policy=bool(cfg.actor_rollout_ref.actor.use_kl_loss), use_critic=False)
    return cfg


def test_vistool_dapo_is_named_so_and_has_dapo_s_settings(monkeypatch):
    cfg = composed("dapo-qwen2.5-vl-3b-4gpu", [], monkeypatch)
    assert cfg.trainer.experiment_name == "vistool-dapo-qwen2.5-vl-3b"
    actor = cfg.actor_rollout_ref.actor
    assert (actor.clip_ratio_low, actor.clip_ratio_high, actor.clip_ratio_c, actor.loss_agg_mode) == (0.2, 0.28, 10.0, "token-mean")
    assert actor.use_kl_loss is False and cfg.algorithm.filter_groups.enable is True
    assert actor.fsdp_config.mixed_precision.param_dtype == "bfloat16"
    readme = (EXAMPLES / "README.md").read_text()
    assert "vistool DAPO" in readme and "Not a published VTool-R1 recipe" in readme


def test_vtool_r1_v2_as_published_has_the_sources_settings(monkeypatch):
    script = EXAMPLES / "vtool-r1-v2-qwen2.5-vl-3b-chart" / "as-published.sh"
    assert "VTool-R1/training-v2 at commit d2aa28353ec10c7f91b39f502925003a81d6982d" in script.read_text()
    cfg = composed("vtool-r1-v2-qwen2.5-vl-3b-chart", as_published_overrides(script), monkeypatch)
    rollout, actor = cfg.actor_rollout_ref.rollout, cfg.actor_rollout_ref.actor
    # run_qwen2_5_vl_3b_chart.sh and refocus_multiturn_grpo.yaml
    assert cfg.algorithm.adv_estimator == "grpo"
    assert (rollout.n, cfg.data.train_batch_size, actor.ppo_mini_batch_size, actor.ppo_micro_batch_size_per_gpu) == (8, 32, 16, 2)
    assert rollout.tensor_model_parallel_size == 1
    assert (cfg.data.max_prompt_length, cfg.data.max_response_length) == (8192, 8192)
    assert (rollout.multi_turn.max_assistant_turns, cfg.trainer.total_epochs, cfg.trainer.total_training_steps) == (3, 15, None)
    assert (cfg.trainer.n_gpus_per_node, cfg.trainer.save_freq, cfg.trainer.test_freq, cfg.trainer.val_before_train) == (4, 20, 5, True)
    assert (cfg.algorithm.rollout_correction.rollout_is, cfg.algorithm.rollout_correction.rollout_is_threshold) == ("token", 2.0)
    assert actor.use_dynamic_bsz is True and actor.ppo_max_token_len_per_gpu == 24576
    assert cfg.actor_rollout_ref.model.enable_gradient_checkpointing is True
    assert actor.fsdp_config.dtype == "float16" and rollout.dtype == "float16"
    # veRL 0.9.1's ppo_trainer.yaml defaults the source leaves unset
    assert (actor.optim.lr, actor.optim.weight_decay, actor.clip_ratio_low, actor.clip_ratio_high, actor.use_kl_loss) == (1e-6, 0.01, 0.2, 0.2, False)
    # The reward is the LLM judge alone, at the recipe's default endpoint.
    run_sh = (EXAMPLES / "vtool-r1-v2-qwen2.5-vl-3b-chart" / "run.sh").read_text()
    rewards = re.search(r"<<'JSON'  # vistool: rewards\n(.*?)\nJSON", run_sh, re.S)
    assert rewards and '"mode": "replace"' in rewards.group(1) and "http://127.0.0.1:8000/v1" in rewards.group(1)


@pytest.mark.parametrize("recipe", ["dapo-qwen2.5-vl-3b-4gpu", "vtool-r1-v2-qwen2.5-vl-3b-chart"])
def test_each_recipe_s_run_sh_runs_the_bridge_of_its_checkout(recipe):
    run_sh = (EXAMPLES / recipe / "run.sh").read_text()
    assert 'export PYTHONPATH="$REPO/verl_bridge:$REPO/trainer' in run_sh
    assert (EXAMPLES / recipe / "agent_loop.yaml").read_text().count("max_new_tokens:") == 1
