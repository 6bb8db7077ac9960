"""The transformers stand-in samples as veRL 0.9.1 configures vLLM (transformers_server.py, issue 41
item 1, M2): it bans exactly the vision placeholders and the rows past the tokenizer, stops on the
generation config's and tokenizer's end-of-sequence ids, inherits none of the checkpoint's sampling
defaults, and reports the log-probs of the distribution it drew from.

The model is the micro Qwen2.5-VL with a padded vocabulary (8 rows past the tokenizer, as Qwen2.5-VL
has 271) and a bias on its head that makes the token under test the likeliest: what is banned must
still never come out. Expected log-probs come from a teacher-forced forward computed here.
"""
from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForImageTextToText, GenerationConfig

from vistool_verl.processor import load_processor
from vistool_verl.transformers_server import TransformersGenerator, banned_token_ids, stop_token_ids

PADDED_ROWS = 8


@pytest.fixture
def policy(micro_dir):
    processor = load_processor(micro_dir)
    model = AutoModelForImageTextToText.from_pretrained(micro_dir, dtype=torch.float32, attn_implementation="sdpa")
    model.resize_token_embeddings(len(processor.tokenizer) + PADDED_ROWS)
    # The Instruct checkpoints' generation config: both end-of-sequence ids, and defaults the stand-in must not inherit.
    tokenizer = processor.tokenizer
    model.generation_config = GenerationConfig(do_sample=True, top_k=1, top_p=0.001, temperature=0.1, repetition_penalty=1.05,
                                               eos_token_id=[int(tokenizer.convert_tokens_to_ids(t)) for t in ("<|im_end|>", "<|endoftext|>")])
    return model.eval(), processor


def favour(model, token_ids: list[int], by: float = 30.0):
    """A forward hook on the LM head that adds `by` to the logits of `token_ids`."""
    def hook(_module, _inputs, output):
        output = output.clone()
        output[..., token_ids] += by
        return output
    return model.get_output_embeddings().register_forward_hook(hook)


def prompt(processor) -> list[int]:
    text = processor.apply_chat_template([{"role": "user", "content": "Is D low?"}], tokenize=False, add_generation_prompt=True)
    return list(processor(text=[text])["input_ids"][0])


def test_it_bans_the_vision_placeholders_and_the_padded_rows_and_nothing_else(policy):
    model, processor = policy
    tokenizer = processor.tokenizer
    ids = {name: int(tokenizer.convert_tokens_to_ids(name)) for name in ("<|image_pad|>", "<|video_pad|>", "<|im_start|>", "<|vision_start|>")}
    padded = list(range(len(tokenizer), len(tokenizer) + PADDED_ROWS))
    assert banned_token_ids(processor, len(tokenizer) + PADDED_ROWS) == sorted([ids["<|image_pad|>"], ids["<|video_pad|>"], *padded])
    generator = TransformersGenerator(model, processor, seed=0)
    with favour(model, [ids["<|image_pad|>"], ids["<|video_pad|>"], *padded], by=60.0), \
            favour(model, [ids["<|im_start|>"], ids["<|vision_start|>"]]):
        out = generator.generate(prompt(processor), {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "max_tokens": 12})
    banned = set(generator.banned)
    assert not banned & set(out.token_ids)
    # What vLLM does not ban comes out when the model favours it (the old stand-in never sampled these).
    assert {ids["<|im_start|>"], ids["<|vision_start|>"]} & set(out.token_ids)


def test_a_turn_stops_on_endoftext_and_returns_it(policy):
    model, processor = policy
    tokenizer = processor.tokenizer
    end_of_text = int(tokenizer.convert_tokens_to_ids("<|endoftext|>"))
    im_end = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
    assert {end_of_text, im_end} <= set(stop_token_ids(model, tokenizer))
    generator = TransformersGenerator(model, processor, seed=0)
    assert {end_of_text, im_end} <= set(generator.stop_ids)
    with favour(model, [end_of_text]):
        out = generator.generate(prompt(processor), {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "max_tokens": 12})
    assert out.token_ids == [end_of_text] and out.stop_reason == "completed"


def test_the_checkpoint_s_sampling_defaults_are_not_inherited_and_log_probs_are_the_processed_ones(policy):
    model, processor = policy
    ids = prompt(processor)
    draws = []
    for seed in range(4):
        generator = TransformersGenerator(model, processor, seed=seed)
        out = generator.generate(ids, {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "max_tokens": 6})
        draws.append(tuple(out.token_ids))
        # Independently: a teacher-forced forward, the banned logits at -inf, log-softmax at temperature 1.
        full = torch.tensor([ids + list(out.token_ids)])
        with torch.no_grad():
            logits = model(input_ids=full, attention_mask=torch.ones_like(full)).logits[0, len(ids) - 1:-1].float()
        logits[:, generator.banned] = float("-inf")
        expected = torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(out.token_ids)[:, None])[:, 0]
        assert out.log_probs == pytest.approx(expected.tolist(), abs=1e-4)
    # top-k 1 / temperature 0.1 from the checkpoint would make every draw the same greedy text.
    assert len(set(draws)) > 1, draws
