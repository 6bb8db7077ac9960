"""The CPU stand-in's pieces one by one (vistool_verl.cpu_stand_in, for tests only; `make verl-e2e`
runs them together inside veRL's trainer): what veRL sees when the plugin is loaded through its own
hooks in a fresh process, and the transformers rollout server (the stand-in for vLLM) taking the
actor's weights.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
import torch
from transformers import Qwen2_5_VLForConditionalGeneration

from vistool_verl.cpu_stand_in import launch
from vistool_verl.cpu_stand_in.transformers_replica import TransformersServer

PROBE = r"""
import json, os, sys
import verl  # imports the modules named in VERL_USE_EXTERNAL_MODULES
from verl.utils.device import get_device_name, get_nccl_backend, get_resource_name
from verl.workers.engine.base import EngineRegistry
from verl.workers.rollout.base import get_rollout_class
from verl.workers.rollout.replica import get_rollout_replica_class
import verl.workers.engine_workers as engine_workers
from verl.workers.config import HFModelConfig
config = HFModelConfig(path=sys.argv[1], override_config={"attn_implementation": "sdpa"})
print(json.dumps({
    "device": get_device_name(), "backend": get_nccl_backend(), "resource": get_resource_name(),
    "engine": EngineRegistry.get_engine_cls("language_model", "fsdp2").__name__,
    "replica": get_rollout_replica_class("hf").__name__, "adapter": get_rollout_class("hf", "async").__name__,
    "gloo": getattr(engine_workers.initialize_global_process_group_ray, "vistool_gloo", False),
    "processor": type(config.processor).__name__ if config.processor is not None else None,
    "rope": hasattr(config.processor, "get_rope_index"),
}))
"""


def probe(micro_dir, env) -> dict:
    result = subprocess.run([sys.executable, "-c", PROBE, str(micro_dir)], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_loaded_through_veRLs_hooks_the_plugin_gives_veRL_a_CPU_platform_gloo_its_FSDP_engine_the_hf_rollout_and_a_VL_processor(micro_dir):
    seen = probe(micro_dir, launch.environment(os.environ))
    assert seen == {"device": "cpu", "backend": "gloo", "resource": "GPU", "engine": "FSDPEngineWithLMHead",
                    "replica": "TransformersReplica", "adapter": "TransformersServerAdapter", "gloo": True,
                    "processor": "ImageOnlyQwenVLProcessor", "rope": True}


def test_without_the_platform_variable_the_plugin_changes_nothing(micro_dir):
    env = {**launch.environment(os.environ), "VERL_PLATFORM": ""}
    env.pop("VERL_ENGINE_DEVICE")
    result = subprocess.run([sys.executable, "-c", "import verl, verl.workers.rollout.base as b; print(('hf', 'async') in b._ROLLOUT_REGISTRY)"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr[-2000:]


def test_the_rollout_server_samples_from_the_weights_veRL_last_sent_and_tags_answers_with_their_step(micro_dir, tmp_path):
    server = TransformersServer(str(micro_dir), prompt_length=512, response_length=64, seed=0, threads=1)
    tokenizer = server.generator.processor.tokenizer
    prompt = tokenizer("<|im_start|>user\nIs it high?<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    sampling = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "max_tokens": 8}
    before = asyncio.run(server.generate(prompt, dict(sampling), "r0"))
    assert before.extra_fields == {"global_steps": None}
    # New weights, as veRL's naive checkpoint engine hands them over after an optimizer step: every tensor by name.
    other = Qwen2_5_VLForConditionalGeneration.from_pretrained(micro_dir, dtype=torch.float32)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in other.parameters():
            parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))
    sent = {name: tensor.clone() for name, tensor in other.state_dict().items()}
    counts = asyncio.run(server.load_weights(sent, 3))
    assert counts["tensors"] == len(sent) and counts["tensors"] >= counts["model_tensors"] - 1  # a tied lm_head may share its tensor
    after = asyncio.run(server.generate(prompt, dict(sampling), "r1"))
    assert after.extra_fields == {"global_steps": 3}
    # The reported log-probs are the new model's own, over the vocabulary vLLM samples from: the
    # stand-in's banned ids (vision placeholders, padded rows) at -inf, as vLLM's processed log-probs.
    ids = torch.tensor([prompt + after.token_ids])
    with torch.no_grad():
        logits = other(input_ids=ids).logits[0, len(prompt) - 1:-1]
    logits[:, list(server.generator.banned)] = float("-inf")
    expected = torch.log_softmax(logits, -1).gather(1, torch.tensor(after.token_ids)[:, None])[:, 0]
    assert torch.allclose(torch.tensor(after.log_probs), expected, atol=1e-4)
    with pytest.raises(KeyError, match="does not have"):
        asyncio.run(server.load_weights({"model.not_a_layer.weight": torch.zeros(1)}, 4))


@pytest.mark.parametrize("dynamic_sampling,failed_groups", [(False, "drop"), (True, "drop"), (False, "keep")])
def test_the_e2e_s_overrides_compose_over_veRLs_config_and_pass_its_validation(tmp_path, dynamic_sampling, failed_groups):
    """What `python -m vistool_verl e2e` passes to main_ppo, composed as Hydra composes it (a typo or a
    key that needs `+` fails here in seconds rather than after Ray has started)."""
    import argparse
    from pathlib import Path

    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    from vistool_verl.e2e import trainer_overrides

    args = argparse.Namespace(prompts=4, group=4, steps=2, max_turns=3, max_tool_calls=2, max_new_tokens=48, lr=1e-3,
                              dynamic_sampling=dynamic_sampling, seed=1, failed_groups=failed_groups)
    overrides = [o for o in launch.overrides() + trainer_overrides(tmp_path, args, 200, 500) if not o.startswith("hydra.")]
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides)
    validate_config(cfg, use_reference_policy=False, use_critic=False)
    for section in ("actor_rollout_ref.actor", "actor_rollout_ref.rollout", "algorithm"):
        omega_conf_to_dataclass(OmegaConf.select(cfg, section))
    assert cfg.actor_rollout_ref.rollout.name == "hf" and cfg.actor_rollout_ref.rollout.limit_images == 3
    assert cfg.actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype == "fp32"
    assert cfg.actor_rollout_ref.model.use_remove_padding is False
    assert cfg.algorithm.filter_groups.enable is dynamic_sampling
    # vistool's sampler, with what veRL does not tell a custom sampler in its kwargs (failed_groups.py).
    sampler = cfg.trainer.v1.sampler
    assert sampler.custom_sampler.path == "pkg://vistool_verl.cpu_stand_in.recording_sampler"
    assert dict(sampler.sampler_kwargs) == {"failed_groups": failed_groups, "group_size": 4, "train_batch_size": 4,
                                            **({"filter_groups_metric": "reward"} if dynamic_sampling else {})}
    assert sampler.sync_refill_failed_groups is (failed_groups == "drop")
