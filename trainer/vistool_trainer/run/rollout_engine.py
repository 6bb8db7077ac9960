"""The run's rollout sampler, as `rl.rollout_engine` says: the policy's own transformers sampler
('hf', nothing to start) or a vLLM engine in this process ('vllm', rollouts/vllm_sampler.py).

The engine starts when the RL stage starts, from the policy as SFT (or a resumed checkpoint) left
it, and after every RL step the trainer's weights are pushed into it: that is the only place the
two copies meet, so a step's rollouts always come from the weights the step before produced.
Evaluations keep the transformers sampler.
"""
from __future__ import annotations

import time

from ..config import RunConfig
from ..engines.distributed import Distributed
from ..model.policy import Policy
from ..rollouts.turn_sampler import TurnSampler
from .environment_check import installed_version
from .events import EventStream


class RolloutEngine:
    def __init__(self, config: RunConfig, dist: Distributed, events: EventStream):
        self.config = config
        self.events = events
        self.sampler = None
        if config.rl.enabled and config.rl.rollout_engine == "vllm" and dist.enabled:
            # Each rank's engine would start its own torch.distributed world inside the trainer's.
            raise ValueError(f"rl.rollout_engine 'vllm' runs in a single process; this run has {dist.world}. "
                             "Use rl.rollout_engine 'hf' with several processes, or one process with 'vllm'")

    @property
    def name(self) -> str:
        return self.config.rl.rollout_engine

    def start(self, policy: Policy) -> TurnSampler | None:
        """The sampler for the RL stage; None means the policy's own (run_rollouts' default)."""
        if self.name == "hf":
            if not self.config.rl.fold_lora_for_sampling:
                return None
            return self._start_folded(policy)
        from ..rollouts.vllm_sampler import VllmSampler

        env, view = self.config.env, self.config.policy.view
        images = 1 + max(env.max_tool_calls, 1)  # the task's image and one per tool call
        if view.latest_images is not None:
            images = min(images, view.latest_images)
        warning = image_budget_warning(policy, images)
        if warning is not None:
            self.events.warning(warning)
        started = time.perf_counter()
        self.sampler = VllmSampler.start(policy, seed=self.config.seed, max_images=images,
                                         gpu_memory_utilization=self.config.rl.vllm_gpu_memory_utilization)
        self.events.log(f"rollout engine: vLLM {installed_version('vllm')} in this process, started in {time.perf_counter() - started:.1f} s "
                        f"(max_model_len {self.sampler.max_model_len}, up to {images} images per prompt)")
        return self.sampler

    def _start_folded(self, policy: Policy) -> TurnSampler:
        from ..rollouts.folded_sampler import FoldedAdapterSampler

        strategy = self.config.distributed.strategy
        if strategy != "ddp":
            raise ValueError(f"rl.fold_lora_for_sampling folds each adapted layer's whole weight, and distributed.strategy "
                             f"'{strategy}' shards the weights across processes. Set rl.fold_lora_for_sampling to false, "
                             "or distributed.strategy to 'ddp'")
        self.sampler = FoldedAdapterSampler(policy)
        self.events.log("rollout engine: the transformers sampler with the LoRA adapters folded into the weights while it "
                        "samples (rl.fold_lora_for_sampling)")
        return self.sampler

    def after_update(self) -> dict[str, float]:
        """Push the trained weights into the engine (after each RL step); its metrics: the time it
        took and, for a LoRA policy, the share of the adapters' update the engine's dtype rounded
        away (`training/lora_delta_lost_in_engine`: 0 the engine samples the trained policy, 1 the
        base policy; docs/VLLM.md)."""
        if self.sampler is None:
            return {}
        metrics: dict[str, float] = {}
        # The folding sampler reads the trained weights at every call: nothing to push, and its share is
        # of the newest call's fold, the weights this step's rollouts were sampled from.
        if hasattr(self.sampler, "push_weights"):
            metrics["timing/weight_sync_s"] = self.sampler.push_weights()
        if self.sampler.lora_delta_lost is not None:
            metrics["training/lora_delta_lost_in_engine"] = self.sampler.lora_delta_lost
        return metrics

    def close(self) -> None:
        sampler, self.sampler = self.sampler, None
        if sampler is not None:
            sampler.close()


def image_budget_warning(policy: Policy, max_images: int) -> str | None:
    """Why images at the policy's pixel bounds do not fit the vLLM engine, or None. vLLM sizes its
    encoder cache and its start-up profiling run for the largest image the processor can make, and
    every image of an episode counts against max_model_len: with Qwen2.5-VL's default max_pixels
    (`policy.max_pixels: null`) one image is up to 16,384 tokens, the whole of the engine's length,
    and the episode ends when a prompt stops fitting (rollout.py, rollout/ended_early)."""
    from ..rollouts.vllm_sampler import engine_max_model_len, most_image_tokens

    per_image, length = most_image_tokens(policy), engine_max_model_len(policy)
    if max_images * per_image < length:
        return None
    max_pixels = policy.processor.pixel_bounds["max_pixels"]
    return (f"an image at the policy's max_pixels ({max_pixels:,}) is up to {per_image:,} tokens, and a prompt may hold {max_images} "
            f"(the task's and one per tool call): {max_images * per_image:,} tokens of images against the vLLM engine's max_model_len {length:,}. "
            "vLLM profiles its vision encoder for the largest image at start, and an episode whose images fill the length ends early "
            "(rollout/ended_early). Set policy.max_pixels (1,003,520 is at most 1,280 tokens an image).")
