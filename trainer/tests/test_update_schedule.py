"""The update schedule composed as veRL composes it (algorithms/update_schedule.py, trainers/grpo.py):
the mini-batch split of DataProto.split, what each micro-batch weighs under both scopes, Dr. GRPO's
constant, the KL term aggregated with loss_agg_mode, and the logged metrics as veRL's plain mean of
per-micro-batch values. Expected values are computed here from veRL's definitions written out
(dp_actor.update_policy, core_algos.agg_loss / compute_policy_loss_vanilla / kl_penalty), with
non-divisible group counts and non-default ε, never through the functions under test."""
import copy
import math
import random
from dataclasses import replace

import pytest
import torch

from test_ppo_update import _policy, _rollouts
from vistool_trainer.algorithms.update_schedule import (dr_grpo_constant, mean_over_micro_batches, micro_batch_weight,
                                                        mini_batch_ranges, split_ranges)
from vistool_trainer.engines.training_engine import TrainingEngine
from vistool_trainer.model.policy import score_tokens
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.trainers.grpo import _update


def verl_split(items: list, size: int) -> list[list]:
    """DataProto.split as veRL writes it: [self[i : i + split_size] for i in range(0, len(self), split_size)]."""
    return [items[i:i + size] for i in range(0, len(items), size)]


def test_the_split_is_verls_fixed_size_chunks_with_the_rest_last():
    # The case: 12 samples, groups of 2, 4 prompts a mini-batch: veRL gives [0–7], [8–11].
    assert mini_batch_ranges(12, 2, 4) == [range(0, 8), range(8, 12)]
    for groups in range(1, 14):
        for group_size in (1, 2, 3, 8):
            for per in (1, 2, 3, 5):
                samples = list(range(groups * group_size))
                expected = verl_split(samples, per * group_size)
                assert [list(part) for part in mini_batch_ranges(len(samples), group_size, per)] == expected, (groups, group_size, per)
                # Every chunk holds whole groups, because the split size is a multiple of the group size.
                assert all(len(part) % group_size == 0 for part in expected)
    assert split_ranges(5, 2) == [range(0, 2), range(2, 4), range(4, 5)] and split_ranges(0, 3) == []
    with pytest.raises(ValueError, match="at least 1"):
        split_ranges(4, 0)


