"""The GRPO/DAPO math checked on fixed vectors against veRL's definitions (docs/ALGORITHMS.md),
written out here in plain Python floats so the check does not reuse the code under test."""
import math

import pytest
import torch

from vistool_trainer.algorithms.advantages import group_advantages
from vistool_trainer.algorithms.dynamic_sampling import has_spread, is_informative, sample_informative_groups
from vistool_trainer.algorithms.update_schedule import mini_batch_ranges as mini_batches
from vistool_trainer.algorithms.kl_penalty import kl_penalty
from vistool_trainer.algorithms.loss_aggregation import aggregate_loss
from vistool_trainer.algorithms.policy_loss import clipped_policy_loss

TOL = 1e-6


def _std_unbiased(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def test_grpo_advantage_is_score_minus_group_mean_over_unbiased_std_plus_eps():
    scores = [1.0, 0.0, 0.5, 1.1, 0.2, 0.9, 0.0]
    groups = ["a", "a", "a", "b", "b", "b", "b"]
    got = group_advantages(torch.tensor(scores), groups).tolist()
    for name in ("a", "b"):
        members = [s for s, g in zip(scores, groups) if g == name]
        mean, std = sum(members) / len(members), _std_unbiased(members)
        for index, (score, group) in enumerate(zip(scores, groups)):
            if group == name:
                assert got[index] == pytest.approx((score - mean) / (std + 1e-6), abs=TOL)
    assert got[0] == pytest.approx(0.5 / (0.5 + 1e-6), abs=TOL)


def test_group_of_one_uses_mean_zero_std_one_as_verl_does():
    got = group_advantages(torch.tensor([0.7, 1.0, 1.0]), ["solo", "pair", "pair"]).tolist()
    assert got[0] == pytest.approx(0.7 / (1 + 1e-6), abs=TOL)
    assert got[1:] == [0.0, 0.0]


def test_dr_grpo_advantage_is_not_divided_by_std():
    got = group_advantages(torch.tensor([3.0, 1.0, 2.0]), [0, 0, 0], normalize_by_std=False).tolist()
    assert got == pytest.approx([1.0, -1.0, 0.0], abs=TOL)


def _reference_token_loss(logp, old, adv, low, high, c):
    ratio = math.exp(max(-20.0, min(20.0, logp - old)))
    first = -adv * ratio
    second = -adv * min(max(ratio, 1 - low), 1 + high)
    upper = max(first, second)
    return min(-adv * c, upper) if adv < 0 else upper


def test_clipped_loss_matches_dapo_clip_higher_and_dual_clip_token_by_token():
    logp = [-0.1, -2.0, -0.5, -3.0, -0.05, 0.0, -25.0, -1.0]
    old = [-0.5, -1.0, -0.5, -0.5, -4.0, -30.0, -1.0, -1.2]
    adv = [1.0, 1.0, -1.0, -2.0, -0.5, 0.3, 2.0, -1.5]
    result = clipped_policy_loss(torch.tensor([logp]), torch.tensor([old]), torch.tensor([adv]), torch.ones(1, 8))
    expected = [_reference_token_loss(a, b, c, 0.2, 0.28, 10.0) for a, b, c in zip(logp, old, adv)]
    assert result.per_token[0].tolist() == pytest.approx(expected, abs=TOL)
    assert result.loss.item() == pytest.approx(sum(expected) / 8, abs=TOL)
    # Token 4 has ratio e^3.95 ≈ 52 and A = -0.5: the dual clip caps its loss at 0.5·10 = 5.
    assert result.per_token[0, 4].item() == pytest.approx(5.0, abs=TOL)
    # clip-higher: A > 0, ratio e^0.4 ≈ 1.49 is clipped at 1.28, not 1.2.
    assert result.per_token[0, 0].item() == pytest.approx(-1.28, abs=TOL)


def test_clipfrac_counts_tokens_where_the_clipped_branch_wins():
    logp = torch.tensor([[0.0, 0.0, 1.0, -1.0]])
    old = torch.zeros(1, 4)
    adv = torch.tensor([[1.0, -1.0, 1.0, -1.0]])
    result = clipped_policy_loss(logp, old, adv, torch.ones(1, 4))
    # ratio e ≈ 2.72 > 1.28 with A>0 is clipped; ratio e^-1 ≈ 0.37 < 0.8 with A<0 is clipped.
    assert result.clipfrac.item() == pytest.approx(0.5, abs=TOL)


def test_masked_tokens_do_not_change_the_loss():
    logp = torch.tensor([[-0.1, -0.2, -9.0]])
    old = torch.tensor([[-0.2, -0.2, 0.0]])
    adv = torch.tensor([1.0])
    with_pad = clipped_policy_loss(logp, old, adv, torch.tensor([[1.0, 1.0, 0.0]]))
    without = clipped_policy_loss(logp[:, :2], old[:, :2], adv, torch.ones(1, 2))
    assert with_pad.loss.item() == pytest.approx(without.loss.item(), abs=TOL)


LOSS = torch.tensor([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 0.0, 0.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("token-mean", (1 + 2 + 3 + 10 + 20) / 5),
        ("seq-mean-token-sum", ((1 + 2 + 3) + (10 + 20)) / 2),
        ("seq-mean-token-mean", ((1 + 2 + 3) / 3 + (10 + 20) / 2) / 2),
        ("seq-mean-token-sum-norm", (1 + 2 + 3 + 10 + 20) / 4),
    ],
)
def test_each_aggregation_mode_matches_verl(mode, expected):
    assert aggregate_loss(LOSS, MASK, mode).item() == pytest.approx(expected, abs=TOL)


def test_unknown_aggregation_mode_is_an_error_naming_the_valid_ones():
    with pytest.raises(ValueError, match="token-mean"):
        aggregate_loss(LOSS, MASK, "sum")


@pytest.mark.parametrize(
    "estimator, reference",
    [
        ("k1", lambda lp, ref: lp - ref),
        ("abs", lambda lp, ref: abs(lp - ref)),
        ("k2", lambda lp, ref: 0.5 * (lp - ref) ** 2),
        ("k3", lambda lp, ref: max(-10, min(10, math.exp(max(-20, min(20, ref - lp))) - max(-20, min(20, ref - lp)) - 1))),
        ("low_var_kl", lambda lp, ref: max(-10, min(10, math.exp(max(-20, min(20, ref - lp))) - max(-20, min(20, ref - lp)) - 1))),
    ],
)
def test_kl_estimators_match_verl(estimator, reference):
    logp = [-0.3, -1.2, -0.01, -5.0, -0.7]
    ref = [-0.5, -0.2, -0.01, -0.5, -9.0]
    got = kl_penalty(torch.tensor(logp), torch.tensor(ref), estimator).tolist()
    assert got == pytest.approx([reference(a, b) for a, b in zip(logp, ref)], abs=TOL)


def test_k3_is_non_negative_and_clamped_at_ten():
    got = kl_penalty(torch.tensor([-20.0, -1.0]), torch.tensor([0.0, -1.0]), "k3").tolist()
    assert got == [10.0, 0.0]


def test_dynamic_sampling_drops_zero_spread_groups_and_keeps_generating():
    scripted = [
        [("p1", [1, 1, 1]), ("p2", [0, 1, 0]), ("p3", [0, 0, 0])],
        [("p4", [0, 0, 0]), ("p5", [1, 0, 1])],
        [("p6", [0, 1, 1]), ("p7", [1, 0, 0])],
    ]
    calls = []

    def generate(batch_index):
        calls.append(batch_index)
        return scripted[batch_index]

    outcome = sample_informative_groups(generate, lambda group: group[1], target_groups=3, max_num_gen_batches=10)
    assert [name for name, _ in outcome.kept] == ["p2", "p5", "p6"]
    assert calls == [0, 1, 2]
    assert outcome.dropped_groups == 3 and outcome.reached_target


def test_dynamic_sampling_stops_at_max_num_gen_batches_with_what_it_kept():
    outcome = sample_informative_groups(lambda i: [(i, [1.0, 1.0])], lambda g: g[1], target_groups=2, max_num_gen_batches=4)
    assert outcome.kept == [] and outcome.generation_batches == 4 and not outcome.reached_target


def test_disabled_dynamic_sampling_keeps_every_group_from_one_batch():
    outcome = sample_informative_groups(lambda i: [("a", [0, 0]), ("b", [1, 0])], lambda g: g[1], 2, 10, enabled=False)
    assert len(outcome.kept) == 2 and outcome.generation_batches == 1


def test_a_group_of_one_has_no_spread():
    assert not has_spread([0.3]) and has_spread([0.3, 0.4]) and not has_spread([1.0, 1.0])


def _verl_vanilla(logp, old, adv, mask, low, high, c):
    """veRL's compute_policy_loss_vanilla written out per token in floats: (token losses,
    pg_clipfrac, pg_clipfrac_lower, ppo_kl) with masked means over `mask`."""
    losses, clipped, lower, kl = [], [], [], []
    for lp, o, a in zip(logp, old, adv):
        log_ratio = max(-20.0, min(20.0, lp - o))
        ratio = math.exp(log_ratio)
        loss1 = -a * ratio
        loss2 = -a * min(max(ratio, 1 - low), 1 + high)
        clip1 = max(loss1, loss2)
        loss3 = -a * c
        clip2 = min(loss3, clip1)
        losses.append(clip2 if a < 0 else clip1)
        clipped.append(1.0 if loss2 > loss1 else 0.0)
        lower.append(1.0 if clip1 > loss3 and a < 0 else 0.0)
        kl.append(-log_ratio)
    def masked(values):
        return sum(v * m for v, m in zip(values, mask)) / sum(mask)
    return losses, masked(clipped), masked(lower), masked(kl)


def test_clip_ranges_and_dual_clip_follow_verl_with_non_default_epsilons():
    """ε_low 0.1, ε_high 0.4, c 3: a loss that hard-coded 0.2 / 0.28 / 10 anywhere would differ."""
    logp = [-0.10, -0.60, -1.00, -0.20, -3.00, -0.05, -0.90, -2.00, -0.30, -1.50]
    old = [-0.50, -0.40, -1.00, -1.50, -0.50, -0.10, -0.80, -0.30, -0.30, -0.20]
    adv = [1.0, 1.0, -1.0, -0.7, 2.0, -2.0, -1.2, 0.5, 1.0, -0.4]
    mask = [1, 1, 1, 1, 1, 1, 1, 1, 0, 1]
    result = clipped_policy_loss(torch.tensor([logp]), torch.tensor([old]), torch.tensor([adv]), torch.tensor([mask], dtype=torch.float32),
                                 clip_low=0.1, clip_high=0.4, clip_ratio_c=3.0)
    losses, clipfrac, lower, kl = _verl_vanilla(logp, old, adv, mask, 0.1, 0.4, 3.0)
    assert result.per_token[0].tolist() == pytest.approx(losses, abs=TOL)
    assert result.loss.item() == pytest.approx(sum(v * m for v, m in zip(losses, mask)) / sum(mask), abs=TOL)
    assert result.clipfrac.item() == pytest.approx(clipfrac, abs=TOL)
    assert result.clipfrac_lower.item() == pytest.approx(lower, abs=TOL)
    assert result.approx_kl.item() == pytest.approx(kl, abs=TOL)
    # The hand-picked tokens exercise each branch: ratio e^0.4 = 1.49 with A>0 clips at 1.4 (not 1.28);
    # ratio e^-0.2 = 0.82 with A>0 is not clipped (ε_low only binds A<0); token 3 (ratio e^1.3 = 3.7, A<0)
    # is capped by the dual clip at 0.7·3 = 2.1, not 0.7·10.
    assert result.per_token[0, 0].item() == pytest.approx(-1.4, abs=TOL)
    assert result.per_token[0, 3].item() == pytest.approx(2.1, abs=TOL)
    assert 0 < clipfrac < 1 and lower > 0


def test_ratio_below_one_minus_eps_low_clips_only_negative_advantages():
    logp = torch.log(torch.tensor([[0.85, 0.85, 0.95, 0.95]]))  # old 0: ratios 0.85 and 0.95
    adv = torch.tensor([[-1.0, 1.0, -1.0, 1.0]])
    result = clipped_policy_loss(logp, torch.zeros(1, 4), adv, torch.ones(1, 4), clip_low=0.1, clip_high=0.4, clip_ratio_c=3.0)
    # 0.85 < 1 − 0.1 with A < 0 is the one clipped token; 0.95 sits inside [0.9, 1.4].
    assert result.clipfrac.item() == pytest.approx(0.25, abs=TOL)
    assert result.per_token[0].tolist() == pytest.approx([0.9, -0.85, 0.95, -0.95], abs=TOL)


MASK_WITH_EMPTY = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
LOSS_WITH_EMPTY = torch.tensor([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 0.0, 0.0], [7.0, 7.0, 7.0, 7.0]])


