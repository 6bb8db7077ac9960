"""The RL update with veRL's mini-batches and epochs, on the real micro policy and real sampled
turns (no env server: rewards are given, the update is what is under test).

- one mini-batch, one epoch: the ratio is 1, nothing clips, and the step equals a REINFORCE step
  with group advantages computed here independently (autograd on −A·log p, token mean);
- four mini-batches and two epochs: eight optimizer steps, the ratio leaves 1, tokens clip;
- the training logits are divided by the sampling temperature.
"""
import copy
from dataclasses import replace

import pytest
import torch
from PIL import Image

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.conversation_encoding import expand_images
from vistool_trainer.trainers.grpo import _update
from vistool_trainer.model.policy import Policy, score_tokens
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.rollouts.rollout import Rollout
from vistool_trainer.run.run_config import resolve_config

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>", "<answer>high</answer>",
          '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["D"]}}</tool_call>'] * 20


def _rollouts(policy, groups=4, group_size=4, seed=0):
    torch.manual_seed(seed)
    rollouts = []
    for g in range(groups):
        image = {"type": "image", "ref": f"chart-{g}", "image": Image.effect_noise((112, 112), 40 + 10 * g).convert("RGB")}
        prompt = [{"role": "user", "content": [image, {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]}]
        turns = policy.sample_turns([prompt] * group_size, max_new_tokens=8, temperature=1.0, greedy=False)
        for i, turn in enumerate(turns):
            messages = prompt + [{"role": "assistant", "content": [{"type": "text", "text": turn.text}], "token_ids": turn.token_ids}]
            rollouts.append(Rollout(prompt_id=f"p{g}", group=i, conversation=Conversation.from_messages(messages)))
    return rollouts


def _rl(**overrides):
    return replace(resolve_config({}).rl, **{"group_size": 4, "micro_batch_size": 8, "lr": 1e-3, "temperature": 1.0, **overrides})


def _policy():
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), CORPUS, 3, "cpu")


def test_one_mini_batch_is_on_policy_and_equals_a_reinforce_step():
    policy = _policy()
    rollouts = _rollouts(policy)
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5] * 4)
    twin = copy.deepcopy(policy.model)
    _start = copy.deepcopy(policy.model)
    # Plain SGD, so the comparison is of the gradients themselves (Adam's first step is lr·sign(g),
    # which would amplify rounding in near-zero gradients into opposite moves).
    optimizer = torch.optim.SGD(policy.model.parameters(), lr=0.5)
    metrics = _update(policy, _engine(policy), optimizer, rollouts, advantages, _rl(ppo_mini_batch_size=None, max_grad_norm=1e9), None)
    assert metrics["actor/optimizer_steps"] == 1
    assert metrics["actor/pg_clipfrac"] == 0.0 and abs(metrics["actor/ppo_kl"]) < 1e-7

    # The same step computed independently: token-mean of −A·log p over every response token, p
    # the distribution the turns were sampled from (the control tokens the sampler suppresses removed).
    twin_optimizer = torch.optim.SGD(twin.parameters(), lr=0.5)
    inputs = policy.batch([policy.encoder.encode(r.messages, add_generation_prompt=False) for r in rollouts])
    log_probs, mask, _ = score_tokens(twin, inputs, suppressed_token_ids=policy.processor.control_token_ids)
    loss = -(advantages.unsqueeze(-1) * log_probs * mask).sum() / mask.sum()
    loss.backward()
    twin_optimizer.step()
    moved = 0
    for (name, trained), (_, expected), before in zip(policy.model.named_parameters(), twin.named_parameters(), _start.parameters()):
        torch.testing.assert_close(trained, expected, rtol=1e-5, atol=1e-6, msg=name)
        moved += int(not torch.equal(trained, before))
    assert moved > 0


def test_several_mini_batches_and_epochs_step_off_policy_and_clip():
    policy = _policy()
    rollouts = _rollouts(policy)
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5] * 4)
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=3e-2, weight_decay=0.0)
    metrics = _update(policy, _engine(policy), optimizer, rollouts, advantages,
                      _rl(ppo_mini_batch_size=1, ppo_epochs=2, clip_ratio_low=0.1, clip_ratio_high=0.2, clip_ratio_c=3.0), None)
    assert metrics["actor/optimizer_steps"] == 8  # 4 groups, one prompt per mini-batch, two passes
    assert metrics["actor/pg_clipfrac"] > 0  # after the first step the ratio leaves [1 − ε_low, 1 + ε_high]
    assert metrics["actor/ppo_kl"] != 0.0


def test_training_scores_divide_the_logits_by_the_sampling_temperature():
    policy = _policy()
    rollouts = _rollouts(policy, groups=1)
    inputs = policy.batch([policy.encoder.encode(r.messages, add_generation_prompt=False) for r in rollouts])
    log_probs, mask, _ = score_tokens(policy.model, inputs, temperature=0.7)
    logits = policy.model(**expand_images(inputs), use_cache=False).logits[:, :-1].float() / 0.7
    expected = torch.log_softmax(logits, -1).gather(-1, inputs["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    on = mask.bool()
    torch.testing.assert_close(log_probs[on], expected[on], rtol=1e-5, atol=1e-5)
    plain, _, _ = score_tokens(policy.model, inputs)
    assert not torch.allclose(plain[on], log_probs[on])


def _engine(policy):
    from vistool_trainer.engines.training_engine import TrainingEngine

    return TrainingEngine(policy)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