@pytest.mark.parametrize("world", [2, 3])
def test_with_several_processes_the_ranks_chunks_together_are_one_processs_mini_batches(world):
    """Rank r rolls out prompts r, r + world, ... (Distributed.share); with ppo_mini_batch_size a
    multiple of world, chunk k of all ranks together is the single process's mini-batch k."""
    group_size = 2
    for groups in range(1, 16):
        for per in (world, 2 * world):
            single = [set(range(part.start // group_size, part.stop // group_size)) for part in mini_batch_ranges(groups * group_size, group_size, per)]
            count = len(single)
            together = [set() for _ in range(count)]
            for rank in range(world):
                mine = list(range(groups))[rank::world]
                for k, part in enumerate(mini_batch_ranges(len(mine) * group_size, group_size, per, count, world)):
                    together[k] |= {mine[index // group_size] for index in part}
            assert together == single, (groups, per)


def _random_chunks(rng: random.Random, sizes: list[int]):
    """Per micro-batch: per-sequence token loss lists (some sequences fully masked)."""
    return [[[rng.uniform(-2, 2) for _ in range(rng.choice([0, 1, 3, 5]))] for _ in range(size)] for size in sizes]


def _chunk_aggregate(chunk, mode, constant):
    present = [seq for seq in chunk if seq]
    if mode == "token-mean":
        tokens = sum(len(seq) for seq in chunk)
        return sum(sum(seq) for seq in chunk) / tokens if tokens else 0.0
    if mode == "seq-mean-token-sum":
        return sum(sum(seq) for seq in present) / max(len(present), 1)
    if mode == "seq-mean-token-mean":
        return sum(sum(seq) / len(seq) for seq in present) / max(len(present), 1)
    return sum(sum(seq) for seq in chunk) / constant


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"])
def test_micro_batch_weights_make_the_mini_batch_mean_each_scope_asks_for(mode):
    rng = random.Random(7)
    chunks = _random_chunks(rng, [3, 3, 2])
    constant = 11.0
    tokens = [sum(len(seq) for seq in chunk) for chunk in chunks]
    sequences = [sum(1 for seq in chunk if seq) for chunk in chunks]
    combined = [seq for chunk in chunks for seq in chunk]

    def weighted(scope):
        return sum(micro_batch_weight(mode, scope, tokens[i], sequences[i], sum(tokens), sum(sequences), len(chunks))
                   * _chunk_aggregate(chunk, mode, constant) for i, chunk in enumerate(chunks))

    # mini_batch: the aggregate over the whole mini-batch, as if it were one micro-batch (veRL's engine workers).
    assert weighted("mini_batch") == pytest.approx(_chunk_aggregate(combined, mode, constant), abs=1e-12)
    # micro_batch: the plain mean of the micro-batches' own aggregates (veRL's dp_actor, loss × 1/gradient_accumulation).
    assert weighted("micro_batch") == pytest.approx(sum(_chunk_aggregate(c, mode, constant) for c in chunks) / len(chunks), abs=1e-12)
    with pytest.raises(ValueError, match="loss_agg_scope"):
        micro_batch_weight(mode, "global", 1, 1, 1, 1, 1)


def test_the_two_scopes_differ_when_micro_batches_hold_different_token_counts():
    """The numbers docs/ALGORITHMS.md quotes: a micro-batch of 2 short answers (4 tokens, loss 1.0
    each) beside one of 2 long ones (40 tokens, loss 0.0 each)."""
    chunks = [[[1.0] * 2, [1.0] * 2], [[0.0] * 20, [0.0] * 20]]
    tokens, sequences = [4, 40], [2, 2]
    per_scope = {scope: sum(micro_batch_weight("token-mean", scope, tokens[i], sequences[i], 44, 4, 2) * _chunk_aggregate(c, "token-mean", 1)
                            for i, c in enumerate(chunks)) for scope in ("mini_batch", "micro_batch")}
    assert per_scope["mini_batch"] == pytest.approx(4 / 44) and per_scope["micro_batch"] == pytest.approx(0.5)


def test_dr_grpo_divides_by_a_constant_the_response_budget_unless_told_another():
    assert dr_grpo_constant(None, 48, 3) == 144.0
    assert dr_grpo_constant(512, 48, 3) == 512.0
    with pytest.raises(ValueError, match="must be positive"):
        dr_grpo_constant(0, 48, 3)


def test_logged_metrics_are_the_plain_mean_of_per_micro_batch_values():
    # Token-weighted, (0.5·2 + 0.0·98) / 100 = 0.01; veRL reports (0.5 + 0.0) / 2 = 0.25.
    assert mean_over_micro_batches([0.5, 0.0]) == 0.25 and mean_over_micro_batches([]) == 0.0


# ---- The whole update against veRL's loop, written out ---------------------------------------------------------------

def _verl_token_losses(log_prob, old, adv, low, high, c):
    """compute_policy_loss_vanilla per token (torch, differentiable): the loss and the clip indicators."""
    log_ratio = torch.clamp(log_prob - old, -20.0, 20.0)
    ratio = torch.exp(log_ratio)
    loss1 = -adv * ratio
    loss2 = -adv * torch.clamp(ratio, 1 - low, 1 + high)
    clip1 = torch.maximum(loss1, loss2)
    loss3 = -adv * c
    clip2 = torch.minimum(loss3, clip1)
    losses = torch.where(adv < 0, clip2, clip1)
    return losses, (loss2 > loss1).float(), ((clip1 > loss3) & (adv < 0)).float(), -log_ratio


def _verl_agg(matrix, mask, mode, constant):
    """core_algos.agg_loss without global batch info (one micro-batch's own aggregate)."""
    if mode == "token-mean":
        return (matrix * mask).sum() / mask.sum()
    sums = (matrix * mask).sum(-1)
    present = (mask.sum(-1) > 0).float()
    if mode == "seq-mean-token-sum":
        return (sums * present).sum() / present.sum()
    if mode == "seq-mean-token-mean":
        return (sums / (mask.sum(-1) + 1e-8) * present).sum() / present.sum()
    return sums.sum() / constant


def _k3(log_prob, ref):
    log_ratio = torch.clamp(ref - log_prob, -20.0, 20.0)
    return torch.clamp(torch.exp(log_ratio) - log_ratio - 1.0, -10.0, 10.0)


def _masked_mean(values, mask):
    return float(((values * mask).sum() / mask.sum()).item())


@pytest.mark.parametrize("mode, scope", [("token-mean", "mini_batch"), ("token-mean", "micro_batch"), ("seq-mean-token-mean", "mini_batch"),
                                         ("seq-mean-token-sum-norm", "mini_batch"), ("seq-mean-token-sum-norm", "micro_batch")])
def test_the_update_is_verls_loop_over_split_mini_batches_and_micro_batches(mode, scope):
    """6 groups of 2 with 4 prompts a mini-batch: mini-batches of 8 and 4 rollouts, as veRL splits
    them (an even spread would make 6 and 6); micro-batches of 3 rollouts cut across groups; two
    epochs; ε 0.1 / 0.4, c 3; KL k3 at 0.05 against the starting weights. Plain SGD, so the
    parameters compare the gradients."""
    torch.manual_seed(0)
    policy = _policy()
    rollouts = _rollouts(policy, groups=6, group_size=2, seed=4)
    advantages = torch.tensor([1.0, -1.0, 0.7, -0.7, -1.5, 1.5, 0.3, -0.3, 2.0, -2.0, -0.6, 0.6])
    rl = replace(resolve_config({}).rl, group_size=2, ppo_mini_batch_size=4, micro_batch_size=3, ppo_epochs=2, lr=0.3,
                 clip_ratio_low=0.1, clip_ratio_high=0.4, clip_ratio_c=3.0, loss_agg_mode=mode, loss_agg_scope=scope,
                 kl_coef=0.05, kl_estimator="k3", max_grad_norm=1e9, temperature=1.0)
    constant = 37.0
    start = copy.deepcopy(policy.model)
    reference = copy.deepcopy(policy.model).eval()
    twin = copy.deepcopy(policy.model)

    metrics = _update(policy, TrainingEngine(policy), torch.optim.SGD(policy.model.parameters(), lr=0.3), rollouts, advantages, rl,
                      reference, normalizer=constant)

    # veRL's loop, written out: old log-probs once, DataProto.split(mini × n), micro-batches of 3, SGD per mini-batch.
    encoded = [policy.encoder.training_segments(r.conversation)[0] for r in rollouts]
    # The tokens no sampler draws are out of every softmax, the trainer's and this loop's (model/sampling.py).
    never_sampled = tuple(policy.processor.control_token_ids)
    with torch.no_grad():
        old_inputs = policy.batch(encoded)
        old_all, old_mask, _ = score_tokens(start, old_inputs, suppressed_token_ids=never_sampled)
    optimizer = torch.optim.SGD(twin.parameters(), lr=0.3)
    clipfracs, lowers, kls = [], [], []
    indices = list(range(len(rollouts)))
    for _ in range(2):
        for mini in verl_split(indices, 4 * 2):
            optimizer.zero_grad()
            micros = verl_split(mini, 3)
            total_tokens = float(sum(sum(encoded[i].loss_mask) for i in mini))
            total_sequences = float(sum(1 for i in mini if any(encoded[i].loss_mask)))
            for micro in micros:
                inputs = policy.batch([encoded[i] for i in micro])
                log_prob, mask, _ = score_tokens(twin, inputs, suppressed_token_ids=never_sampled)
                with torch.no_grad():
                    ref, _, _ = score_tokens(reference, inputs, suppressed_token_ids=never_sampled)
                # The old log-probs at the same positions (scored once, before the update, in one batch).
                old = torch.zeros_like(log_prob)
                for row, i in enumerate(micro):
                    old[row][mask[row].bool()] = old_all[i][old_mask[i].bool()]
                adv = advantages[micro].unsqueeze(-1).expand_as(log_prob)
                losses, clipped, lower, neg_kl = _verl_token_losses(log_prob, old, adv, 0.1, 0.4, 3.0)
                kld = _k3(log_prob, ref)
                micro_loss = _verl_agg(losses, mask, mode, constant) + 0.05 * _verl_agg(kld, mask, mode, constant)
                if scope == "micro_batch":
                    micro_loss = micro_loss / len(micros)  # loss_scale_factor = 1 / gradient_accumulation
                elif mode == "token-mean":
                    micro_loss = micro_loss * mask.sum() / total_tokens  # the global token mean (engine workers)
                elif mode != "seq-mean-token-sum-norm":
                    micro_loss = micro_loss * (mask.sum(-1) > 0).sum() / total_sequences  # the global sequence mean
                micro_loss.backward()
                clipfracs.append(_masked_mean(clipped, mask))
                lowers.append(_masked_mean(lower, mask))
                kls.append(_masked_mean(kld.detach(), mask))
            optimizer.step()

    for (name, trained), (_, expected) in zip(policy.model.named_parameters(), twin.named_parameters()):
        torch.testing.assert_close(trained, expected, rtol=1e-4, atol=1e-6, msg=name)
    assert any(not torch.equal(a, b) for a, b in zip(policy.model.parameters(), start.parameters()))
    assert metrics["actor/optimizer_steps"] == 4 and len(clipfracs) == 2 * (3 + 2)
    assert metrics["actor/pg_clipfrac"] == pytest.approx(sum(clipfracs) / len(clipfracs), abs=1e-6)
    assert metrics["actor/pg_clipfrac_lower"] == pytest.approx(sum(lowers) / len(lowers), abs=1e-6)
    assert metrics["actor/kl"] == pytest.approx(sum(kls) / len(kls), abs=1e-6)
    assert 0 < metrics["actor/pg_clipfrac"] < 1 and math.isfinite(metrics["actor/ppo_kl"])
