"""Half-precision weights stepped by AdamW at RL learning rates do not move: the trainer says so
before it trains, and not where fp32 weights or fp32 master weights take the step (every engine
now trains fp32 masters of a half-precision policy; `master_weights=False` is the old way)."""
import torch

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.policy import Policy
from vistool_trainer.engines.training_engine import TrainingEngine, half_precision_warning


def _policy(dtype: str, lora: bool = False) -> Policy:
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}, "dtype": dtype, "lora": {"enabled": lora}}),
                         ["a b c tool answer"] * 5, seed=1, device_name="cpu")


def test_a_bf16_step_at_an_rl_learning_rate_rounds_to_nothing_and_the_trainer_warns():
    weights = torch.full((1000,), 0.02, dtype=torch.bfloat16)
    assert torch.equal(weights + 1e-6, weights)  # what the warning is about: the update is below bf16's spacing at 0.02
    assert not torch.equal(weights.float() + 1e-6, weights.float())

    message = half_precision_warning(TrainingEngine(_policy("bfloat16"), master_weights=False), 1e-6)
    assert message is not None and "bfloat16 weights at lr 1e-06" in message and "fsdp" in message and "float32" in message
    assert half_precision_warning(TrainingEngine(_policy("bfloat16"), master_weights=False), 1e-3) is None  # large steps do register
    assert half_precision_warning(TrainingEngine(_policy("bfloat16")), 1e-6) is None  # the default: fp32 masters
    assert half_precision_warning(TrainingEngine(_policy("float32")), 1e-6) is None


def test_engines_with_fp32_master_weights_and_fp32_adapters_are_not_warned_about():
    class MasterWeights(TrainingEngine):
        fp32_master_weights = True

    assert half_precision_warning(MasterWeights(_policy("bfloat16")), 1e-6) is None
    adapters = _policy("bfloat16", lora=True)
    assert {p.dtype for p in adapters.model.parameters() if p.requires_grad} == {torch.float32}  # peft keeps adapters in fp32
    assert half_precision_warning(TrainingEngine(adapters), 1e-6) is None
