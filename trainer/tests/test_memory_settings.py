"""What keeps a real model's step in memory: micro-batches by count or by a padded-token budget
(veRL's use_dynamic_bsz / ppo_max_token_len_per_gpu), and gradient checkpointing.

- the token-budget packing covers every sequence once, keeps each micro-batch within the budget
  (a longer sequence alone), and uses as few micro-batches as an exhaustive search finds;
- cutting a step into micro-batches changes nothing but rounding: SFT and the RL update give the
  weights one pass gives (fp32, 1e-5);
- gradient checkpointing keeps less than half the activation bytes for backward (measured with
  autograd's saved-tensor hooks) and leaves the gradients as they were; it is on by default for
  every model but micro;
- the new run-config keys are validated like every other.
"""
import copy
import itertools
import random
from dataclasses import replace

import pytest
import torch
from PIL import Image

from vistool_trainer.algorithms.micro_batches import MicroBatching, by_count, by_padded_tokens, padded_tokens
from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.engines.training_engine import TrainingEngine
from vistool_trainer.model.policy import Policy, gradient_checkpointing_wanted
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.rollouts.rollout import Rollout
from vistool_trainer.run.run_config import ConfigError, resolve_config
from vistool_trainer.trainers.grpo import _update
from vistool_trainer.trainers.sft import sft_micro_batching, sft_step

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>", "<answer>high</answer>",
          '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["D"]}}</tool_call>'] * 20


def _fewest_micro_batches(lengths: list[int], budget: int) -> int:
    """Exhaustive: the fewest groups into which the indices split with rows × longest ≤ budget
    (a group of one always allowed)."""
    n = len(lengths)
    best = n
    for labels in itertools.product(range(n), repeat=n):
        if max(labels) + 1 >= best or any(labels[i] > max(labels[:i], default=-1) + 1 for i in range(n)):
            continue  # only canonical labellings, and only ones that could beat the best so far
        groups = [[lengths[i] for i in range(n) if labels[i] == g] for g in range(max(labels) + 1)]
        if all(len(g) == 1 or len(g) * max(g) <= budget for g in groups):
            best = max(labels) + 1
    return best


def test_token_budget_packing_covers_everything_within_budget_with_the_fewest_micro_batches():
    chooser = random.Random(5)
    for _ in range(60):
        lengths = [chooser.randint(1, 40) for _ in range(chooser.randint(1, 6))]
        budget = chooser.randint(10, 90)
        batches = by_padded_tokens(lengths, budget)
        assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
        for batch, cost in zip(batches, padded_tokens(lengths, batches)):
            assert len(batch) == 1 or cost <= budget, (lengths, budget, batches)
        assert len(batches) == _fewest_micro_batches(lengths, budget), (lengths, budget, batches)
    assert by_padded_tokens([100, 5], 50) == [[0], [1]]  # too long for the budget: alone
    assert by_count(5, 2) == [[0, 1], [2, 3], [4]] and by_count(3, None) == [[0, 1, 2]] and by_count(0, 4) == []
    with pytest.raises(ValueError):
        MicroBatching(max_tokens=0)


def _policy(vocab: int = 400) -> Policy:
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": vocab}}), CORPUS, 3, "cpu")


def _image(index: int) -> dict:
    pixels = (torch.rand((56, 56 + 28 * (index % 3), 3), generator=torch.Generator().manual_seed(index)) * 255).to(torch.uint8).numpy()
    return {"type": "image", "ref": f"chart-{index}", "image": Image.fromarray(pixels, "RGB")}


