"""What a bf16 rollout engine holds of an early LoRA update (issue 39, defect 5): a measurement.

A LoRA policy is pushed to vLLM as W + ΔW folded into one tensor (model/merged_weights.py sends
it in fp32: bf16 W plus fp32 adapters), which the engine stores in its own dtype, bf16 on a GPU. In bf16 (8 significant bits) a weight of 0.02 moves in steps of ~1e-4,
while one RL step at lr 1e-5 makes ΔW ~1e-6-1e-5: the sum rounds back to W for most entries, and
the engine samples (nearly) the base policy while the trainer scores Wx + B(Ax) with the whole ΔW.
This test measures both on the policy under test in bf16 (the Qwen fixture under `make test-qwen`;
its random weights have Qwen's spread, ~0.02) after one AdamW step at the one-GPU recipe's RL lr
with its rank, α and targets, and prints the numbers docs/VLLM.md quotes. It asserts the effect
is there, so a change that removes it (an fp32 engine, vLLM's own LoRA support) shows up here, and
that the share the vLLM sampler reports after each push (`training/lora_delta_lost_in_engine`,
merged_weights.FoldingLoss) is the one measured here layer by layer.
"""
from __future__ import annotations

import copy
import json

import torch
from model_under_test import policy_section
from PIL import Image

from vistool_trainer.checkout import repo_root
from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.merged_weights import FoldingLoss, merged_state_dict
from vistool_trainer.model.policy import Policy, score_tokens

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>"] * 20


def test_one_lora_step_at_lr_1e_5_mostly_vanishes_when_folded_into_bf16_weights(capsys):
    recipe = json.loads((repo_root() / "examples" / "grpo-qwen2.5-vl-3b-1gpu-lora.vistool.json").read_text())
    lora, lr = recipe["policy"]["lora"], float(recipe["rl"]["lr"])
    section = policy_section(dtype="bfloat16", gradient_checkpointing=False,
                             lora={"enabled": True, "r": lora["r"], "alpha": lora["alpha"], "dropout": 0.0,
                                   "target_modules": lora["target_modules"]})
    policy = Policy.create(from_dict(PolicyConfig, section), CORPUS, 3, "cpu")
    image = {"type": "image", "ref": "chart", "image": Image.effect_noise((112, 112), 40).convert("RGB")}
    messages = [{"role": "user", "content": [image, {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer> and some more words to score"}]}]
    inputs = policy.batch([policy.encoder.encode(messages, add_generation_prompt=False)])
    optimizer = torch.optim.AdamW([p for p in policy.model.parameters() if p.requires_grad], lr=lr)
    log_probs, mask, _ = score_tokens(policy.model, inputs)
    (-(log_probs * mask).sum() / mask.sum()).backward()
    optimizer.step()
    policy.model.eval()

    reported = FoldingLoss(torch.bfloat16)
    merged = dict(merged_state_dict(policy.model, reported))
    erased, total, relative = 0, 0, []
    lost_squared, delta_squared = 0.0, 0.0
    for module in policy.model.modules():
        if not hasattr(module, "get_delta_weight") or not hasattr(module, "lora_A"):
            continue
        delta = module.get_delta_weight("default").detach().float()
        exact = module.get_base_layer().weight.detach().float() + delta
        name = next(n for n, m in policy.model.get_base_model().named_modules() if m is module)
        # merged_state_dict sends W (bf16) + ΔW (fp32 adapters) as fp32; a bf16 engine stores it in bf16.
        assert merged[f"{name}.weight"].dtype == torch.float32
        folded = merged[f"{name}.weight"].to(torch.bfloat16)
        merged[f"{name}.weight"] = folded
        moved = folded.float() - module.get_base_layer().weight.float()
        erased += int(((moved == 0) & (delta != 0)).sum())
        total += int((delta != 0).sum())
        relative.append(float((folded.float() - exact).norm() / delta.norm()))
        lost_squared += float((folded.float() - exact).pow(2).sum())
        delta_squared += float(delta.pow(2).sum())
    erased_share = erased / total
    lost_share = (lost_squared / delta_squared) ** 0.5

    def scores(model):
        with torch.no_grad():
            values, score_mask, _ = score_tokens(model, inputs)
        return values[score_mask.bool()]

    trained = scores(policy.model)  # what the trainer scores: Wx + B(Ax)
    engine = copy.deepcopy(policy.model).merge_and_unload()
    missing, unexpected = engine.load_state_dict(merged, strict=False)
    assert not unexpected
    folded_scores = scores(engine)  # what a bf16 engine holding W + ΔW computes
    with policy.model.disable_adapter():
        base_scores = scores(policy.model)  # the policy before the step
    gap_folded = float((trained - folded_scores).abs().mean())
    gap_step = float((trained - base_scores).abs().mean())
    with capsys.disabled():
        print(f"\nLoRA r{lora['r']} α{lora['alpha']}, one AdamW step at lr {lr:g}, bf16: {erased_share:.1%} of the ΔW entries erased by "
              f"folding into bf16 (|folded − exact| / |ΔW| {min(relative):.2f}–{max(relative):.2f} per layer, {lost_share:.3f} over all); mean |Δ log p| trainer vs folded "
              f"{gap_folded:.2e}, trainer vs the policy before the step {gap_step:.2e}")
    assert erased_share > 0.5
    assert gap_step > 0
    assert reported.share_lost() is not None and abs(reported.share_lost() - lost_share) < 1e-6 * lost_share
    assert 0.5 < lost_share <= 1.0
