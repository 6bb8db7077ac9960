"""One GRPO/DAPO step: sample groups (with dynamic sampling) through the env server, compute
group-relative advantages, and update the policy with the clipped loss.

Why not TRL's GRPOTrainer: TRL 1.13 has no dynamic sampling, its tool loop parses tool calls
itself (here the env server must parse raw text, contract 4), observations come from an
external server rather than Python callables, and images in tool turns hit #5663 / #6274 on
Qwen2.5-VL. The math comes from this package's algorithm modules, tested against veRL.
"""
from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from ..algorithms.advantages import group_advantages
from ..algorithms.dynamic_sampling import sample_informative_groups
from ..algorithms.failed_groups import FAILED_GROUPS_DROPPED, failed_group_metrics, has_failed_episode
from ..algorithms.kl_penalty import kl_penalty
from ..algorithms.loss_aggregation import LossAggregation, MiniBatchTotals, agg_loss, masked_mean
from ..algorithms.micro_batches import MicroBatching
from ..algorithms.policy_loss import clipped_policy_loss
from ..algorithms.rollout_correction import RolloutWeights, rollout_is_metrics, rollout_is_weights
from ..algorithms.turn_masking import TRUNCATED_MASKED, masked_loss_mask, over_turn_mask
from ..algorithms.update_schedule import dr_grpo_constant, mean_over_micro_batches, mini_batch_ranges
from ..config import RlConfig
from ..engines.distributed import Distributed
from ..engines.training_engine import TrainingEngine
from ..model.policy import Policy, score_tokens
from ..rollouts.env_client import EnvClient
from ..rollouts.rollout import EpisodeOptions, Rollout, RolloutTiming, run_rollouts
from ..rollouts.sampler_agreement import agreement_of, engine_log_probs_per_sequence
from ..rollouts.token_view import ScoredPositions, token_view
from ..rollouts.target_metrics import CALL_ON_TARGET_RATE, call_target_counts, scan_counts, with_call_on_target_rate
from ..rollouts.tool_metrics import COUNT_PREFIXES, tool_use_counts
from ..rollouts.turn_metrics import MERGED_KEYS, merge_turn_metrics, turn_metrics
from ..rollouts.turn_sampler import TurnSampler


@dataclass
class StepResult:
    metrics: dict[str, float]
    rollouts: list[Rollout]
    generated: list[Rollout]
    warnings: list[str]


def _groups(rollouts: list[Rollout], group_size: int) -> list[list[Rollout]]:
    return [rollouts[i:i + group_size] for i in range(0, len(rollouts), group_size)]


def _env_failed(rollout: Rollout) -> bool:
    return rollout.env_failed


def _without_failed_episode(group: list[Rollout]) -> bool:
    return not has_failed_episode(group, _env_failed)


def pick_prompts(tasks: list[dict[str, Any]], count: int, seed: int, step: int, batch_index: int) -> list[dict[str, Any]]:
    """Prompts for one generation batch: a pure function of (seed, step, batch), so resume repeats it."""
    chooser = random.Random(seed * 1_000_003 + step * 1_009 + batch_index)
    return [tasks[chooser.randrange(len(tasks))] for _ in range(count)]


