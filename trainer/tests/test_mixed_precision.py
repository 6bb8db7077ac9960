"""Mixed precision on one process (and each replica of a replicated run): a bf16 policy computes
in bf16 and the optimizer steps fp32 master weights (engines/master_weights.py).

- at lr 1e-6 one step moves every fp32 master weight, and the loss of a fixed batch goes down
  over ten steps; stepping the bf16 weights themselves moves ~2 % of them and the loss barely;
- gradients of several micro-batches accumulate in fp32 on the masters;
- a checkpoint keeps the masters: loading them gives back the exact fp32 weights, which the
  bf16 policy/ folder alone cannot.
"""
import copy

import pytest
import torch
from PIL import Image

from vistool_trainer.algorithms.micro_batches import MicroBatching
from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.engines.master_weights import MASTER_FILE
from vistool_trainer.engines.training_engine import TrainingEngine, half_precision_warning
from vistool_trainer.model.policy import Policy
from vistool_trainer.trainers.sft import sft_step

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>", "<answer>high</answer>"] * 20


def _policy(dtype: str) -> Policy:
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}, "dtype": dtype}), CORPUS, 1, "cpu")


def _batch(policy: Policy, count: int = 8):
    encoded = []
    for index in range(count):
        pixels = (torch.rand((56, 56, 3), generator=torch.Generator().manual_seed(index)) * 255).to(torch.uint8).numpy()
        messages = [{"role": "user", "content": [{"type": "image", "ref": f"c{index}", "image": Image.fromarray(pixels, "RGB")},
                                                 {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": ["<answer>low</answer>", "<answer>high</answer>"][index % 2]}]}]
        encoded.append(policy.encoder.encode(messages, add_generation_prompt=False))
    return encoded


def _train(master_weights: bool, steps: int = 10):
    policy = _policy("bfloat16")
    engine = TrainingEngine(policy, master_weights=master_weights)
    optimizer = engine.make_optimizer(1e-6, 0.0, 1.0)
    start = [tensor.detach().float().clone() for tensor in engine.trained_tensors()]
    engine.train_mode()
    encoded = _batch(policy)
    losses, moved_after_one = [], None
    for _ in range(steps):
        losses.append(sft_step(policy, optimizer, encoded, engine=engine))
        if moved_after_one is None:
            changed = sum(int((a != b.detach().float()).sum()) for a, b in zip(start, engine.trained_tensors()))
            moved_after_one = changed / sum(a.numel() for a in start)
    return engine, losses, moved_after_one


def test_a_bf16_run_at_lr_1e6_moves_the_fp32_weights_and_the_loss_goes_down():
    engine, losses, moved = _train(master_weights=True)
    assert engine.fp32_master_weights and {t.dtype for t in engine.trained_tensors()} == {torch.float32}
    assert {p.dtype for p in engine.policy.model.parameters()} == {torch.bfloat16}  # the model computes in bf16
    assert moved > 0.99, f"one step at lr 1e-6 moved {moved:.1%} of the fp32 weights"
    assert losses[-1] < losses[0] - 2e-3, losses
    assert half_precision_warning(engine, 1e-6) is None

    # The same run stepping the bf16 weights themselves: most updates round to nothing.
    plain, plain_losses, plain_moved = _train(master_weights=False)
    assert not plain.fp32_master_weights and plain_moved < 0.1
    assert plain_losses[0] - plain_losses[-1] < (losses[0] - losses[-1]) / 3
    assert half_precision_warning(plain, 1e-6) is not None


def test_micro_batches_accumulate_in_fp32_on_the_masters():
    policy = _policy("bfloat16")
    encoded = _batch(policy, 6)
    gradients = {}
    for name, split in (("whole", MicroBatching()), ("by two", MicroBatching(size=2)), ("by tokens", MicroBatching(max_tokens=60))):
        engine = TrainingEngine(copy.deepcopy(policy))
        optimizer = torch.optim.SGD(engine.trained_tensors(), lr=0.0)
        engine.train_mode()
        assert len(split.split([len(e.input_ids) for e in encoded])) >= (1 if name == "whole" else 3)
        sft_step(engine.policy, optimizer, encoded, engine=engine, micro_batching=split)
        assert all(p.grad is None for p in engine.policy.model.parameters()), "bf16 gradients are moved to the masters and freed"
        gradients[name] = torch.cat([m.grad.reshape(-1) for m in engine.masters.masters])
        assert gradients[name].dtype == torch.float32
    # The micro-batches' bf16 gradients differ from the whole batch's by bf16 rounding of each
    # part, not by anything systematic: the sums agree to a small fraction of the gradient's size.
    scale = gradients["whole"].abs().max()
    for name in ("by two", "by tokens"):
        assert (gradients[name] - gradients["whole"]).abs().max() < 0.02 * scale, name


def test_a_checkpoint_keeps_the_fp32_masters(tmp_path):
    engine, _, _ = _train(master_weights=True, steps=3)
    engine.save_master_weights(tmp_path)
    assert (tmp_path / MASTER_FILE).exists()
    saved = [m.detach().clone() for m in engine.masters.masters]

    # A run resumed from the bf16 weights alone starts from their rounding, not from the masters.
    resumed = TrainingEngine(copy.deepcopy(engine.policy))
    rounded = [m.detach().clone() for m in resumed.masters.masters]
    assert any(not torch.equal(a, b) for a, b in zip(saved, rounded))
    assert resumed.load_master_weights(tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(saved, resumed.masters.masters))
    assert TrainingEngine(_policy("float32")).load_master_weights(tmp_path) is False  # fp32 runs have none to load


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(2)
