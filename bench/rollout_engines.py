"""Rollout tokens/s of the two engines rl.rollout_engine chooses between, on the micro policy:
transformers `generate` (the Policy's sampler, 'hf') against vLLM in the same process ('vllm',
rollouts/vllm_sampler.py), in one run on the same prompts, so the ratio holds whatever the load.

Each prompt is a real task from `vistool data gen` (a 224x112 bar chart and its question, the
micro config's kind), the batch is the rollout loop's chunk, and every turn runs to
max_new_tokens or <|im_end|>. Three vLLM figures: as the trainer uses it (sampled-token
log-probs and the control-token mask), and two with one of those off, which shows where the time
goes. Each figure is the best of `--rounds` (interference on a shared machine only slows a round).

Usage (.venv-vllm: it needs vLLM and the trainer): python bench/rollout_engines.py
    [--prompts 32] [--max-new-tokens 48] [--rounds 3] [--threads 2]
Prints a table, then one JSON line: {"hf": tok/s, "vllm": tok/s, ..., "load": [1, 5, 15 min]}.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def real_prompts(count: int) -> list[list[dict]]:
    """`count` opening conversations of generated bar-chart tasks (what an RL step starts from)."""
    from PIL import Image

    out = Path(tempfile.mkdtemp(prefix="vistool-bench-rollouts-"))
    command = ["node", str(ROOT / "bin" / "vistool.js"), "data", "gen", "--kind", "vbar", "--n", str(count), "--seed", "1",
               "--split", "train", "--difficulty", "2", "--image-size", "224x112", "--out", str(out)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines() if line.strip()]
    conversations = []
    for task in tasks:
        with Image.open(out / task["image"]) as opened:
            image = opened.convert("RGB")
        conversations.append([
            {"role": "system", "content": [{"type": "text", "text": "Answer the question about the chart. You may call an image tool first."}]},
            {"role": "user", "content": [{"type": "image", "ref": task["id"], "image": image},
                                         {"type": "text", "text": f"Question: {task['question']}"}]}])
    return conversations


def best_rate(run, rounds: int) -> float:
    """Tokens per second of the fastest of `rounds` calls of `run()` (which returns its token count)."""
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        tokens = run()
        rates.append(tokens / (time.perf_counter() - started))
    return max(rates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)  # before vLLM starts: it refuses the call afterwards
    from vistool_trainer.config import PolicyConfig, from_dict
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.vllm_prompt import vllm_prompt
    from vistool_trainer.rollouts.vllm_sampler import VllmSampler

    prompts = real_prompts(args.prompts)
    corpus = [part["text"] for messages in prompts for message in messages for part in message["content"] if part["type"] == "text"]
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro"}), corpus * 4, 1, "cpu")
    policy.model.eval()
    tokens = lambda turns: sum(len(turn.token_ids) for turn in turns)

    hf = best_rate(lambda: tokens(policy.sample_turns(prompts, args.max_new_tokens, 1.0, False)), args.rounds)
    started = time.perf_counter()
    sampler = VllmSampler.start(policy, seed=1, max_images=1)
    start_seconds = time.perf_counter() - started
    try:
        from vllm.inputs import TokensPrompt

        settings = policy.sampling_fields(args.max_new_tokens, 1.0, greedy=False)
        built = [vllm_prompt(policy.encoder, messages) for messages in prompts]
        requests = [TokensPrompt(prompt_token_ids=p.collapsed_ids, multi_modal_data={"image": p.images}) for p in built]

        def bare(logprobs: bool, mask: bool) -> int:
            params = sampler.sampling_params(settings)
            params.logprobs = 0 if logprobs else None
            params.logit_bias = dict(sampler.suppressed_bias) if mask else None
            outputs = sampler.llm.generate(requests, params, use_tqdm=False)
            return sum(len(output.outputs[0].token_ids) for output in outputs)

        sampler.sample_turns(prompts[:2], 4, 1.0, False)  # first-request set-up is not throughput
        vllm = best_rate(lambda: tokens(sampler.sample_turns(prompts, args.max_new_tokens, 1.0, False)), args.rounds)
        no_mask = best_rate(lambda: bare(logprobs=True, mask=False), args.rounds)
        neither = best_rate(lambda: bare(logprobs=False, mask=False), args.rounds)
        push = min(sampler.push_weights() for _ in range(args.rounds))
    finally:
        sampler.close()
    load = list(os.getloadavg())
    rows = [("transformers generate (hf)", hf), ("vLLM as the trainer uses it (vllm)", vllm),
            ("vLLM, log-probs, no token mask", no_mask), ("vLLM, no log-probs, no token mask", neither)]
    print(f"micro policy, {args.prompts} prompts x {args.max_new_tokens} new tokens, {args.threads} threads, "
          f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for name, rate in rows:
        print(f"  {name:<40} {rate:9.0f} tokens/s   {rate / hf:5.2f}x hf")
    print(f"  vLLM engine start {start_seconds:.1f} s, weight push {push * 1000:.0f} ms")
    print(json.dumps({"hf": hf, "vllm": vllm, "vllm_no_mask": no_mask, "vllm_bare": neither, "engine_start_s": start_seconds,
                      "weight_push_s": push, "load": load}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
