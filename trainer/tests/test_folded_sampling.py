"""`rl.fold_lora_for_sampling` (issue 39, defect 8): the transformers sampler of a LoRA policy
runs each adapted projection as one matmul while it samples, and the trained model comes back bit
for bit afterwards.

Expected values are computed here, independently of the code under test: the folded weight is
W + (B @ A) · α/r from the adapter tensors themselves, and "no adapter ran" is counted with
forward hooks on every lora_A and lora_B module. Runs on the policy under test (the Qwen-faithful
fixture under `make test-qwen`), with the one-GPU recipe's LoRA targets.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from lora_updates import give_adapters_an_update
from model_under_test import policy_section
from PIL import Image

from vistool_trainer.checkout import repo_root
from vistool_trainer.config import ConfigError, PolicyConfig, from_dict
from vistool_trainer.model.folded_adapters import adapters_folded
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.model.merged_weights import FoldingLoss
from vistool_trainer.model.policy import Policy, score_tokens
from vistool_trainer.rollouts.folded_sampler import FoldedAdapterSampler

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>"] * 20
QUESTION = "Question: Is the revenue of D low, medium or high?"


def _lora_policy(dtype: str) -> Policy:
    recipe = json.loads((repo_root() / "examples" / "grpo-qwen2.5-vl-3b-1gpu-lora.vistool.json").read_text())
    lora = recipe["policy"]["lora"]
    section = policy_section(dtype=dtype, gradient_checkpointing=False,
                             lora={"enabled": True, "r": 8, "alpha": 16, "dropout": 0.0, "target_modules": lora["target_modules"]})
    policy = Policy.create(from_dict(PolicyConfig, section), CORPUS, 5, "cpu")
    give_adapters_an_update(policy.model, 0.05)
    return policy


def _conversation() -> list[dict]:
    image = {"type": "image", "ref": "chart", "image": Image.effect_noise((112, 112), 40).convert("RGB")}
    return [{"role": "user", "content": [image, {"type": "text", "text": QUESTION}]}]


def _adapter_modules(policy: Policy) -> list[torch.nn.Module]:
    return [module for name, module in policy.model.named_modules()
            if name.endswith((".lora_A.default", ".lora_B.default"))]


def test_sampling_folded_runs_no_adapter_and_gives_the_trained_weights_back_bit_for_bit():
    policy = _lora_policy("float32")
    before = {name: tensor.clone() for name, tensor in policy.model.state_dict().items()}
    adapters = _adapter_modules(policy)
    assert adapters, "the recipe's targets matched no layer of the policy under test"
    calls = {"count": 0}
    hooks = [module.register_forward_hook(lambda *_: calls.__setitem__("count", calls["count"] + 1)) for module in adapters]
    try:
        policy.sample_turns([_conversation()], 8, 1.0, greedy=True)
        unfolded_calls = calls["count"]
        calls["count"] = 0
        sampler = FoldedAdapterSampler(policy)
        turns = sampler.sample_turns([_conversation()] * 2, 8, 1.0, greedy=True)
    finally:
        for hook in hooks:
            hook.remove()
    # Unfolded, every decoding step ran the adapters; folded, none ran.
    assert unfolded_calls > 0
    assert calls["count"] == 0
    assert len(turns) == 2 and all(turn.token_ids for turn in turns)
    assert sampler.folded_layers == len(adapters) // 2
    after = policy.model.state_dict()
    assert before.keys() == after.keys()
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    assert changed == []
    assert all(not module.disable_adapters for module in policy.model.modules() if hasattr(module, "disable_adapters")
               and hasattr(module, "lora_A"))


def test_inside_the_fold_each_adapted_weight_is_w_plus_b_a_scaled_and_scores_as_the_lora_model():
    policy = _lora_policy("float32")
    conversation = _conversation() + [{"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]}]
    inputs = policy.batch([policy.encoder.encode(conversation, add_generation_prompt=False)])
    policy.model.eval()
    with torch.no_grad():
        lora_log_probs, mask, _ = score_tokens(policy.model, inputs)
    expected = {}
    for name, module in policy.model.get_base_model().named_modules():
        if hasattr(module, "lora_A") and "default" in module.lora_A:
            a, b = module.lora_A["default"].weight.float(), module.lora_B["default"].weight.float()
            expected[name] = module.get_base_layer().weight.detach().float() + (b @ a) * module.scaling["default"]
    with adapters_folded(policy.model) as folded, torch.no_grad():
        assert folded == len(expected)
        for name, module in policy.model.get_base_model().named_modules():
            if name in expected:
                torch.testing.assert_close(module.get_base_layer().weight.float(), expected[name], rtol=0, atol=1e-6)
        folded_log_probs, _, _ = score_tokens(policy.model, inputs)
    # fp32: folding changes the sum's order only.
    assert float(((folded_log_probs - lora_log_probs) * mask).abs().max()) < 1e-4


def test_in_bf16_the_fold_rounds_as_an_engine_would_and_says_how_much_of_the_update_it_lost():
    policy = _lora_policy("bfloat16")
    loss = FoldingLoss(torch.bfloat16)
    with adapters_folded(policy.model, loss):
        for name, module in policy.model.get_base_model().named_modules():
            if hasattr(module, "lora_A") and "default" in module.lora_A:
                assert module.get_base_layer().weight.dtype == torch.bfloat16
    lost = loss.share_lost()
    # Adapters of 0.05 · randn against Qwen-spread weights: some of the update survives bf16, some does not.
    assert lost is not None and 0.0 < lost < 1.0


def test_folding_is_refused_where_it_cannot_mean_anything():
    rl = resolve_config({}).rl
    assert rl.fold_lora_for_sampling is False
    with pytest.raises(ConfigError, match=r"rl/fold-needs-hf"):
        replace(rl, rollout_engine="vllm", fold_lora_for_sampling=True)
    assert replace(rl, fold_lora_for_sampling=True).fold_lora_for_sampling is True
    full = Policy.create(from_dict(PolicyConfig, policy_section()), CORPUS, 1, "cpu")
    with pytest.raises(ValueError, match="needs a LoRA policy"):
        FoldedAdapterSampler(full)