def grpo_step(policy: Policy, optimizer: torch.optim.Optimizer, client: EnvClient, tasks: list[dict[str, Any]],
              rl: RlConfig, options: EpisodeOptions, seed: int, step: int,
              reference: torch.nn.Module | None = None, dist: Distributed = Distributed(),
              engine: TrainingEngine | None = None, sampler: TurnSampler | None = None) -> StepResult:
    """One step. With several processes each rank rolls out its share of every generation batch's
    prompts (and fills its share of the groups), and the update is the one a single process would
    make on all ranks' groups together. `engine` holds the trained weights (replicated by default);
    `sampler` writes the rollout turns (rl.rollout_engine; None: the policy's transformers sampler)."""
    engine = engine or TrainingEngine(policy, dist)
    timing = RolloutTiming()
    group_size = rl.group_size
    warnings: list[str] = []
    generated: list[Rollout] = []
    target = len(dist.share(list(range(rl.prompts_per_step))))

    def generate(batch_index: int) -> list[list[Rollout]]:
        prompts = dist.share(pick_prompts(tasks, rl.prompts_per_step, seed, step, batch_index))
        rollouts = run_rollouts(policy, client, prompts, group_size, options, rl.max_new_tokens, rl.temperature, timing=timing,
                                sampler=sampler)
        generated.extend(rollouts)
        return _groups(rollouts, group_size)

    def metric(group: list[Rollout]) -> list[float]:
        return [float(r.correct) for r in group] if rl.dynamic_sampling_metric == "accuracy" else [r.reward for r in group]

    # rl.failed_groups 'drop': a group with a failed episode is replaced like a group without spread.
    usable = _without_failed_episode if rl.failed_groups == "drop" else None
    outcome = sample_informative_groups(generate, metric, target, rl.max_num_gen_batches, rl.dynamic_sampling, usable) if target else None
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
        "env/item_errors": float(timing.env_errors),
        **failed_group_metrics(outcome.unusable if outcome else [], kept, _env_failed),
        "rollout/ended_early": float(timing.ended_early),
    }
    train_started = time.perf_counter()
    # The server's reward already down-weights no-tool trajectories (rewards.tool.no_tool_factor):
    # it is used as it is, so the down-weighting happens in exactly one place.
    rewards = [rollout.reward for rollout in rollouts]
    advantages = group_advantages(torch.tensor(rewards, dtype=torch.float32), [f"{r.prompt_id}#{i // group_size}" for i, r in enumerate(rollouts)],
                                  normalize_by_std=rl.advantage == "grpo")
    for rollout, advantage in zip(rollouts, advantages.tolist()):
        rollout.advantage = advantage
    # rl.mask_truncated_turns (Mini-o3's over-turn masking, algorithms/turn_masking.py): the
    # advantages above are over the whole group; the episodes that hit the turn cap train no loss.
    masked = over_turn_mask([rollout.trajectory.get("end_reason") for rollout in rollouts], rl.mask_truncated_turns)
    local[TRUNCATED_MASKED] = float(sum(masked))
    update = _update(policy, engine, optimizer, rollouts, advantages, rl, reference, dist, filler=generated[0] if generated else None,
                     normalizer=dr_grpo_constant(rl.loss_scale_factor, rl.max_new_tokens, options.max_turns), masked=masked)
    local["timing/train_s"] = time.perf_counter() - train_started
    metrics = merge_rank_metrics(dist.gather((local, update, rollout_metrics(generated), len(generated))))
    if int(metrics["sampling/kept_groups"]) < rl.prompts_per_step:
        warnings.append(short_step_warning(metrics, rl))
    if not update:
        warnings.append("no informative group this step: the policy was not updated")
    return StepResult(metrics=metrics, rollouts=rollouts, generated=generated, warnings=warnings)


def short_step_warning(metrics: dict[str, float], rl: RlConfig) -> str:
    """Why a step trains fewer than rl.prompts_per_step groups, each cause with its count (from the
    step's metrics, summed over ranks)."""
    causes = []
    failed = int(metrics.get(FAILED_GROUPS_DROPPED, 0))
    if failed:
        causes.append(f"{failed} dropped for an episode the env server could not step or score (rl.failed_groups 'drop'; "
                      "the reasons are in those rollouts' notes)")
    flat = int(metrics.get("sampling/dropped_groups", 0))
    if flat:
        causes.append(f"{flat} dropped by dynamic sampling for identical {rl.dynamic_sampling_metric} values")
    return (f"the step trains {int(metrics['sampling/kept_groups'])} of {rl.prompts_per_step} groups after "
            f"{int(metrics['sampling/gen_batches'])} generation batches (rl.max_num_gen_batches {rl.max_num_gen_batches})"
            + (": " + "; ".join(causes) if causes else ""))


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
        if not pairs or key == CALL_ON_TARGET_RATE or key in MERGED_KEYS:  # rates and means of counts: recomputed below
            continue
        if key.startswith(COUNT_PREFIXES):  # this step's counts on each rank add up
            merged[key] = sum(value for value, _ in pairs)
        elif key.startswith("judge/"):  # cumulative per-server counters: the run's total
            merged[key] = sum(value for value, _ in pairs) if key != "judge/latency_ms" else max(value for value, _ in pairs)
        else:
            merged[key] = sum(value * weight for value, weight in pairs) / sum(weight for _, weight in pairs)
    merged.update(merge_turn_metrics([(part[2], weight) for part, weight in zip(parts, weights)]))
    return with_call_on_target_rate(merged)


