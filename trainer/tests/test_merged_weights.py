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