@pytest.mark.parametrize("mode, expected", [
    ("seq-mean-token-sum", ((1 + 2 + 3) + (10 + 20)) / 2),
    ("seq-mean-token-mean", ((1 + 2 + 3) / 3 + (10 + 20) / 2) / 2),
    ("token-mean", (1 + 2 + 3 + 10 + 20) / 5),
])
def test_a_fully_masked_sequence_is_left_out_of_the_sequence_mean(mode, expected):
    assert aggregate_loss(LOSS_WITH_EMPTY, MASK_WITH_EMPTY, mode).item() == pytest.approx(expected, abs=TOL)


def test_dynamic_sampling_keeps_a_group_of_one_as_dapos_recipe_does():
    assert is_informative([0.3]) and is_informative([0.0, 1.0]) and not is_informative([1.0, 1.0])
    outcome = sample_informative_groups(lambda i: [("solo", [0.0]), ("flat", [1.0, 1.0]), ("mixed", [0.0, 1.0])], lambda g: g[1], 3, 1)
    assert [name for name, _ in outcome.kept] == ["solo", "mixed"] and outcome.dropped_groups == 1


def test_mini_batches_hold_whole_groups_of_the_configured_number_of_prompts():
    assert mini_batches(32, 8, None) == [range(0, 32)]
    assert mini_batches(32, 8, 1) == [range(0, 8), range(8, 16), range(16, 24), range(24, 32)]
    assert mini_batches(32, 8, 2) == [range(0, 16), range(16, 32)]
    assert mini_batches(24, 8, 2) == [range(0, 16), range(16, 24)]  # the last mini-batch takes what is left
    # A rank told how many optimizer steps the whole batch takes pads with empty mini-batches.
    assert mini_batches(16, 8, 1, count=4) == [range(0, 8), range(8, 16), range(16, 16), range(16, 16)]
    assert mini_batches(24, 8, 2, count=2) == mini_batches(24, 8, 2)


def test_a_group_whose_rewards_differ_only_by_rounding_is_dropped_where_verl_would_keep_it():
    """veRL's DAPO filter keeps a group when np.std(metric) > 0; this one drops spreads ≤ 1e-9
    (docs/ALGORITHMS.md). The case that tells them apart, and what keeping it would train on."""
    rounded = [0.1 + 0.2, 0.3]
    mean = sum(rounded) / 2
    population_std = math.sqrt(sum((v - mean) ** 2 for v in rounded) / 2)
    assert population_std > 0  # veRL keeps it
    assert not has_spread(rounded) and not is_informative(rounded)  # this trainer drops it
    advantages = group_advantages(torch.tensor(rounded, dtype=torch.float64), ["g", "g"])
    assert advantages.abs().max().item() < 1e-9  # a kept slot that carries no gradient
    assert has_spread([0.3, 0.3 + 2e-9])  # a real difference, however small, is kept