def _update(policy: Policy, engine: TrainingEngine, optimizer: torch.optim.Optimizer, rollouts: list[Rollout], advantages: torch.Tensor,
            rl: RlConfig, reference: torch.nn.Module | None, dist: Distributed = Distributed(),
            filler: Rollout | None = None, normalizer: float | None = None, masked: list[bool] | None = None) -> dict[str, float]:
    """The policy-gradient update as veRL's actor makes it; {} (and no optimizer step) when no rank
    kept a group.

    The old log-probs are computed once, by the policy that sampled (its weights before this
    update), at the sampling temperature. Then `ppo_epochs` passes over `ppo_mini_batch_size`-prompt
    mini-batches (veRL's DataProto.split: update_schedule.mini_batch_ranges), one optimizer step
    each: from the second step on the policy has moved, the ratio leaves 1 and the clip ranges act
    (docs/ALGORITHMS.md). `normalizer` is Dr. GRPO's constant (update_schedule.dr_grpo_constant).

    A sharded engine needs every rank to run as many micro-batches as the busiest one (each
    forward gathers parameters, each backward reduces gradients): ranks with fewer kept rollouts
    run `filler` (a rollout they generated) with weight zero.

    `masked[i]`: rollout i contributes no loss (rl.mask_truncated_turns): its sequences train with
    an all-zero loss mask, so they are in neither the loss nor the token and sequence totals; their
    old log-probs and token view are still computed (the viewer shows what was masked)."""
    # Each rollout is one training sequence, or one per turn when the env's view shows each turn a
    # different past (model/conversation.py); every sequence carries its rollout's advantage.
    segments: list[Any] = []
    owners: list[int] = []
    for index, rollout in enumerate(rollouts):
        for segment in policy.encoder.training_segments(rollout.conversation):
            segments.append(segment)
            owners.append(index)
    global_rollouts = int(dist.sum(len(rollouts)))
    if global_rollouts == 0:
        return {}
    temperature = rl.temperature
    split = rl_micro_batching(rl)
    suppressed = policy.suppressed_token_ids  # never sampled (Policy.sampling_fields): never scored
    old_log_probs, scored = _sampling_log_probs(policy, segments, split, temperature, suppressed)
    # The viewer's token view, from the same pass: each kept rollout's sampled tokens with their numbers.
    for index, rollout in enumerate(rollouts):
        mine = [scored[j] for j, owner in enumerate(owners) if owner == index]
        rollout.token_view = token_view(rollout.conversation.replies, rollout.trajectory.get("turns") or [], mine)
    # The rollout engine's probabilities against these, when it returned any (sampler_agreement.py).
    engine_log_probs = engine_log_probs_per_sequence([rollout.conversation.replies for rollout in rollouts], owners, scored)
    agreement = agreement_of(engine_log_probs, scored)
    # rl.rollout_is: the engine sampled another copy of the weights; each token's loss is weighed by
    # min(π_old / π_rollout, threshold), fixed for the whole update (rollout_correction.py).
    weights, correction = _rollout_correction(rl, engine_log_probs, old_log_probs)
    if masked is not None and any(masked):
        for j, owner in enumerate(owners):
            if masked[owner]:
                segments[j] = replace(segments[j], loss_mask=masked_loss_mask(segments[j].loss_mask, True))
                old_log_probs[j] = old_log_probs[j][:0]
                if weights is not None:
                    weights[j] = weights[j][:0]
    segment_advantages = advantages[torch.tensor(owners, dtype=torch.long)] if owners else advantages[:0]
    # Every rank takes the same number of optimizer steps: the count the whole batch needs.
    count = len(mini_batch_ranges(global_rollouts, rl.group_size, rl.ppo_mini_batch_size))
    parts = [[j for j, owner in enumerate(owners) if part.start <= owner < part.stop]
             for part in mini_batch_ranges(len(rollouts), rl.group_size, rl.ppo_mini_batch_size, count, dist.world)]
    context = MiniBatchContext(policy, engine, optimizer, rl, reference, dist, temperature=temperature, normalizer=normalizer, split=split,
                               suppressed=suppressed, filler=policy.encoder.training_segments(filler.conversation)[0] if filler is not None else None)
    # Per micro-batch values (each a token mean over that micro-batch), over every mini-batch and epoch.
    per_micro: dict[str, list[float]] = {"pg_clipfrac": [], "pg_clipfrac_lower": [], "ppo_kl": [], "kl": [], "entropy": []}
    loss_sum, grad_norm_sum, tokens = 0.0, 0.0, 0.0
    steps = nonfinite = 0
    # Train mode (gradient checkpointing needs it) with dropout off: the old log-probs come from the
    # model without dropout, so the first mini-batch's ratio is exactly 1 (docs/ALGORITHMS.md).
    engine.train_mode(dropout=False)
    for _ in range(rl.ppo_epochs):
        for part in parts:
            result = _mini_batch_step(context, [segments[j] for j in part], [old_log_probs[j] for j in part],
                                      segment_advantages[torch.tensor(part, dtype=torch.long)] if part else segment_advantages[:0],
                                      [weights[j] for j in part] if weights is not None else None)
            for key in per_micro:
                per_micro[key] += result[key]
            loss_sum += result["loss"]
            if math.isfinite(result["grad_norm"]):
                grad_norm_sum += result["grad_norm"]
            else:  # the engine skipped this optimizer step (TrainingEngine.step)
                nonfinite += 1
            tokens += result["tokens"]
            steps += 1
    # veRL's reduce_metrics: the plain mean of every process's per-micro-batch values.
    gathered = {key: [value for rank_values in dist.gather(values) for value in rank_values] for key, values in per_micro.items()}
    return {
        "actor/loss": loss_sum / steps,
        "actor/pg_clipfrac": mean_over_micro_batches(gathered["pg_clipfrac"]),
        "actor/pg_clipfrac_lower": mean_over_micro_batches(gathered["pg_clipfrac_lower"]),
        "actor/ppo_kl": mean_over_micro_batches(gathered["ppo_kl"]),
        "actor/kl": mean_over_micro_batches(gathered["kl"]),
        "actor/entropy": mean_over_micro_batches(gathered["entropy"]),
        # Over the steps taken; null when every one was skipped.
        "actor/grad_norm": grad_norm_sum / (steps - nonfinite) if steps > nonfinite else None,
        # Optimizer steps skipped because the gradient norm was inf or NaN (veRL logs and skips them too).
        "actor/grad_norm_nonfinite": float(nonfinite),
        "actor/optimizer_steps": float(steps - nonfinite),
        "actor/tokens": tokens / rl.ppo_epochs,
        **agreement,
        **correction,
    }


