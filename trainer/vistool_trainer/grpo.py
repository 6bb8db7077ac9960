"""One GRPO/DAPO step: sample groups (with dynamic sampling) through the env server, compute
group-relative advantages, and update the policy with the clipped loss.

Why not TRL's GRPOTrainer: TRL 1.13 has no dynamic sampling, its tool loop parses tool calls
itself (here the env server must parse raw text, contract 4), observations come from an
external server rather than Python callables, and images in tool turns hit #5663 / #6274 on
Qwen2.5-VL. The math comes from this package's algorithm modules, tested against veRL.
"""
from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Any

import torch

from .advantages import group_advantages
from .distributed import Distributed
from .dynamic_sampling import sample_informative_groups
from .env_client import EnvClient
from .kl_penalty import kl_penalty
from .loss_aggregation import masked_mean
from .policy import Policy
from .policy_loss import clipped_policy_loss
from .rollout import EpisodeOptions, Rollout, RolloutTiming, run_rollouts
from .training_engine import TrainingEngine


@dataclass
class StepResult:
    metrics: dict[str, float]
    rollouts: list[Rollout]
    generated: list[Rollout]
    warnings: list[str]


def _groups(rollouts: list[Rollout], group_size: int) -> list[list[Rollout]]:
    return [rollouts[i:i + group_size] for i in range(0, len(rollouts), group_size)]


def pick_prompts(tasks: list[dict[str, Any]], count: int, seed: int, step: int, batch_index: int) -> list[dict[str, Any]]:
    """Prompts for one generation batch: a pure function of (seed, step, batch), so resume repeats it."""
    chooser = random.Random(seed * 1_000_003 + step * 1_009 + batch_index)
    return [tasks[chooser.randrange(len(tasks))] for _ in range(count)]


def grpo_step(policy: Policy, optimizer: torch.optim.Optimizer, client: EnvClient, tasks: list[dict[str, Any]],
              rl: dict[str, Any], options: EpisodeOptions, seed: int, step: int,
              reference: torch.nn.Module | None = None, dist: Distributed = Distributed(),
              engine: TrainingEngine | None = None) -> StepResult:
    """One step. With several processes each rank rolls out its share of every generation batch's
    prompts (and fills its share of the groups), and the update is the one a single process would
    make on all ranks' groups together. `engine` holds the trained weights (replicated by default)."""
    engine = engine or TrainingEngine(policy, dist)
    timing = RolloutTiming()
    group_size = rl["group_size"]
    warnings: list[str] = []
    generated: list[Rollout] = []
    target = len(dist.share(list(range(rl["prompts_per_step"]))))

    def generate(batch_index: int) -> list[list[Rollout]]:
        prompts = dist.share(pick_prompts(tasks, rl["prompts_per_step"], seed, step, batch_index))
        rollouts = run_rollouts(policy, client, prompts, group_size, options, rl["max_new_tokens"], rl["temperature"], timing=timing)
        generated.extend(rollouts)
        return _groups(rollouts, group_size)

    def metric(group: list[Rollout]) -> list[float]:
        return [float(r.correct) for r in group] if rl["dynamic_sampling_metric"] == "accuracy" else [r.reward for r in group]

    outcome = sample_informative_groups(generate, metric, target, rl["max_num_gen_batches"], rl["dynamic_sampling"]) if target else None
    kept = outcome.kept if outcome else []
    for group in kept:
        for rollout in group:
            rollout.kept = True
    rollouts = [rollout for group in kept for rollout in group]
    local: dict[str, float] = {
        "sampling/kept_groups": float(len(kept)),
        "sampling/dropped_groups": float(outcome.dropped_groups if outcome else 0),
        "sampling/gen_batches": float(outcome.generation_batches if outcome else 0),
        "timing/gen_s": timing.gen_s,
        "timing/env_s": timing.env_s,
    }
    train_started = time.perf_counter()
    # The server's reward already down-weights no-tool trajectories (rewards.tool.no_tool_factor):
    # it is used as it is, so the down-weighting happens in exactly one place.
    rewards = [rollout.reward for rollout in rollouts]
    advantages = group_advantages(torch.tensor(rewards, dtype=torch.float32), [f"{r.prompt_id}#{i // group_size}" for i, r in enumerate(rollouts)],
                                  normalize_by_std=rl["advantage"] == "grpo")
    for rollout, advantage in zip(rollouts, advantages.tolist()):
        rollout.advantage = advantage
    update = _update(policy, engine, optimizer, rollouts, advantages, rl, reference, dist, filler=generated[0] if generated else None)
    local["timing/train_s"] = time.perf_counter() - train_started
    metrics = merge_rank_metrics(dist.gather((local, update, rollout_metrics(generated), len(generated))))
    kept_groups = int(metrics["sampling/kept_groups"])
    if kept_groups < rl["prompts_per_step"]:
        warnings.append(f"dynamic sampling kept {kept_groups} of {rl['prompts_per_step']} groups after "
                        f"{int(metrics['sampling/gen_batches'])} generation batches (all others had identical rewards)")
    if not update:
        warnings.append("no informative group this step: the policy was not updated")
    return StepResult(metrics=metrics, rollouts=rollouts, generated=generated, warnings=warnings)


