"""Truncated importance sampling between the rollout engine and the trainer (`rl.rollout_is`,
algorithms/rollout_correction.py; issue 39, defect 5's correction).

The weights and their metrics are checked against numbers worked out by hand; the update on the
policy under test (the Qwen fixture under `make test-qwen`) against a REINFORCE step computed here
independently with the weights applied by hand. The engine in that test is the policy as it was
one optimizer step earlier: what a bf16 engine holding a folded LoRA update samples from when the
rounding erases the step (test_lora_merge_rounding.py measures ~90 % of it erased). Without the
correction the update is the uncorrected step, which the last assertion tells apart.
"""
import copy
import math
from dataclasses import replace

import pytest
import torch
from model_under_test import policy_section
from PIL import Image

from vistool_trainer.algorithms.policy_loss import clipped_policy_loss
from vistool_trainer.algorithms.rollout_correction import rollout_is_metrics, rollout_is_weights
from vistool_trainer.config import ConfigError, PolicyConfig, from_dict
from vistool_trainer.engines.training_engine import TrainingEngine
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.model.policy import Policy, score_tokens
from vistool_trainer.rollouts.rollout import Rollout
from vistool_trainer.rollouts.sampler_agreement import engine_log_probs_per_sequence
from vistool_trainer.rollouts.token_view import ScoredPositions
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.trainers.grpo import _update

# Ratios π_old / π_rollout of 2.5, 0.4 and 1.25.
OLD = torch.tensor([math.log(0.5), math.log(0.2), math.log(0.5)])
ENGINE = torch.tensor([math.log(0.2), math.log(0.5), math.log(0.4)])


def test_token_weights_are_the_ratios_cut_at_the_threshold():
    weights = rollout_is_weights(OLD, ENGINE, "token", 2.0)
    torch.testing.assert_close(weights.raw, torch.tensor([2.5, 0.4, 1.25]))
    torch.testing.assert_close(weights.applied, torch.tensor([2.0, 0.4, 1.25]))


def test_a_sequence_weight_is_the_product_of_its_ratios_on_every_token():
    weights = rollout_is_weights(OLD, ENGINE, "sequence", 2.0)
    torch.testing.assert_close(weights.raw, torch.full((3,), 1.25))  # 2.5 · 0.4 · 1.25
    torch.testing.assert_close(weights.applied, torch.full((3,), 1.25))
    torch.testing.assert_close(rollout_is_weights(OLD, ENGINE, "sequence", 1.1).applied, torch.full((3,), 1.1))


def test_a_token_the_engine_gave_no_mass_cannot_overflow():
    weights = rollout_is_weights(torch.tensor([0.0]), torch.tensor([-1e4]), "token", 2.0)
    assert weights.raw.item() == pytest.approx(math.exp(20.0), rel=1e-6)
    assert weights.applied.item() == 2.0


def test_bad_settings_are_refused_with_what_to_set():
    with pytest.raises(ValueError, match="at least 1"):
        rollout_is_weights(OLD, ENGINE, "token", 0.5)
    with pytest.raises(ValueError, match="'token' or 'sequence'"):
        rollout_is_weights(OLD, ENGINE, "off", 2.0)
    with pytest.raises(ValueError, match="scored"):
        rollout_is_weights(OLD, ENGINE[:2], "token", 2.0)
    rl = resolve_config({}).rl
    with pytest.raises(ConfigError, match=r"rl/rollout-is-needs-vllm"):
        replace(rl, rollout_is="token")
    assert replace(rl, rollout_is="token", rollout_engine="vllm").rollout_is == "token"


def test_the_metrics_are_verls_over_every_corrected_token():
    first = rollout_is_weights(OLD, ENGINE, "token", 2.0)
    second = rollout_is_weights(torch.tensor([math.log(0.5)]), torch.tensor([math.log(0.5)]), "token", 2.0)  # on-policy: 1
    metrics = rollout_is_metrics([first, second], 2.0)
    applied = [2.0, 0.4, 1.25, 1.0]
    mean = sum(applied) / 4
    assert metrics["rollout_corr/rollout_is_mean"] == pytest.approx(mean)
    assert metrics["rollout_corr/rollout_is_max"] == pytest.approx(2.0)
    assert metrics["rollout_corr/rollout_is_min"] == pytest.approx(0.4)
    assert metrics["rollout_corr/rollout_is_ratio_fraction_high"] == pytest.approx(1 / 4)  # 2.5 > 2
    assert metrics["rollout_corr/rollout_is_ratio_fraction_low"] == pytest.approx(1 / 4)  # 0.4 < 1/2
    assert metrics["rollout_corr/rollout_is_eff_sample_size"] == pytest.approx(mean ** 2 / (sum(a * a for a in applied) / 4), rel=1e-6)
    assert rollout_is_metrics([], 2.0) == {}


def test_the_weights_multiply_each_tokens_clipped_loss():
    log_probs = torch.tensor([[-1.0, -2.0, -0.5]])
    old = torch.tensor([[-1.1, -2.0, -0.4]])
    mask = torch.ones(1, 3)
    advantages = torch.tensor([1.5])
    weights = torch.tensor([[2.0, 0.4, 1.25]])
    plain = clipped_policy_loss(log_probs, old, advantages, mask)
    weighted = clipped_policy_loss(log_probs, old, advantages, mask, token_weights=weights)
    torch.testing.assert_close(weighted.per_token, plain.per_token * weights)
    torch.testing.assert_close(weighted.loss, (plain.per_token * weights).sum() / 3)


def _turn(ids, log_probs=None):
    message = {"role": "assistant", "content": [{"type": "text", "text": "x"}], "token_ids": ids}
    if log_probs is not None:
        message["sampler_log_probs"] = log_probs
    return message