def _rollout_correction(rl: RlConfig, engine: list[list[float] | None],
                        old_log_probs: list[torch.Tensor]) -> tuple[list[torch.Tensor] | None, dict[str, float]]:
    """Per training sequence, the importance weights of its loss tokens (None: rl.rollout_is is
    off), and the step's rollout_corr/* metrics. A sequence whose tokens the engine returned no
    log-probs for keeps weight 1, and is counted in rollout_corr/sequences_uncorrected."""
    if rl.rollout_is == "off":
        return None, {}
    weights: list[torch.Tensor] = []
    computed: list[RolloutWeights] = []
    uncorrected = 0
    for j, old in enumerate(old_log_probs):
        values = engine[j]
        if values is None or len(values) != old.numel():
            uncorrected += 1
            weights.append(torch.ones_like(old, dtype=torch.float32))
            continue
        result = rollout_is_weights(old.float(), torch.tensor(values, dtype=torch.float32), rl.rollout_is, rl.rollout_is_threshold)
        computed.append(result)
        weights.append(result.applied)
    return weights, {**rollout_is_metrics(computed, rl.rollout_is_threshold), "rollout_corr/sequences_uncorrected": float(uncorrected)}


def rl_micro_batching(rl: RlConfig) -> MicroBatching:
    """rl.use_dynamic_bsz / ppo_max_token_len_per_gpu (veRL's names), else rl.micro_batch_size."""
    return MicroBatching(max_tokens=rl.ppo_max_token_len_per_gpu) if rl.use_dynamic_bsz else MicroBatching(size=rl.micro_batch_size)


