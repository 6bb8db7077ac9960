"""The tokens a rollout sampled are scored by veRL's trainer as the rollout scored them (issue item 6).

veRL's actor recomputes the log-prob of every sampled token from what the agent loop hands back: the
token ids, the images in `multi_modal_data`, and the pixel values and 3-D M-RoPE position ids veRL
derives from them (AgentLoopWorker._compute_multi_modal_inputs / _compute_position_ids, the
functions its v1 worker calls) through its patched Qwen2.5-VL forward. This test runs exactly that
on the agent loop's real outputs and compares with the log-probs the rollout reported.

The rollout side is TransformersServerManager, vistool's transformers implementation of veRL's
server-manager interface: the one stand-in, because vLLM needs a GPU. The cause found for the
0.93–0.98 `training/rollout_probs_diff_max` of veRL's run on CPU was on that side: generation was
not given `mm_token_type_ids`, so transformers' Qwen2.5-VL ran the image prompt with 1-D text
positions while the trainer scored it with M-RoPE positions (|Δ log p| up to 0.15 at the first
token on these weights). vLLM computes M-RoPE itself; the test guards the stand-in every CPU check
relies on, and veRL's trainer-side path for vistool's outputs.

The rollout reports vLLM's processed log-probs: over the vocabulary less what veRL bans (the vision
placeholders and the padded rows; transformers_server.py). The trainer's are over the whole
vocabulary, so they differ by the banned tokens' mass (~0.01 in log p on these noised weights), which
is not what this test is about: the trainer's side is compared with the same ban applied.

The weights are a fresh micro model plus noise (a non-confident model: near-uniform distributions
hide position bugs, noised ones do not).
"""
from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import Qwen2_5_VLForConditionalGeneration
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker, DictConfigWrap
from verl.models.transformers.monkey_patch import apply_monkey_patch
from verl.utils.dataset.rl_dataset import RLHFDataset

from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.agent_loop import VistoolAgentLoop
from vistool_verl.cpu_stand_in.processor_without_torchvision import image_only_processor
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config
from vistool_verl.transformers_server import TransformersServerManager

SYSTEM_PROMPT = "Answer the question about the chart. You may call an image tool first."
# fp32 on both sides, same weights and inputs: only the order of floating-point sums differs.
LOGP_BOUND = 1e-4


@pytest.fixture(scope="module")
def noised_dir(micro_dir, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("noised")
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(micro_dir, dtype=torch.float32)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator))
    model.save_pretrained(directory)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "preprocessor_config.json"):
        if (micro_dir / name).exists():
            (directory / name).write_bytes((micro_dir / name).read_bytes())
    return directory


class GoldCallFirst(TransformersServerManager):
    """The stand-in, except that an episode's first turn is the task's gold tool call (scored, not
    sampled), so the later turns are sampled with the tool's edited image in the prompt."""

    def __init__(self, *args, gold_calls: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self.gold_calls = gold_calls

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], image_data=None,
                       mm_processor_kwargs=None, **kwargs):
        tokenizer = self.generator.processor.tokenizer
        text = tokenizer.decode(prompt_ids, skip_special_tokens=False)
        if text.count("<|im_start|>assistant") == 1:
            call = next(c for question, c in self.gold_calls.items() if question in text)
            tokens = tokenizer(call + "<|im_end|>", add_special_tokens=False)["input_ids"]
            log_probs = self.generator.score(prompt_ids, tokens, image_data, mm_processor_kwargs)
            from verl.workers.rollout.replica import TokenOutput
            return TokenOutput(token_ids=tokens, log_probs=log_probs, stop_reason="completed")
        return await super().generate(request_id, prompt_ids=prompt_ids, sampling_params=sampling_params, image_data=image_data,
                                      mm_processor_kwargs=mm_processor_kwargs, **kwargs)


def episodes(model_dir: Path, env_server, tasks: list[dict], manager, per_task: int = 2) -> list:
    client, token_file, _ = env_server
    processor = load_processor(model_dir)
    cfg = trainer_config(response_length=256, prompt_length=4096, max_turns=3)
    rows = [{"extra_info": {"task_json": json.dumps({k: v for k, v in t.items() if not k.startswith("_")}), "task_dir": t["_task_dir"]}}
            for t in tasks for _ in range(per_task)]

    async def run_all():
        loops = [VistoolAgentLoop(DictConfigWrap(cfg), manager, processor.tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                  hf_model_type="qwen2_5_vl", max_turns=3, max_new_tokens=24, presentation={"system_prompt": SYSTEM_PROMPT},
                                  env_url=client.url, env_token_file=str(token_file)) for _ in rows]
        return await asyncio.gather(*(loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}, **row)
                                      for loop, row in zip(loops, rows)))
    return asyncio.run(run_all())