def test_each_training_sequence_gets_the_engine_values_of_its_own_tokens():
    user = {"role": "user", "content": [{"type": "text", "text": "Q"}]}
    tool = {"role": "tool", "content": [{"type": "text", "text": "O"}]}
    # Rollout 0 trains as two sequences (one per turn), rollout 1 as one; rollout 2 has no engine values.
    rollouts = [[user, _turn([5, 6], [-0.1, -0.2]), tool, _turn([7], [-0.3])], [user, _turn([8], [-0.4])], [user, _turn([9])]]
    owners = [0, 1, 0, 2]
    scored = [ScoredPositions([5, 6], [-1.0, -1.0], [0, 0]), ScoredPositions([8], [-1.0], [0]),
              ScoredPositions([7], [-1.0], [0]), ScoredPositions([9], [-1.0], [0])]
    assert engine_log_probs_per_sequence(rollouts, owners, scored) == [[-0.1, -0.2], [-0.4], [-0.3], None]


def _policy():
    return Policy.create(from_dict(PolicyConfig, policy_section()), ["Question: Is the revenue of D low, medium or high?",
                                                                    "<answer>low</answer>", "<answer>high</answer>"] * 20, 3, "cpu")


def _sampled_by_the_engine(policy, groups=2, group_size=4):
    """Rollouts sampled by `policy` as it is now, each turn with the sampler's own log-probs."""
    torch.manual_seed(0)
    rollouts = []
    for g in range(groups):
        image = {"type": "image", "ref": f"chart-{g}", "image": Image.effect_noise((112, 112), 40 + 10 * g).convert("RGB")}
        prompt = [{"role": "user", "content": [image, {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]}]
        turns = policy.sample_turns([prompt] * group_size, max_new_tokens=8, temperature=1.0, greedy=False, with_log_probs=True)
        for i, turn in enumerate(turns):
            reply = {"role": "assistant", "content": [{"type": "text", "text": turn.text}], "token_ids": turn.token_ids,
                     "sampler_log_probs": turn.log_probs}
            rollouts.append(Rollout(prompt_id=f"p{g}", group=i, conversation=Conversation.from_messages(prompt + [reply])))
    return rollouts


def test_the_update_weighs_each_token_by_the_trainers_over_the_engines_probability():
    policy = _policy()
    rollouts = _sampled_by_the_engine(policy)  # the engine: the policy one step behind the trainer
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5] * 2)
    inputs = policy.batch([policy.encoder.encode(r.messages, add_generation_prompt=False) for r in rollouts])
    suppressed = policy.suppressed_token_ids
    # The trainer moves on by one step the engine never receives.
    log_probs, mask, _ = score_tokens(policy.model, inputs, suppressed_token_ids=suppressed)
    (-(log_probs * mask).sum() / mask.sum()).backward()
    with torch.no_grad():
        for parameter in policy.model.parameters():
            if parameter.grad is not None:
                parameter -= 0.05 * parameter.grad.sign()
                parameter.grad = None
    trainer = copy.deepcopy(policy.model)

    def step(rollout_is):
        model = copy.deepcopy(trainer)
        policy.model = model
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        rl = replace(resolve_config({}).rl, group_size=4, micro_batch_size=8, temperature=1.0, ppo_mini_batch_size=None,
                     max_grad_norm=1e9, rollout_engine="vllm", rollout_is=rollout_is, rollout_is_threshold=2.0)
        return model, _update(policy, TrainingEngine(policy), optimizer, rollouts, advantages, rl, None)

    corrected, metrics = step("token")

    # The same step by hand: w = min(exp(old − engine), 2) per sampled token, token-mean of −A·w·log p.
    twin = copy.deepcopy(trainer)
    with torch.no_grad():
        old, _, _ = score_tokens(twin, inputs, suppressed_token_ids=suppressed)
    on = mask.bool()
    engine_values = torch.tensor([value for r in rollouts for value in r.conversation.replies[0]["sampler_log_probs"]])
    assert on.sum() == engine_values.numel()
    by_hand = torch.zeros_like(old)
    by_hand[on] = torch.exp(old[on] - engine_values).clamp(max=2.0)
    assert (by_hand[on] - 1.0).abs().max() > 0.05  # the engine lags: the weights are far from 1
    twin_log_probs, _, _ = score_tokens(twin, inputs, suppressed_token_ids=suppressed)
    (-(advantages.unsqueeze(-1) * by_hand * twin_log_probs * mask).sum() / mask.sum()).backward()
    torch.optim.SGD(twin.parameters(), lr=0.5).step()
    for (name, trained), (_, expected) in zip(corrected.named_parameters(), twin.named_parameters()):
        torch.testing.assert_close(trained, expected, rtol=1e-5, atol=1e-6, msg=name)

    assert metrics["rollout_corr/sequences_uncorrected"] == 0.0
    assert metrics["rollout_corr/rollout_is_mean"] == pytest.approx(float(by_hand[on].mean()), rel=1e-5)
    assert metrics["rollout_corr/rollout_is_max"] == pytest.approx(float(by_hand[on].max()), rel=1e-5)
    assert metrics["rollout_corr/rollout_is_ratio_fraction_high"] == pytest.approx(float((torch.exp(old[on] - engine_values) > 2.0).double().mean()))

    # Without the correction the update is another step: the difference is what the weights do.
    uncorrected, plain_metrics = step("off")
    assert not any(key.startswith("rollout_corr/") for key in plain_metrics)
    assert max(float((a - b).detach().abs().max()) for a, b in zip(uncorrected.parameters(), corrected.parameters())) > 1e-4


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