def _gold(policy: Policy, count: int) -> list:
    """Conversations of different lengths (answers of different lengths, images of different sizes)."""
    encoded = []
    for index in range(count):
        answer = "<answer>low</answer>" * (1 + index % 3)
        messages = [{"role": "user", "content": [_image(index), {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": answer}]}]
        encoded.append(policy.encoder.encode(messages, add_generation_prompt=False))
    return encoded


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    for (name, x), (_, y) in zip(a.named_parameters(), b.named_parameters()):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6, msg=name)


def test_sft_in_micro_batches_takes_the_step_one_pass_takes():
    policy = _policy()
    encoded = _gold(policy, 7)
    lengths = [len(e.input_ids) for e in encoded]
    budget = 2 * max(lengths)
    splits = {"one pass": MicroBatching(), "by two": MicroBatching(size=2), "by tokens": MicroBatching(max_tokens=budget)}
    assert len(splits["by tokens"].split(lengths)) >= 3
    results = {}
    for name, split in splits.items():
        twin = copy.deepcopy(policy)
        engine = TrainingEngine(twin)
        optimizer = torch.optim.SGD(engine.trained_tensors(), lr=0.5)
        engine.train_mode()
        loss = sft_step(twin, optimizer, encoded, engine=engine, micro_batching=split)
        results[name] = (loss, twin.model)
    for name in ("by two", "by tokens"):
        assert abs(results[name][0] - results["one pass"][0]) < 1e-5
        _same_weights(results[name][1], results["one pass"][1])
    config = resolve_config({"sft": {"use_dynamic_bsz": True, "max_token_len_per_gpu": 512}}).sft
    assert sft_micro_batching(config) == MicroBatching(max_tokens=512)
    assert sft_micro_batching(resolve_config({"sft": {"micro_batch_size": 4}}).sft) == MicroBatching(size=4)


def _rollouts(policy: Policy) -> list[Rollout]:
    torch.manual_seed(4)
    rollouts = []
    for group in range(3):
        prompt = [{"role": "user", "content": [_image(group), {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]}]
        for i, turn in enumerate(policy.sample_turns([prompt] * 4, max_new_tokens=6 + 5 * group, temperature=1.0, greedy=False)):
            messages = prompt + [{"role": "assistant", "content": [{"type": "text", "text": turn.text}], "token_ids": turn.token_ids}]
            rollouts.append(Rollout(prompt_id=f"p{group}", group=i, conversation=Conversation.from_messages(messages)))
    return rollouts


def test_the_rl_update_by_token_budget_equals_the_update_by_count():
    policy = _policy()
    rollouts = _rollouts(policy)
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5] * 3)
    base = replace(resolve_config({}).rl, group_size=4, lr=0.5, max_grad_norm=1e9, ppo_mini_batch_size=None)
    outcomes = {}
    for name, rl in {"one micro-batch": replace(base, micro_batch_size=64),
                     "by tokens": replace(base, use_dynamic_bsz=True, ppo_max_token_len_per_gpu=120)}.items():
        twin = copy.deepcopy(policy)
        engine = TrainingEngine(twin)
        metrics = _update(twin, engine, torch.optim.SGD(engine.trained_tensors(), lr=0.5), copy.deepcopy(rollouts), advantages, rl, None)
        outcomes[name] = (metrics, twin.model)
    lengths = [len(s.input_ids) for r in rollouts for s in policy.encoder.training_segments(r.conversation)]
    assert len(by_padded_tokens(lengths, 120)) >= 4  # the budget really cuts the batch
    a, b = outcomes["one micro-batch"][0], outcomes["by tokens"][0]
    assert abs(a["actor/loss"] - b["actor/loss"]) < 1e-6 and abs(a["actor/grad_norm"] - b["actor/grad_norm"]) < 1e-5
    _same_weights(outcomes["one micro-batch"][1], outcomes["by tokens"][1])


def test_gradient_checkpointing_keeps_fewer_activations_and_the_same_gradients():
    policy = _policy()
    encoded = _gold(policy, 4)
    gradients, saved = {}, {}
    for enabled in (False, True):
        twin = copy.deepcopy(policy)
        twin.set_gradient_checkpointing(enabled)
        assert twin.gradient_checkpointing is enabled
        engine = TrainingEngine(twin)
        engine.train_mode(dropout=False)  # the RL update's mode: checkpointing must still act in it
        held = [0]

        def pack(tensor: torch.Tensor) -> torch.Tensor:  # what autograd keeps for backward, in bytes
            held[0] += tensor.numel() * tensor.element_size()
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            log_probs, mask, _ = engine.score(twin.batch(encoded))
        (-(log_probs * mask).sum() / mask.sum()).backward()
        saved[enabled] = held[0]
        gradients[enabled] = torch.cat([p.grad.reshape(-1) for p in twin.model.parameters() if p.grad is not None])
    assert saved[True] < saved[False] / 2, saved  # the layers' intermediates are recomputed, not kept
    torch.testing.assert_close(gradients[True], gradients[False], rtol=1e-5, atol=1e-7)


def test_scoring_in_slices_of_positions_gives_the_unsliced_scores_and_gradients(monkeypatch):
    from vistool_trainer.model import policy as policy_module
    from vistool_trainer.model.policy import score_tokens

    policy = _policy()
    inputs = policy.batch(_gold(policy, 4))
    suppressed = policy.processor.control_token_ids
    results = {}
    for name, elements in (("whole", policy_module.SCORING_CHUNK_ELEMENTS), ("slices of 7", 7 * policy.model.lm_head.out_features)):
        monkeypatch.setattr(policy_module, "SCORING_CHUNK_ELEMENTS", elements)
        model = copy.deepcopy(policy.model)
        log_probs, mask, entropy = score_tokens(model, inputs, with_entropy=True, temperature=0.7, suppressed_token_ids=suppressed)
        assert entropy is not None and not entropy.requires_grad  # logged only: no graph kept for it
        (-(log_probs * mask).sum()).backward()
        results[name] = (log_probs.detach(), entropy, torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None]))
    assert int(mask.sum()) > 7 * 3  # the sliced run really used several slices
    (log_probs_whole, entropy_whole, grad_whole), (log_probs_sliced, entropy_sliced, grad_sliced) = results["whole"], results["slices of 7"]
    torch.testing.assert_close(log_probs_sliced, log_probs_whole, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(entropy_sliced, entropy_whole, rtol=1e-6, atol=1e-6)
    # The LM head's weight gradient is summed slice by slice instead of in one product: rounding.
    torch.testing.assert_close(grad_sliced, grad_whole, rtol=1e-5, atol=1e-5)


def test_gradient_checkpointing_is_on_by_default_for_every_model_but_micro():
    assert gradient_checkpointing_wanted(from_dict(PolicyConfig, {"model": "micro"})) is False
    assert gradient_checkpointing_wanted(from_dict(PolicyConfig, {"model": "Qwen/Qwen2.5-VL-3B-Instruct"})) is True
    assert gradient_checkpointing_wanted(from_dict(PolicyConfig, {"model": "micro", "gradient_checkpointing": True})) is True
    assert gradient_checkpointing_wanted(from_dict(PolicyConfig, {"model": "/models/x", "gradient_checkpointing": False})) is False
    assert _policy().gradient_checkpointing is False


@pytest.mark.parametrize("section,key,value", [
    ("rl", "ppo_max_token_len_per_gpu", 0), ("rl", "use_dynamic_bsz", "yes"), ("sft", "micro_batch_size", 0),
    ("sft", "max_token_len_per_gpu", -5), ("sft", "use_dynamic_bsz", 1), ("policy", "gradient_checkpointing", "auto"),
])
def test_the_memory_keys_are_validated_like_every_other(section, key, value):
    with pytest.raises(ConfigError, match=key):
        resolve_config({section: {key: value}})
    defaults = resolve_config({})
    assert (defaults.rl.use_dynamic_bsz, defaults.rl.ppo_max_token_len_per_gpu) == (False, 16384)
    assert (defaults.sft.micro_batch_size, defaults.sft.use_dynamic_bsz, defaults.policy.gradient_checkpointing) == (None, False, None)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
