"""The prompt a vLLM engine is given (rollouts/vllm_prompt.py): the encoder's ids with each image's
pad run collapsed to one pad, and the images of the presented prompt in order (the env server's
view has already left out the images it hides). The engine side
(vLLM expanding them back to the encoder's ids) is tests/vllm_suite/test_vllm_parity.py."""
import pytest
from PIL import Image

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.vllm_prompt import collapse_image_runs, vllm_prompt

CORPUS = ["Question: Q", "<tool_call>{}</tool_call>", "OBSERVATION: masked.", "(earlier image)", "<answer>low</answer>"] * 20


def conversation(chart: Image.Image, edited: Image.Image, chart_hidden: bool) -> list[dict]:
    first = {"type": "text", "text": "(earlier image)"} if chart_hidden else {"type": "image", "ref": "chart", "image": chart}
    return [{"role": "user", "content": [first, {"type": "text", "text": "Question: Q"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "<tool_call>{}</tool_call>"}]},
            {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION: masked."}, {"type": "image", "ref": "edited", "image": edited}]}]


def test_collapse_keeps_one_pad_per_run_and_counts_the_runs():
    assert collapse_image_runs([1, 9, 9, 9, 2, 9, 3, 9, 9], 9) == ([1, 9, 2, 9, 3, 9], 3)
    assert collapse_image_runs([1, 2, 3], 9) == ([1, 2, 3], 0)


@pytest.mark.parametrize("chart_hidden", [False, True])
def test_the_prompt_is_the_encoders_with_runs_collapsed_and_the_images_the_prompt_holds(chart_hidden):
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), CORPUS, 1, "cpu")
    chart, edited = Image.new("RGB", (224, 112), "white"), Image.new("RGB", (112, 112), "red")
    messages = conversation(chart, edited, chart_hidden)
    prompt = vllm_prompt(policy.encoder, messages)
    pad = policy.processor.image_token_id
    expected = policy.encoder.encode(messages, add_generation_prompt=True).input_ids
    assert prompt.expected_ids == expected
    # 224x112 → 32 pads, 112x112 → 16; each run becomes one pad, the rest of the ids stay in place.
    runs = [32, 16] if not chart_hidden else [16]
    assert expected.count(pad) == sum(runs)
    assert prompt.collapsed_ids.count(pad) == len(runs)
    assert len(prompt.collapsed_ids) == len(expected) - sum(runs) + len(runs)
    assert [token for token in prompt.collapsed_ids if token != pad] == [token for token in expected if token != pad]
    assert prompt.images == ([chart, edited] if not chart_hidden else [edited])


def test_a_template_that_puts_two_images_in_one_run_is_refused():
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), CORPUS, 1, "cpu")
    image = Image.new("RGB", (112, 112), "white")
    messages = [{"role": "user", "content": [{"type": "image", "ref": "a", "image": image}, {"type": "text", "text": "Q"}]}]
    encode = policy.encoder.encode

    def without_vision_markers(*args, **kwargs):
        encoded = encode(*args, **kwargs)
        pad = policy.processor.image_token_id
        encoded.input_ids = [pad] * 3 + encoded.input_ids  # a second image's pads glued to nothing
        return encoded

    policy.encoder.encode = without_vision_markers
    with pytest.raises(ValueError, match="2 image-token runs for 1 images"):
        vllm_prompt(policy.encoder, messages)
