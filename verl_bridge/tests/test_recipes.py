"""The shipped recipes (examples/verl/) compose over veRL 0.9.1's own config tree and pass veRL's own
validation, with what each claims: vistool DAPO's clip-higher and group filter, and VTool-R1 v2's
published settings once as-published.sh's overrides are applied (each one checked against the
value the source states: VTool-R1/training-v2 at d2aa283, recipe/vtool/run_qwen2_5_vl_3b_chart.sh, and for what
it leaves unset the defaults of the fork's own veRL config, not veRL 0.9.1's).
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
    # It says which part of DAPO it leaves out.
    assert "leaves out **overlong reward shaping**" in readme and "overlong_buffer_cfg" in readme


# The values the source states, each with where (VTool-R1/training-v2 at d2aa283): S is
# recipe/vtool/run_qwen2_5_vl_3b_chart.sh with its line, Y recipe/vtool/refocus_multiturn_grpo.yaml, P the
# fork's own verl/trainer/config/ppo_trainer.yaml (its veRL, not 0.9.1: the recipe composes over
# `file://verl/trainer/config`), read from the fork's _generated_ppo_trainer.yaml for what S and Y leave unset.
SOURCE = {
    "algorithm.adv_estimator": "grpo",  # Y:10
    "actor_rollout_ref.rollout.n": 8,  # S:69 (ROLLOUT_N, S:28); Y:39
    "data.train_batch_size": 32,  # S:51 (S:22)
    "actor_rollout_ref.actor.ppo_mini_batch_size": 16,  # S:53 (S:23)
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 2,  # S:56 (S:24)
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 2,  # S:59 (S:25)
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": 2,  # S:63
    "actor_rollout_ref.rollout.tensor_model_parallel_size": 1,  # S:78
    "data.max_prompt_length": 8192,  # S:101
    "data.max_response_length": 8192,  # S:102
    "trainer.total_epochs": 15,  # S:100
    "trainer.total_training_steps": None,  # P
    "trainer.n_gpus_per_node": 4,  # S:95
    "trainer.save_freq": 20,  # S:98
    "trainer.test_freq": 5,  # S:99
    "trainer.val_before_train": True,  # S:90
    "trainer.max_actor_ckpt_to_keep": None,  # P:191
    "trainer.ray_wait_register_center_timeout": 2000,  # S:89
    "trainer.project_name": "vtool",  # S:93
    "trainer.experiment_name": "3b_chart_fp16",  # S:94
    "algorithm.rollout_correction.rollout_is": "token",  # S:82 (S:34)
    "algorithm.rollout_correction.rollout_is_threshold": 2.0,  # S:83 (S:35)
    "algorithm.rollout_correction.rollout_is_batch_normalize": False,  # S:84 (S:36)
    "algorithm.rollout_correction.rollout_rs": None,  # S:85 (S:37)
    "algorithm.rollout_correction.bypass_mode": False,  # S:87 (S:39)
    "algorithm.rollout_correction.loss_type": "ppo_clip",  # S:88 (S:40)
    "actor_rollout_ref.actor.use_dynamic_bsz": True,  # S:57
    "actor_rollout_ref.actor.ppo_max_token_len_per_gpu": 24576,  # S:58 (S:29)
    "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu": 24576,  # S:62 (S:30)
    "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu": 24576,  # S:66
    "actor_rollout_ref.rollout.calculate_log_probs": True,  # S:64
    "actor_rollout_ref.model.enable_gradient_checkpointing": True,  # S:75
    "actor_rollout_ref.model.use_remove_padding": True,  # S:52
    "actor_rollout_ref.actor.fsdp_config.forward_prefetch": True,  # S:54
    "actor_rollout_ref.actor.fsdp_config.dtype": "float16",  # S:55
    "actor_rollout_ref.ref.fsdp_config.dtype": "float16",  # S:60
    "actor_rollout_ref.rollout.dtype": "float16",  # S:67
    "actor_rollout_ref.rollout.gpu_memory_utilization": 0.8,  # S:68 (S:26)
    "actor_rollout_ref.rollout.max_num_batched_tokens": 32768,  # S:80 (S:27)
    "actor_rollout_ref.rollout.agent.num_workers": 4,  # S:73 (S:31)
    "actor_rollout_ref.rollout.enable_chunked_prefill": True,  # S:70
    "actor_rollout_ref.rollout.enable_prefix_caching": True,  # S:71
    "data.validation_shuffle": True,  # S:49
    "data.val_max_samples": -1,  # P
    "actor_rollout_ref.nccl_timeout": 86400000,  # Y:33
    "actor_rollout_ref.rollout.multi_turn.max_user_turns": 3,  # Y:47
    "ray_kwargs.ray_init.num_cpus": 40,  # S:103 (S:42)
    # P: what S and Y leave unset, the fork's defaults
    "actor_rollout_ref.actor.optim.lr": 1e-6,
    "actor_rollout_ref.actor.optim.weight_decay": 0.01,
    "actor_rollout_ref.actor.clip_ratio_low": 0.2,
    "actor_rollout_ref.actor.clip_ratio_high": 0.2,
    "actor_rollout_ref.actor.clip_ratio_c": 3.0,
    "actor_rollout_ref.actor.loss_agg_mode": "token-mean",
    "actor_rollout_ref.actor.use_kl_loss": False,
    "actor_rollout_ref.actor.entropy_coeff": 0,
    "actor_rollout_ref.actor.ppo_epochs": 1,
    "actor_rollout_ref.rollout.temperature": 1.0,
    "actor_rollout_ref.rollout.top_p": 1,
    "algorithm.norm_adv_by_std_in_grpo": True,
    "data.seed": None,
}


def test_vtool_r1_v2_as_published_has_the_sources_settings(monkeypatch):
    script = EXAMPLES / "vtool-r1-v2-qwen2.5-vl-3b-chart" / "as-published.sh"
    assert "VTool-R1/training-v2 at commit d2aa28353ec10c7f91b39f502925003a81d6982d" in script.read_text()
    cfg = composed("vtool-r1-v2-qwen2.5-vl-3b-chart", as_published_overrides(script), monkeypatch)
    wrong = {key: (OmegaConf.select(cfg, key), value) for key, value in SOURCE.items() if OmegaConf.select(cfg, key) != value}
    assert wrong == {}, "as-published.sh differs from the source at (composed, source): " + repr(wrong)
    # The source's loop trains only the final answer (vtool.py masks the tool-call turn): the recipe's agent loop does too.
    agent_loop = (EXAMPLES / "vtool-r1-v2-qwen2.5-vl-3b-chart" / "agent_loop.yaml").read_text()
    assert re.search(r"^  train_turns: final ", agent_loop, re.M)
    # At most two assistant turns, as the source's loop plays them (vtool.py breaks after the answer that follows the tool round).
    assert re.search(r"^  max_turns: 2 ", agent_loop, re.M) and re.search(r"^  max_tool_calls: 1 ", agent_loop, re.M)
    # The reward is the LLM judge alone, at the recipe's default endpoint (S:12-15: http://localhost:8000/v1).
    run_sh = (EXAMPLES / "vtool-r1-v2-qwen2.5-vl-3b-chart" / "run.sh").read_text()
    rewards = re.search(r"<<'JSON'  # vistool: rewards\n(.*?)\nJSON", run_sh, re.S)
    assert rewards and '"mode": "replace"' in rewards.group(1) and "http://127.0.0.1:8000/v1" in rewards.group(1)


def test_every_remaining_difference_is_listed_with_its_source_line():
    readme = (EXAMPLES / "README.md").read_text()
    section = readme.split("### What still differs from the published VTool-R1 v2")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| source") and "---" not in line]
    assert len(rows) >= 10
    for row in rows:  # each names the source file and line it differs from
        assert re.search(r"(run_qwen2_5_vl_3b_chart\.sh|refocus_multiturn_grpo\.yaml|vtool\.py|reward_utils\.py|launch_judge_gpu\.sh|ppo_trainer\.yaml):\d+", row), row


@pytest.mark.parametrize("recipe", ["dapo-qwen2.5-vl-3b-4gpu", "vtool-r1-v2-qwen2.5-vl-3b-chart"])
def test_each_recipe_s_run_sh_runs_the_bridge_of_its_checkout(recipe):
    run_sh = (EXAMPLES / recipe / "run.sh").read_text()
    assert 'export PYTHONPATH="$REPO/verl_bridge:$REPO/trainer' in run_sh
    assert (EXAMPLES / recipe / "agent_loop.yaml").read_text().count("max_new_tokens:") == 1