@torch.no_grad()
def _sampling_log_probs(policy: Policy, encoded: list[Any], split: MicroBatching, temperature: float,
                        suppressed: tuple[int, ...] = ()) -> tuple[list[torch.Tensor], list[ScoredPositions]]:
    """Per-rollout log-probs of the sampled tokens under the policy's own model (the copy that
    sampled, before any update), each [L-1] on its loss positions: no collectives, so every rank
    computes its own share whatever the strategy. Also, per sequence, the token ids at those
    positions with their log-probs and entropies, for the token view.

    In eval mode, as the rollouts were sampled: with dropout (LoRA's) the old log-probs would be
    one noisy draw and the first mini-batch's ratio would not be 1."""
    scores: list[torch.Tensor | None] = [None] * len(encoded)
    scored: list[ScoredPositions | None] = [None] * len(encoded)
    was_training = policy.model.training
    policy.model.eval()
    try:
        for part in split.split([len(item.input_ids) for item in encoded]):
            inputs = policy.batch([encoded[j] for j in part])
            log_probs, mask, entropy = score_tokens(policy.model, inputs, with_entropy=True, temperature=temperature,
                                                    suppressed_token_ids=suppressed)
            next_tokens = inputs["input_ids"][:, 1:]
            for row, j in enumerate(part):
                on = mask[row].bool()
                # Kept as the values at the loss positions, in order: independent of how a later batch pads the rollout.
                scores[j] = log_probs[row][on].detach()
                scored[j] = ScoredPositions(next_tokens[row][on].tolist(), log_probs[row][on].float().tolist(),
                                            entropy[row][on].float().tolist())
    finally:
        if was_training:
            policy.model.train()
    return [s for s in scores if s is not None], [s for s in scored if s is not None]


