import json

import torch
from PIL import Image

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.chat_template import pieces_as_text, render_pieces
from vistool_trainer.model.micro_model import MicroSize, build_micro_policy, parameter_count
from vistool_trainer.model.policy import Policy
from vistool_trainer.run.run_config import ConfigError, resolve_config, resolved_schema
import pytest

CORPUS = ["Question: Wins of Ajax?", '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Team", "Wins"]}}</tool_call>',
          "<answer>7</answer>", "OBSERVATION: masked. The edited image follows."] * 20


def test_same_corpus_and_seed_build_identical_tokenizer_and_weights():
    model_a, processor_a = build_micro_policy(CORPUS, MicroSize(), seed=5)
    model_b, processor_b = build_micro_policy(CORPUS, MicroSize(), seed=5)
    model_c, _ = build_micro_policy(CORPUS, MicroSize(), seed=6)
    assert processor_a.tokenizer.get_vocab() == processor_b.tokenizer.get_vocab()
    state_a, state_b, state_c = model_a.state_dict(), model_b.state_dict(), model_c.state_dict()
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    assert not all(torch.equal(state_a[k], state_c[k]) for k in state_a)


def test_micro_model_is_the_real_architecture_at_reference_size():
    model, processor = build_micro_policy(CORPUS, MicroSize(), seed=1)
    assert type(model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    assert model.config.text_config.hidden_size == 128 and model.config.vision_config.depth == 2
    assert 0.3e6 < parameter_count(model) < 1.0e6
    for token in ("<|im_start|>", "<|vision_start|>", "<|image_pad|>", "<tool_call>"):
        assert len(processor.tokenizer.tokenize(token)) == 1, token


def test_saved_micro_policy_loads_back_with_transformers_auto_classes(tmp_path):
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro"}), CORPUS, 1, "cpu")
    policy.save(tmp_path / "p")
    loaded = Policy.load(tmp_path / "p", "cpu")
    a, b = policy.model.state_dict(), loaded.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_python_rendering_matches_the_jinja_template_including_images_in_tool_turns():
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro"}), CORPUS, 1, "cpu")
    image = {"type": "image", "ref": "r"}
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": [image, {"type": "text", "text": "Q"}]},
                {"role": "assistant", "content": "<tool_call>{}</tool_call>"},
                {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION"}, image]},
                {"role": "tool", "content": [{"type": "text", "text": "second"}]}]
    jinja = policy.processor.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert jinja == pieces_as_text(render_pieces(messages, True))
    assert jinja.count("<|image_pad|>") == 2


def test_encoding_masks_observations_and_marks_image_tokens_for_mrope():
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro"}), CORPUS, 1, "cpu")
    image = {"type": "image", "ref": "r", "image": Image.new("RGB", (224, 112), "white")}
    messages = [{"role": "user", "content": [image, {"type": "text", "text": "Q"}]},
                {"role": "assistant", "content": "<answer>7</answer>"}]
    encoded = policy.encoder.encode(messages, add_generation_prompt=False)
    inputs = policy.batch([encoded])
    image_tokens = int((inputs["input_ids"] == policy.processor.image_token_id).sum())
    assert image_tokens == 32  # 224x112 → 8x16 patches of 14 → 32 after 2x2 merge
    assert int(inputs["mm_token_type_ids"].sum()) == image_tokens
    trained = [t for t, m in zip(encoded.input_ids, encoded.loss_mask) if m]
    assert policy.processor.tokenizer.decode(trained) == "<answer>7</answer><|im_end|>"


def test_every_schema_key_has_a_description_and_a_default():
    def walk(node, where):
        for key, sub in node.get("properties", {}).items():
            assert "description" in sub and "default" in sub, f"{where}.{key}"
            if sub.get("type") == "object":
                assert sub.get("additionalProperties") is False, f"{where}.{key}"
                walk(sub, f"{where}.{key}")
    schema = resolved_schema()  # the rewards section ($ref to env/rewards/config.schema.json) inlined
    assert schema["additionalProperties"] is False
    assert "judge" in schema["properties"]["rewards"]["properties"]
    walk(schema, "")


def test_unknown_config_keys_are_errors_naming_the_key():
    with pytest.raises(ConfigError, match="clip_hihg"):
        resolve_config({"rl": {"clip_hihg": 0.3}})


def test_example_configs_validate():
    from vistool_trainer.checkout import repo_root
    examples = sorted((repo_root() / "examples").glob("*.vistool.json"))
    assert examples
    for path in examples:
        resolve_config(json.loads(path.read_text()))


def test_sampling_never_writes_vision_placeholders_or_turn_openers():
    torch.manual_seed(0)
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro"}), CORPUS, 1, "cpu")
    image = {"type": "image", "ref": "r", "image": Image.new("RGB", (224, 112), "white")}
    conversations = [[{"role": "user", "content": [image, {"type": "text", "text": "Q"}]}]] * 8
    turns = policy.sample_turns(conversations, max_new_tokens=64, temperature=3.0, greedy=False)
    forbidden = set(policy.processor.control_token_ids)
    assert len(forbidden) == 7
    assert not any(token in forbidden for turn in turns for token in turn.token_ids)


def test_scoring_only_trained_positions_with_shared_images_equals_the_full_forward():
    from vistool_trainer.model.conversation_encoding import expand_images

    torch.manual_seed(0)
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro"}), CORPUS, 1, "cpu")
    chart = {"type": "image", "ref": "chart", "image": Image.effect_noise((224, 112), 60).convert("RGB")}
    edited = {"type": "image", "ref": "edited", "image": Image.effect_noise((112, 112), 90).convert("RGB")}
    call = {"role": "assistant", "content": '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Team"]}}</tool_call>'}
    conversations = [
        [{"role": "user", "content": [chart, {"type": "text", "text": "Q"}]}, call,
         {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION"}, edited]}, {"role": "assistant", "content": "<answer>7</answer>"}],
        [{"role": "user", "content": [chart, {"type": "text", "text": "Q"}]}, {"role": "assistant", "content": "<answer>8</answer>"}],
    ]
    inputs = policy.batch([policy.encoder.encode(m, add_generation_prompt=False) for m in conversations])
    assert inputs["image_index"].tolist() == [0, 1, 0]  # the chart's pixels are in the batch once
    log_probs, mask, entropy = policy.token_scores(inputs, with_entropy=True)

    plain = expand_images(inputs)
    logits = policy.model(**plain, use_cache=False).logits[:, :-1].float()
    full = torch.log_softmax(logits, -1)
    expected = full.gather(-1, inputs["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    expected_entropy = -(full.exp() * full).sum(-1)
    on = mask.bool()
    torch.testing.assert_close(log_probs[on], expected[on], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(entropy[on], expected_entropy[on], rtol=1e-5, atol=1e-5)
    assert torch.all(log_probs[~on] == 0)
    # gradients reach the vision tower through the shared image
    (-log_probs.sum()).backward()
    assert policy.model.model.visual.patch_embed.proj.weight.grad.abs().sum() > 0
