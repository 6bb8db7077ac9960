"""One inf or NaN gradient must not reach the weights (issue 39, defect 3).

Stepping AdamW on a NaN gradient makes every weight it touches NaN, and AdamW's second moment
keeps the NaN for good; the next weight push then hands it to the rollout engine. The engines skip
such a step, as veRL's actor does: the gradients are dropped, the weights, the fp32 masters and the
optimizer state are left bit for bit as they were, and the RL metrics count the skipped step
(`actor/grad_norm_nonfinite`). Runs on the policy under test (model_under_test.py): the micro
policy, or the Qwen fixture under `make test-qwen`.
"""
from __future__ import annotations

import math

import pytest
import torch
from model_under_test import policy_section
from PIL import Image

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.engines.training_engine import TrainingEngine
from vistool_trainer.model.policy import Policy

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>", "<answer>high</answer>"] * 20


def _policy(dtype: str = "float32") -> Policy:
    return Policy.create(from_dict(PolicyConfig, policy_section(dtype=dtype, gradient_checkpointing=False)), CORPUS, 3, "cpu")


def _inputs(policy: Policy) -> dict[str, torch.Tensor]:
    image = {"type": "image", "ref": "chart", "image": Image.effect_noise((112, 112), 40).convert("RGB")}
    messages = [{"role": "user", "content": [image, {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]}]
    return policy.batch([policy.encoder.encode(messages, add_generation_prompt=False)])


def _backward(engine: TrainingEngine, inputs: dict[str, torch.Tensor], poison: float | None = None) -> None:
    log_probs, mask, _ = engine.score(inputs)
    loss = -(log_probs * mask).sum() / mask.sum()
    if poison is not None:
        # One parameter's gradient gets an inf/NaN, as an overflow in one layer's backward would give it.
        parameter = next(p for name, p in engine.module.named_parameters() if "layers.0.mlp.down_proj" in name)
        handle = parameter.register_hook(lambda grad: grad * poison)
        try:
            engine.backward(loss)
        finally:
            handle.remove()
        return
    engine.backward(loss)


def _snapshot(engine: TrainingEngine, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    state = {f"weight/{name}": p.detach().clone() for name, p in engine.module.named_parameters()}
    for index, tensor in enumerate(engine.trained_tensors()):
        state[f"trained/{index}"] = tensor.detach().clone()
        for key, value in optimizer.state.get(tensor, {}).items():
            state[f"optimizer/{index}/{key}"] = value.detach().clone() if torch.is_tensor(value) else torch.tensor(float(value))
    return state


def _assert_same(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor]) -> None:
    assert before.keys() == after.keys()
    changed = [key for key in before if not torch.equal(before[key], after[key])]
    assert not changed, changed[:5]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("poison", [float("nan"), float("inf")])
def test_a_nonfinite_gradient_leaves_weights_masters_and_optimizer_state_unchanged(dtype, poison):
    policy = _policy(dtype)
    engine = TrainingEngine(policy)
    assert (engine.masters is not None) == (dtype == "bfloat16")
    optimizer = engine.make_optimizer(lr=1e-3, weight_decay=0.01, max_grad_norm=1.0)
    inputs = _inputs(policy)
    engine.train_mode(dropout=False)
    # A finite step first, so AdamW holds moments that a NaN step would poison.
    engine.zero_grad(optimizer)
    _backward(engine, inputs)
    assert math.isfinite(engine.step(optimizer, 1.0))
    before = _snapshot(engine, optimizer)

    engine.zero_grad(optimizer)
    _backward(engine, inputs, poison=poison)
    norm = engine.step(optimizer, 1.0)
    assert not math.isfinite(norm)
    _assert_same(before, _snapshot(engine, optimizer))
    assert engine.skipped_steps == 1
    assert all(tensor.grad is None for tensor in engine.trained_tensors())
    assert all(p.grad is None for p in engine.module.parameters())

    # Training goes on from there: the next finite step moves the weights and keeps them finite.
    engine.zero_grad(optimizer)
    _backward(engine, inputs)
    assert math.isfinite(engine.step(optimizer, 1.0))
    after = _snapshot(engine, optimizer)
    assert any(not torch.equal(before[key], after[key]) for key in before if key.startswith("weight/"))
    assert all(torch.isfinite(p).all() for p in engine.module.parameters())
    engine.close()


def test_the_rl_update_counts_a_skipped_step_and_reports_the_norm_of_the_others(monkeypatch):
    from test_ppo_update import _rl, _rollouts

    from vistool_trainer.trainers import grpo

    policy = _policy()
    engine = TrainingEngine(policy)
    optimizer = engine.make_optimizer(lr=1e-3, weight_decay=0.0, max_grad_norm=1.0)
    rollouts = _rollouts(policy, groups=2, group_size=4)
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5] * 2)
    # The first of two mini-batches gets a NaN gradient.
    original = grpo._mini_batch_step
    calls = []

    def poisoned(context, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            parameter = next(p for name, p in context.engine.module.named_parameters() if "layers.0.mlp.down_proj" in name)
            handle = parameter.register_hook(lambda grad: grad * float("nan"))
            try:
                return original(context, *args, **kwargs)
            finally:
                handle.remove()
        return original(context, *args, **kwargs)

    monkeypatch.setattr(grpo, "_mini_batch_step", poisoned)
    metrics = grpo._update(policy, engine, optimizer, rollouts, advantages, _rl(ppo_mini_batch_size=1, max_grad_norm=1.0), None)
    assert len(calls) == 2
    # Without the skip every weight the NaN reached is NaN now (and stays so).
    assert all(torch.isfinite(p).all() for p in policy.model.parameters())
    assert metrics["actor/grad_norm_nonfinite"] == 1.0
    assert metrics["actor/optimizer_steps"] == 1.0
    assert metrics["actor/grad_norm"] is not None and math.isfinite(metrics["actor/grad_norm"])