def _laid_out(values: list[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
    """Per-rollout loss-position values placed on the loss positions of a batch (zero elsewhere)."""
    out = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
    return out.masked_scatter(mask.bool(), torch.cat([value.to(mask.device, torch.float32) for value in values]))


@dataclass
class MiniBatchContext:
    """What every optimizer step of one update shares: the policy and the engine that holds its
    weights, the optimizer, the RL settings, the KL reference (None: no KL term), the processes, the
    sampling temperature the logits are divided by, Dr. GRPO's constant, the micro-batch cut
    (rl_micro_batching), the token ids no sampler draws, and the encoded sequence a rank with fewer
    micro-batches runs at weight zero under a sharded engine (None: it runs none)."""
    policy: Policy
    engine: TrainingEngine
    optimizer: torch.optim.Optimizer
    rl: RlConfig
    reference: torch.nn.Module | None = None
    dist: Distributed = field(default_factory=Distributed)
    temperature: float = 1.0
    normalizer: float | None = None
    split: MicroBatching = field(default_factory=MicroBatching)
    suppressed: tuple[int, ...] = ()
    filler: Any = None


def _mini_batch_step(context: MiniBatchContext, encoded: list[Any], old_log_probs: list[torch.Tensor],
                     advantages: torch.Tensor, is_weights: list[torch.Tensor] | None = None) -> dict[str, Any]:
    """One optimizer step on this rank's share of one mini-batch. Returns this rank's per-micro-batch
    metric values (lists), the mini-batch's loss, the grad norm and its global token count.

    Micro-batches are cut by count or by padded tokens (`context.split`). Each micro-batch's policy
    loss and KL term go through loss_aggregation.agg_loss with the mini-batch's global token,
    sequence and micro-batch counts (summed across ranks before any rank weighs its share), which
    aggregates them with rl.loss_agg_mode and weighs them for rl.loss_agg_scope, as veRL aggregates
    its pg_loss and kl_loss."""
    policy, engine, dist, rl = context.policy, context.engine, context.dist, context.rl
    total_tokens = dist.sum(sum(sum(item.loss_mask) for item in encoded))
    # A sequence with no policy token has no mean to take: it is left out of the seq-mean denominators, as veRL does.
    total_sequences = dist.sum(sum(1 for item in encoded if any(item.loss_mask)))
    engine.zero_grad(context.optimizer)
    values: dict[str, list[float]] = {"pg_clipfrac": [], "pg_clipfrac_lower": [], "ppo_kl": [], "kl": [], "entropy": []}
    loss_total = 0.0
    # Micro-batches as index lists into `encoded`.
    chunks: list[list[int] | None] = list(context.split.split([len(item.input_ids) for item in encoded]))
    totals = MiniBatchTotals(tokens=total_tokens, sequences=total_sequences, micro_batches=int(dist.sum(len(chunks))))
    aggregation = LossAggregation(rl.loss_agg_mode, rl.loss_agg_scope, context.normalizer, totals)
    if engine.matched_micro_batches:
        missing = int(dist.max(len(chunks))) - len(chunks)
        if missing and context.filler is not None:  # train.check_sharding makes sure every rank generated one
            chunks += [None] * missing
    scoring = {"temperature": context.temperature, "suppressed_token_ids": context.suppressed}
    for part in chunks:
        inputs = policy.batch([context.filler] if part is None else [encoded[j] for j in part])
        log_probs, mask, entropy = engine.score(inputs, with_entropy=True, **scoring)
        if part is None:  # padding: the collectives run, the gradient gets nothing
            engine.backward(log_probs.sum() * 0.0)
            continue
        chunk_adv = advantages[torch.tensor(part, dtype=torch.long)].to(log_probs.device)
        old = _laid_out([old_log_probs[j] for j in part], mask)
        token_weights = _laid_out([is_weights[j] for j in part], mask) if is_weights is not None else None
        result = clipped_policy_loss(log_probs, old, chunk_adv, mask, rl.clip_ratio_low, rl.clip_ratio_high, rl.clip_ratio_c, aggregation,
                                     token_weights=token_weights)
        loss = result.loss
        if rl.kl_coef > 0 and context.reference is not None:
            with torch.no_grad():
                ref_log_probs, _, _ = score_tokens(context.reference, inputs, **scoring)
            per_token_kl = kl_penalty(log_probs, ref_log_probs, rl.kl_estimator)
            loss = loss + rl.kl_coef * agg_loss(per_token_kl, mask, aggregation)
            values["kl"].append(float(masked_mean(per_token_kl.detach(), mask).item()))
        engine.backward(loss)
        values["pg_clipfrac"].append(float(result.clipfrac.item()))
        values["pg_clipfrac_lower"].append(float(result.clipfrac_lower.item()))
        values["ppo_kl"].append(float(result.approx_kl.item()))
        values["entropy"].append(float(masked_mean(entropy.detach(), mask).item()))
        loss_total += float(loss.item())
    grad_norm = engine.step(context.optimizer, rl.max_grad_norm)
    return {**values, "loss": dist.sum(loss_total), "grad_norm": grad_norm, "tokens": float(total_tokens)}


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
    metrics.update(tool_use_counts(r.trajectory for r in rollouts))
    metrics.update(call_target_counts(r.trajectory for r in rollouts))
    metrics.update(scan_counts(r.trajectory for r in rollouts))
    metrics.update(turn_metrics([r.trajectory for r in rollouts], [r.correct for r in rollouts]))
    return metrics