@contextmanager
def veRLs_forward(model):
    """veRL's forward for Qwen2.5-VL (its monkey patch: forward_with_normal_backend), put back afterwards:
    it patches the classes, and the stand-in's generate in this process must keep transformers' own."""
    from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as qwen25
    from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen2
    classes = [qwen25.Qwen2_5_VLForConditionalGeneration, qwen25.Qwen2_5_VLModel, qwen25.Qwen2_5_VLAttention,
               qwen2.Qwen2VLForConditionalGeneration, qwen2.Qwen2VLModel, qwen2.Qwen2VLAttention]
    saved = [(cls, cls.__dict__["forward"]) for cls in classes]
    apply_monkey_patch(model, use_remove_padding=False)
    try:
        yield
    finally:
        for cls, forward in saved:
            cls.forward = forward


def trainer_log_probs(model_dir: Path, output, banned: list[int]) -> torch.Tensor:
    """The response tokens' log-probs as veRL's v1 trainer computes them for this agent-loop output,
    over the vocabulary less `banned` (the distribution the rollout drew from)."""
    worker = AgentLoopWorker.__new__(AgentLoopWorker)  # only its two input builders are used
    worker.processor = image_only_processor(str(model_dir))  # what veRL's loader returns here (cpu_stand_in)
    worker.tokenizer = worker.processor.tokenizer
    worker.mm_processor_kwargs = {}
    input_ids = torch.tensor(output.prompt_ids + output.response_ids)
    attention = torch.ones_like(input_ids)
    multi_modal = worker._compute_multi_modal_inputs(output, input_ids)
    position_ids = worker._compute_position_ids(input_ids[None], attention[None], multi_modal).squeeze(0)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="sdpa").eval()
    with veRLs_forward(model):
        with torch.no_grad():
            logits = model(input_ids=input_ids[None], attention_mask=attention[None], position_ids=position_ids.unsqueeze(1),
                           pixel_values=multi_modal["pixel_values"], image_grid_thw=multi_modal["image_grid_thw"]).logits[0]
    start = len(output.prompt_ids)
    response = torch.tensor(output.response_ids)
    logits = logits[start - 1:start - 1 + len(response)].float()
    logits[:, banned] = float("-inf")
    return torch.log_softmax(logits, dim=-1).gather(1, response[:, None])[:, 0]


def compare(model_dir: Path, outputs, banned: list[int], from_turn: int = 0) -> tuple[float, int, int]:
    """max |Δ log p| over the policy's tokens of turns `from_turn`.., with how many tokens and images were compared."""
    worst, tokens, images = 0.0, 0, 0
    for output in outputs:
        trained = trainer_log_probs(model_dir, output, banned)
        mask = torch.tensor(output.response_mask).bool()
        turn = torch.cumsum((torch.diff(mask.int(), prepend=torch.tensor([0])) == 1).int(), 0) - 1
        keep = mask & (turn >= from_turn)
        diff = (trained - torch.tensor(output.response_logprobs))[keep].abs()
        if len(diff):
            worst = max(worst, float(diff.max()))
            tokens += len(diff)
            images = max(images, len(output.multi_modal_data["images"]))
    return worst, tokens, images


def test_the_trainer_scores_sampled_tokens_as_the_rollout_did_after_the_task_image(tasks_path, noised_dir, env_server):
    manager = TransformersServerManager(Qwen2_5_VLForConditionalGeneration.from_pretrained(noised_dir, dtype=torch.float32),
                                        load_processor(noised_dir), max_new_tokens=24, seed=3)
    outputs = episodes(noised_dir, env_server, load_tasks(tasks_path)[:2], manager)
    worst, tokens, _ = compare(noised_dir, outputs, manager.generator.banned)
    assert tokens > 40
    assert worst < LOGP_BOUND, f"max |Δ log p| {worst:.3g} between the rollout and veRL's trainer over {tokens} tokens"


def test_the_trainer_scores_sampled_tokens_as_the_rollout_did_after_an_edited_image(tasks_path, noised_dir, env_server):
    tasks = load_tasks(tasks_path)[:2]
    client = env_server[0]
    calls = {t["question"]: (g["tool_turns"] or [""])[0] for t, g in zip(tasks, client.gold(tasks))}
    assert all(calls.values())
    manager = GoldCallFirst(Qwen2_5_VLForConditionalGeneration.from_pretrained(noised_dir, dtype=torch.float32),
                            load_processor(noised_dir), max_new_tokens=24, seed=4, gold_calls=calls)
    outputs = episodes(noised_dir, env_server, tasks, manager)
    worst, tokens, images = compare(noised_dir, outputs, manager.generator.banned, from_turn=1)  # the sampled turns after the tool's image
    assert images == 2 and tokens > 10
    assert worst < LOGP_BOUND, f"max |Δ log p| {worst:.3g} over {tokens} tokens sampled with two images in the prompt"