def merge_rank_metrics(parts: list[tuple[dict[str, float], dict[str, float], dict[str, float], int]]) -> dict[str, float]:
    """One record from every rank's (step counters, update metrics, rollout means, rollouts generated):
    counters add up, timings take the slowest rank, rollout means weigh by rollouts; the update's
    metrics are already global (its collectives made them so) and are the same on every rank."""
    merged: dict[str, float] = {}
    for key in parts[0][0]:
        values = [part[0][key] for part in parts]
        merged[key] = max(values) if key.startswith("timing/") else sum(values)
    merged.update(parts[0][1])
    weights = [part[3] for part in parts]
    keys = {key for part in parts for key in part[2]}
    if len(parts) == 1:
        merged.update(parts[0][2])
        return merged
    for key in sorted(keys):
        pairs = [(part[2][key], weight) for part, weight in zip(parts, weights) if key in part[2] and weight > 0]
        if not pairs:
            continue
        if key.startswith("judge/"):  # cumulative per-server counters: the run's total
            merged[key] = sum(value for value, _ in pairs) if key != "judge/latency_ms" else max(value for value, _ in pairs)
        else:
            merged[key] = sum(value * weight for value, weight in pairs) / sum(weight for _, weight in pairs)
    return merged


def _update(policy: Policy, engine: TrainingEngine, optimizer: torch.optim.Optimizer, rollouts: list[Rollout], advantages: torch.Tensor,
            rl: dict[str, Any], reference: torch.nn.Module | None, dist: Distributed = Distributed(),
            filler: Rollout | None = None) -> dict[str, float]:
    """The policy-gradient update; {} (and no optimizer step) when no rank kept a group.

    A sharded engine needs every rank to run as many micro-batches as the busiest one (each
    forward gathers parameters, each backward reduces gradients): ranks with fewer kept rollouts
    run `filler` (a rollout they generated) with weight zero."""
    engine.train_mode()
    encoded = [policy.encoder.encode(rollout.messages, add_generation_prompt=False) for rollout in rollouts]
    # Aggregation is over the global batch: token and sequence counts (and the Dr. GRPO length
    # constant) are summed or maxed across ranks before any rank weighs its share.
    total_tokens = dist.sum(sum(sum(item.loss_mask) for item in encoded))
    total_sequences = dist.sum(len(encoded))
    longest = dist.max(max((len(item.input_ids) for item in encoded), default=0))
    if total_sequences == 0:
        return {}
    mode = rl["loss_agg_mode"]
    engine.zero_grad(optimizer)
    sums = {"clipfrac": 0.0, "kl": 0.0, "entropy": 0.0, "loss": 0.0}
    size = rl["micro_batch_size"]
    chunks: list[tuple[int | None, list[Any]]] = [(offset, encoded[offset:offset + size]) for offset in range(0, len(encoded), size)]
    if engine.matched_micro_batches:
        missing = int(dist.max(len(chunks))) - len(chunks)
        if missing and filler is not None:  # train.check_sharding makes sure every rank generated one
            chunks += [(None, [policy.encoder.encode(filler.messages, add_generation_prompt=False)])] * missing
    for offset, chunk in chunks:
        inputs = policy.batch(chunk)
        log_probs, mask, entropy = engine.score(inputs, with_entropy=True)
        if offset is None:  # padding: the collectives run, the gradient gets nothing
            engine.backward(log_probs.sum() * 0.0)
            continue
        chunk_adv = advantages[offset:offset + size].to(log_probs.device)
        # One update per batch (on-policy): the sampling policy is the current one, so
        # logp_old is logp detached and the ratio is 1 up to rounding; clipping matters with reuse.
        result = clipped_policy_loss(log_probs, log_probs.detach(), chunk_adv, mask, rl["clip_ratio_low"], rl["clip_ratio_high"],
                                     rl["clip_ratio_c"], mode, normalizer=float(longest))
        chunk_tokens = float(mask.sum().item())
        weight = chunk_tokens / max(total_tokens, 1) if mode == "token-mean" else (
            1.0 if mode == "seq-mean-token-sum-norm" else len(chunk) / total_sequences)
        loss = result.loss * weight
        if rl["kl_coef"] > 0 and reference is not None:
            with torch.no_grad():
                ref_log_probs, _, _ = policy.token_scores(inputs, model=reference)
            kl = masked_mean(kl_penalty(log_probs, ref_log_probs, rl["kl_estimator"]), mask)
            loss = loss + rl["kl_coef"] * kl * weight
            sums["kl"] += float(kl.item()) * chunk_tokens
        engine.backward(loss)
        sums["clipfrac"] += float(result.clipfrac.item()) * chunk_tokens
        sums["entropy"] += float(masked_mean(entropy.detach(), mask).item()) * chunk_tokens
        sums["loss"] += float(loss.item())
    grad_norm = engine.step(optimizer, rl["max_grad_norm"])
    denominator = max(total_tokens, 1)
    return {
        "actor/loss": dist.sum(sums["loss"]),
        "actor/clipfrac": dist.sum(sums["clipfrac"]) / denominator,
        "actor/kl": dist.sum(sums["kl"]) / denominator,
        "actor/entropy": dist.sum(sums["entropy"]) / denominator,
        "actor/grad_norm": grad_norm,
        "actor/tokens": float(total_tokens),
    }


