"""The weights a rollout engine is sent (model/merged_weights.py). Expected values come from the
model's own state_dict and from peft's merge_and_unload on a copy, not from the code under test."""
import copy

import pytest
import torch

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.merged_weights import merged_state_dict
from vistool_trainer.model.policy import Policy

CORPUS = ["Question: Q", "<tool_call>{}</tool_call>", "<answer>low</answer>"] * 20


def test_a_full_model_sends_every_state_dict_entry_including_the_tied_head():
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), CORPUS, 1, "cpu")
    sent = dict(merged_state_dict(policy.model))
    expected = policy.model.state_dict()
    assert sent.keys() == expected.keys()
    # Tied: named_parameters() lists the shared tensor once; the engine needs the head by name too.
    assert "lm_head.weight" in sent and "lm_head.weight" not in dict(policy.model.named_parameters())
    assert all(torch.equal(sent[name], expected[name]) for name in expected)


def test_a_lora_model_sends_its_base_with_each_adapter_folded_in_as_peft_merges_it():
    config = {"model": "micro", "micro": {"vocab_size": 300}, "lora": {"enabled": True, "r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}}
    policy = Policy.create(from_dict(PolicyConfig, config), CORPUS, 1, "cpu")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():  # LoRA B starts at zero (a no-op adapter): give it something to fold
        for name, parameter in policy.model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)
    before = {name: tensor.clone() for name, tensor in policy.model.state_dict().items()}
    sent = dict(merged_state_dict(policy.model))
    expected = copy.deepcopy(policy.model).merge_and_unload().state_dict()
    assert sent.keys() == expected.keys()
    assert not any("lora_" in name or "base_layer" in name for name in sent)
    for name in expected:
        assert torch.allclose(sent[name], expected[name], atol=1e-6), name
    folded = "model.language_model.layers.0.self_attn.q_proj.weight"
    base = before["base_model.model.model.language_model.layers.0.self_attn.q_proj.base_layer.weight"]
    assert (sent[folded] - base).abs().max() > 1e-3  # the adapter is in what is sent
    # The trained model is untouched (nothing merged in place).
    assert all(torch.equal(before[name], tensor) for name, tensor in policy.model.state_dict().items())


def test_a_layer_merged_in_place_is_refused_rather_than_sent_twice():
    config = {"model": "micro", "micro": {"vocab_size": 300}, "lora": {"enabled": True, "r": 4, "alpha": 8, "target_modules": ["q_proj"]}}
    policy = Policy.create(from_dict(PolicyConfig, config), CORPUS, 1, "cpu")
    policy.model.merge_adapter()
    with pytest.raises(ValueError, match="merged in place"):
        list(merged_state_dict(policy.model))


def test_the_folding_loss_is_the_share_of_the_adapters_update_a_bf16_engine_rounds_away():
    """Hand-worked: every adapted weight is 1.0, where bf16's spacing is 2^-7 (0.0078). An update of
    0.002 rounds back to 1.0 in bf16 (all of it lost); one of 0.5 is stored exactly (none lost).
    Half the rows of each adapted layer get each, so ‖lost‖ / ‖ΔW‖ = √(0.002² / (0.002² + 0.5²))."""
    from vistool_trainer.model.merged_weights import FoldingLoss

    config = {"model": "micro", "micro": {"vocab_size": 300}, "dtype": "bfloat16",
              "lora": {"enabled": True, "r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}}
    policy = Policy.create(from_dict(PolicyConfig, config), CORPUS, 1, "cpu")
    layers = [module for module in policy.model.modules() if hasattr(module, "lora_A") and "default" in module.lora_A]
    assert layers
    with torch.no_grad():
        for layer in layers:
            layer.get_base_layer().weight.fill_(1.0)
            a, b = layer.lora_A["default"].weight, layer.lora_B["default"].weight
            a.zero_()
            a[0, :] = 1.0
            b.zero_()
            # ΔW = (α/r)·B·A = 2·B[:, 0] on every column.
            rows = b.shape[0]
            b[: rows // 2, 0] = 0.001
            b[rows // 2:, 0] = 0.25
    small, large = 2 * torch.tensor(0.001, dtype=torch.float32).item(), 0.5
    for dtype, expected in ((torch.bfloat16, small / (small**2 + large**2) ** 0.5), (torch.float32, 0.0)):
        loss = FoldingLoss(dtype)
        list(merged_state_dict(policy.model, loss))
        assert loss.share_lost() == pytest.approx(expected, rel=1e-3, abs=1e-7), dtype
    # Whole-update cases: an update below half the spacing is lost entirely, and one that is a no-op
    # (B as LoRA initialises it) has no share to report.
    with torch.no_grad():
        for layer in layers:
            layer.lora_B["default"].weight[:, 0] = 0.001
    loss = FoldingLoss(torch.bfloat16)
    list(merged_state_dict(policy.model, loss))
    assert loss.share_lost() == pytest.approx(1.0, rel=1e-3)
    with torch.no_grad():
        for layer in layers:
            layer.lora_B["default"].weight.zero_()
    loss = FoldingLoss(torch.bfloat16)
    list(merged_state_dict(policy.model, loss))
    assert loss.share_lost() is None
