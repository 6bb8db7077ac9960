"""policy.view: what the model reads of a conversation. The pure transformation, and that the
encoder applies it the same way when the policy samples and when it is trained."""
from PIL import Image

from vistool_trainer.config import PolicyConfig, PolicyViewConfig, from_dict
from vistool_trainer.model.context_view import EARLIER_IMAGE, ContextView, apply_view
from vistool_trainer.model.policy import Policy

CHART = {"type": "image", "ref": "chart"}
EDITED = {"type": "image", "ref": "edited"}
MESSAGES = [
    {"role": "system", "content": [{"type": "text", "text": "S"}]},
    {"role": "user", "content": [CHART, {"type": "text", "text": "Question: Q"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "<tool_call>{}</tool_call>"}]},
    {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION: masked."}, EDITED]},
]


def test_the_default_view_is_the_conversation_as_sent():
    assert apply_view(MESSAGES, ContextView()) is MESSAGES


def test_latest_images_keeps_the_newest_and_writes_a_marker_for_the_rest_without_touching_the_input():
    shown = apply_view(MESSAGES, ContextView(latest_images=1))
    assert shown[1]["content"] == [{"type": "text", "text": EARLIER_IMAGE}, {"type": "text", "text": "Question: Q"}]
    assert shown[3]["content"] == MESSAGES[3]["content"]
    assert MESSAGES[1]["content"][0] is CHART  # the env's messages are unchanged
    assert apply_view(MESSAGES, ContextView(latest_images=2)) == MESSAGES


def test_images_first_moves_a_messages_images_before_its_text():
    shown = apply_view(MESSAGES, ContextView(images_first=True))
    assert shown[3]["content"] == [EDITED, {"type": "text", "text": "OBSERVATION: masked."}]
    assert shown[1]["content"] == MESSAGES[1]["content"]  # already image first


def test_bad_settings_are_errors_naming_the_key():
    import pytest

    with pytest.raises(ValueError, match="policy.view.latest_images"):
        ContextView.from_config(from_dict(PolicyViewConfig, {"latest_images": 0}))


def test_each_turn_is_trained_in_the_context_it_was_sampled_in_when_the_view_drops_images():
    """The chart is visible when the tool call is written and gone when the answer is: each turn is
    its own training sequence, equal to what the policy read when it sampled that turn."""
    corpus = ["Question: Q", "<tool_call>{}</tool_call>", "OBSERVATION: masked.", EARLIER_IMAGE, "<answer>low</answer>"] * 20
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}, "view": {"latest_images": 1, "images_first": True}}), corpus, 1, "cpu")
    chart = {**CHART, "image": Image.new("RGB", (112, 112), "white")}
    edited = {**EDITED, "image": Image.new("RGB", (112, 112), "red")}
    first = [MESSAGES[0], {**MESSAGES[1], "content": [chart, MESSAGES[1]["content"][1]]}]
    call = {"role": "assistant", "content": [{"type": "text", "text": "<tool_call>{}</tool_call>"}]}
    second = first + [call, {**MESSAGES[3], "content": [MESSAGES[3]["content"][0], edited]}]
    answer = {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]}
    segments = policy.encoder.training_segments(second + [answer])
    assert len(segments) == 2
    for segment, context, turn in zip(segments, (first, second), ("<tool_call>{}</tool_call><|im_end|>", "<answer>low</answer><|im_end|>")):
        prompt = policy.encoder.encode(context, add_generation_prompt=True)
        assert segment.input_ids[: len(prompt.input_ids)] == prompt.input_ids
        assert sum(segment.loss_mask[: len(prompt.input_ids)]) == 0
        assert policy.processor.tokenizer.decode([t for t, m in zip(segment.input_ids, segment.loss_mask) if m]) == turn
    assert segments[0].image_keys == ["chart"] and segments[1].image_keys == ["edited"]
    # Without a view that drops images the conversation stays one sequence with both turns trained.
    plain = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), corpus, 1, "cpu")
    whole = plain.encoder.training_segments(second + [answer])
    assert len(whole) == 1 and whole[0].image_keys == ["chart", "edited"]


def test_sampling_and_training_encode_the_same_view():
    corpus = ["Question: Q", "<tool_call>{}</tool_call>", "OBSERVATION: masked.", EARLIER_IMAGE, "<answer>low</answer>"] * 20
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}, "view": {"latest_images": 1, "images_first": True}}), corpus, 1, "cpu")
    chart = {**CHART, "image": Image.new("RGB", (112, 112), "white")}
    edited = {**EDITED, "image": Image.new("RGB", (112, 112), "red")}
    conversation = [MESSAGES[0], {**MESSAGES[1], "content": [chart, MESSAGES[1]["content"][1]]}, MESSAGES[2],
                    {**MESSAGES[3], "content": [MESSAGES[3]["content"][0], edited]}]
    prompt = policy.encoder.encode(conversation, add_generation_prompt=True)
    trained = policy.encoder.encode(conversation + [{"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]}],
                                    add_generation_prompt=False)
    assert trained.input_ids[: len(prompt.input_ids)] == prompt.input_ids  # the rollout context is the training context
    assert prompt.image_keys == ["edited"]  # the chart is not read, only the newest image
    text = policy.processor.tokenizer.decode(prompt.input_ids)
    assert EARLIER_IMAGE in text and text.index("<|vision_start|>") < text.index("OBSERVATION")