def rollout_metrics(rollouts: list[Rollout]) -> dict[str, float]:
    if not rollouts:
        return {}
    metrics = {
        "reward/mean": statistics.fmean(r.reward for r in rollouts),
        "acc/mean": statistics.fmean(float(r.correct) for r in rollouts),
        "tool/call_rate": statistics.fmean(float(r.tool_calls > 0) for r in rollouts),
        "tool/calls_mean": statistics.fmean(r.tool_calls for r in rollouts),
        "tool/error_rate": sum(r.tool_errors for r in rollouts) / max(1, sum(r.tool_calls + r.tool_errors for r in rollouts)),
        "response_length/mean": statistics.fmean(r.response_tokens for r in rollouts),
        "turns/mean": statistics.fmean(r.turns for r in rollouts),
        "format/valid_rate": statistics.fmean(float(r.format_valid) for r in rollouts),
    }
    components: dict[str, list[float]] = {}
    for rollout in rollouts:
        for name, value in rollout.components.items():
            components.setdefault(name, []).append(value)
    for name, values in components.items():
        metrics[f"reward/{name}"] = statistics.fmean(values)
    # Server-side counters (judge/requests, judge/failures, ...) are cumulative: the newest wins.
    for rollout in rollouts:
        metrics.update(rollout.score_metrics)
    return metrics
