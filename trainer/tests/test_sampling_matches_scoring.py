"""Rollouts are scored under the distribution that sampled them (docs/ALGORITHMS.md, "Sampling
matches scoring"), on a non-confident model (fresh weights, noised LoRA adapters: a trained,
confident model puts ~all mass on one token and hides the difference).

- The checkpoint's generation_config carries what Qwen's Instruct checkpoints ship
  (repetition_penalty 1.05, top_k, top_p, temperature, plus an n-gram block): none of it reaches
  the sampler, whose own per-token log-probabilities equal the trainer's scores to 1e-5 in fp32.
- With LoRA dropout, the RL update's first mini-batch has an importance ratio of 1 to 1e-5 (the
  old log-probs and the update's forward both run without dropout).
"""
import copy
from dataclasses import replace

import pytest
import torch
from lora_updates import give_adapters_an_update
from PIL import Image

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.engines.training_engine import TrainingEngine
from vistool_trainer.model.policy import Policy, score_tokens
from vistool_trainer.model.sampling import SamplingFields
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.rollouts.rollout import Rollout
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.trainers import grpo

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>", "<answer>high</answer>",
          '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["D"]}}</tool_call>'] * 20
# Qwen2.5-VL-3B-Instruct's generation_config.json sampling fields, and an n-gram block on top.
QWEN_INSTRUCT_DEFAULTS = {"repetition_penalty": 1.05, "top_k": 1, "top_p": 0.001, "temperature": 0.1, "no_repeat_ngram_size": 2,
                          "do_sample": True}


def _policy(lora: bool = False, dropout: float = 0.05) -> Policy:
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400},
                                                    "lora": {"enabled": lora, "dropout": dropout, "r": 8}}), CORPUS, 3, "cpu")
    core = policy.model.get_base_model() if lora else policy.model
    for key, value in QWEN_INSTRUCT_DEFAULTS.items():
        setattr(core.generation_config, key, value)
    if lora:
        # peft starts B at zero, where dropout on the adapter path changes nothing: noise it.
        give_adapters_an_update(policy.model, 0.5)
    return policy


def _prompt(index: int) -> list[dict]:
    pixels = torch.Generator().manual_seed(index)
    noise = (torch.rand((56, 112, 3), generator=pixels) * 255).to(torch.uint8).numpy()
    image = {"type": "image", "ref": f"chart-{index}", "image": Image.fromarray(noise, "RGB")}
    return [{"role": "user", "content": [image, {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]}]


def _scored_turns(policy: Policy, prompts: list[list[dict]], turns, temperature: float) -> list[list[float]]:
    """The trainer's log-probs of each sampled turn's tokens, as RL computes them."""
    conversations = [prompt + [{"role": "assistant", "content": [{"type": "text", "text": turn.text}], "token_ids": turn.token_ids}]
                     for prompt, turn in zip(prompts, turns)]
    inputs = policy.batch([policy.encoder.encode(c, add_generation_prompt=False) for c in conversations])
    with torch.no_grad():
        log_probs, mask, _ = score_tokens(policy.model.eval(), inputs, temperature=temperature,
                                          suppressed_token_ids=policy.processor.control_token_ids)
    return [row[on.bool()].tolist() for row, on in zip(log_probs, mask)]


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_the_sampler_draws_from_the_distribution_the_trainer_scores_whatever_the_checkpoint_says(temperature):
    policy = _policy()
    prompts = [_prompt(i) for i in range(6)]
    torch.manual_seed(1)
    turns = policy.sample_turns(prompts, max_new_tokens=24, temperature=temperature, greedy=False, with_log_probs=True)
    scored = _scored_turns(policy, prompts, turns, temperature)
    repeats = 0
    for turn, trainer in zip(turns, scored):
        assert len(trainer) == len(turn.token_ids) == len(turn.log_probs)
        torch.testing.assert_close(torch.tensor(turn.log_probs), torch.tensor(trainer), rtol=0, atol=1e-5)
        repeats += len(turn.token_ids) - len(set(turn.token_ids))
    # A fresh model repeats tokens: where the penalty or the n-gram block had leaked in, the scores
    # of those tokens would differ (and top_k 1 would make every log-prob 0).
    assert repeats > 0
    assert policy.model.generation_config.repetition_penalty == 1.05  # the checkpoint's config is left as it was


def test_sampling_fields_cover_every_field_that_shapes_the_distribution():
    fields = SamplingFields(max_new_tokens=8, temperature=0.7, stop_token_ids=(5,), suppressed_token_ids=(1, 2))
    config = fields.generation_config()
    assert (config.temperature, config.top_k, config.top_p, config.repetition_penalty, config.no_repeat_ngram_size) == (0.7, 0, 1.0, 1.0, 0)
    assert config.do_sample and config.num_beams == 1 and config.suppress_tokens == [1, 2] and fields.plain_softmax
    assert not SamplingFields(max_new_tokens=8, repetition_penalty=1.05).plain_softmax
    with pytest.raises(ValueError, match="temperature"):
        SamplingFields(max_new_tokens=8, temperature=0.0)
    greedy = SamplingFields(max_new_tokens=8, greedy=True).generation_config()
    assert not greedy.do_sample and greedy.temperature is None


def test_with_lora_dropout_the_first_mini_batch_is_on_policy(monkeypatch):
    policy = _policy(lora=True, dropout=0.3)
    assert any(isinstance(m, torch.nn.Dropout) and m.p == 0.3 for m in policy.model.modules())
    rollouts = []
    torch.manual_seed(2)
    for group in range(2):
        prompt = _prompt(10 + group)
        for i, turn in enumerate(policy.sample_turns([prompt] * 4, max_new_tokens=12, temperature=1.0, greedy=False)):
            messages = prompt + [{"role": "assistant", "content": [{"type": "text", "text": turn.text}], "token_ids": turn.token_ids}]
            rollouts.append(Rollout(prompt_id=f"p{group}", group=i, conversation=Conversation.from_messages(messages)))
    ratios: list[torch.Tensor] = []
    real_loss = grpo.clipped_policy_loss

    def recording_loss(log_probs, old_log_probs, advantages, mask, *args, **kwargs):
        # A spy, not a stand-in: it records the ratio the real loss sees and calls it.
        ratios.append(torch.exp(log_probs.detach() - old_log_probs)[mask.bool()])
        return real_loss(log_probs, old_log_probs, advantages, mask, *args, **kwargs)

    monkeypatch.setattr(grpo, "clipped_policy_loss", recording_loss)
    rl = replace(resolve_config({}).rl, group_size=4, micro_batch_size=8, ppo_mini_batch_size=1, lr=1e-2)
    engine = TrainingEngine(policy)
    optimizer = engine.make_optimizer(rl.lr, 0.0, rl.max_grad_norm)
    engine.train_mode()  # as the SFT stage leaves it: dropout on
    before = copy.deepcopy(policy.model.state_dict())
    metrics = grpo._update(policy, engine, optimizer, rollouts, torch.tensor([1.0, -1.0, 0.5, -0.5] * 2), rl, None)
    assert metrics["actor/optimizer_steps"] == 2
    first, second = ratios
    assert first.numel() > 0 and (first - 1).abs().max() < 1e-5
    assert (second - 1).abs().max() > 1e-4  # after one optimizer step the policy has moved: the check can tell
    assert any(not torch.equal(before[k], v) for k, v in policy.model.state_dict().items() if "lora_" in k)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
