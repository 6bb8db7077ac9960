"""Deep multi-turn search in the trainer (issue 45): Mini-o3's over-turn masking
(rl.mask_truncated_turns), eval.max_turns, and the per-step turn metrics. Expected values by hand."""
import copy
from dataclasses import replace

import pytest
import torch

from vistool_trainer.algorithms.turn_masking import TRUNCATED_MASKED, masked_loss_mask, over_turn_mask
from vistool_trainer.model.policy import score_tokens
from vistool_trainer.rollouts.rollout import EpisodeOptions
from vistool_trainer.rollouts.turn_metrics import eval_turn_metrics, merge_turn_metrics, turn_metrics
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.trainers.evaluate import evaluation_options
from vistool_trainer.trainers.grpo import _update

from test_ppo_update import _engine, _policy, _rl, _rollouts


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_only_episodes_that_hit_the_turn_cap_are_masked_and_only_when_asked():
    reasons = ["answer", "max_turns", "max_tool_calls", None, "env_error", "max_turns"]
    assert over_turn_mask(reasons, True) == [False, True, False, False, False, True]
    assert over_turn_mask(reasons, False) == [False] * 6
    assert masked_loss_mask([0, 0, 1, 1, 0, 1], True) == [0] * 6
    assert masked_loss_mask([0, 0, 1, 1, 0, 1], False) == [0, 0, 1, 1, 0, 1]


def test_the_defaults_are_off_and_null():
    config = resolve_config({})
    assert config.rl.mask_truncated_turns is False and config.eval.max_turns is None


def test_evaluations_take_eval_max_turns_else_the_runs():
    options = EpisodeOptions(max_turns=6)
    assert evaluation_options(options, None) is options
    assert evaluation_options(options, 32).max_turns == 32
    assert evaluation_options(options, 32).tools == options.tools and options.max_turns == 6


def _call(ok=True, iou=None):
    call = {"name": "zoom_in", "ok": ok}
    if iou is not None:
        call["target_iou"] = iou
    return call


def _trajectory(turns, end_reason, calls=()):
    assistant = [{"role": "assistant", "calls": list(calls) if i == 0 else []} for i in range(turns)]
    return {"turns": [t for turn in assistant for t in (turn, {"role": "tool"})], "end_reason": end_reason,
            "tool_calls": sum(1 for c in calls if c["ok"])}


def test_turn_metrics_by_hand():
    trajectories = [
        _trajectory(3, "answer", [_call(iou=0.5), _call(iou=0.25)]),  # 3 turns, 2 calls, 2 IoUs
        _trajectory(1, "answer"),                                    # 1 turn, no call
        _trajectory(6, "max_turns", [_call(iou=0.0), _call(ok=False, iou=0.9), _call()]),  # not answered; the failed call's IoU ignored
    ]
    metrics = turn_metrics(trajectories, [True, False, False])
    # Answered: 3 and 1 turns → 2. Calls that ran: 2 + 0 + 2 = 4, one correct → 4. IoUs 0.5, 0.25, 0 → 0.25.
    assert metrics == {"rollout/answered": 2.0, "rollout/turns_to_answer": 2.0, "rollout/calls_per_correct": 4.0,
                       "tools/crop_iou_calls": 3.0, "tools/crop_iou": 0.25}
    assert eval_turn_metrics(trajectories, [True, False, False]) == {"eval/turns_to_answer": 2.0, "eval/calls_per_correct": 4.0,
                                                                     "eval/crop_iou": 0.25}


def test_undefined_values_are_left_out_never_zero():
    metrics = turn_metrics([_trajectory(2, "max_turns", [_call()])], [False])
    assert metrics == {"rollout/answered": 0.0, "tools/crop_iou_calls": 0.0}


def test_ranks_merge_by_their_own_counts():
    # Rank 0: 4 rollouts, 1 answered in 2 turns, 1 IoU of 0.8, 3 calls (0.75 a rollout), 1 correct (0.25).
    # Rank 1: 2 rollouts, 3 answered in 4 turns on average, 3 IoUs averaging 0.4, 1 call (0.5), 0 correct.
    parts = [({"rollout/answered": 1.0, "rollout/turns_to_answer": 2.0, "tools/crop_iou_calls": 1.0, "tools/crop_iou": 0.8,
               "tool/calls_mean": 0.75, "acc/mean": 0.25}, 4),
             ({"rollout/answered": 3.0, "rollout/turns_to_answer": 4.0, "tools/crop_iou_calls": 3.0, "tools/crop_iou": 0.4,
               "tool/calls_mean": 0.5, "acc/mean": 0.0}, 2)]
    merged = merge_turn_metrics(parts)
    # (1·2 + 3·4) / 4 = 3.5; (0.8 + 3·0.4) / 4 = 0.5; (3 + 1) calls / 1 correct = 4.
    assert merged == pytest.approx({"rollout/answered": 4.0, "rollout/turns_to_answer": 3.5, "tools/crop_iou_calls": 4.0,
                                    "tools/crop_iou": 0.5, "rollout/calls_per_correct": 4.0})


def test_a_masked_episode_trains_nothing_and_the_others_keep_their_group_advantages():
    """Two of sixteen rollouts masked: the update is the REINFORCE step over the other fourteen, each
    with the advantage it had in its whole group (computed here, as grpo_step does, before masking)."""
    policy = _policy()
    rollouts = _rollouts(policy)
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5] * 4)
    masked = [False] * 16
    masked[1] = masked[6] = True
    twin = copy.deepcopy(policy.model)
    optimizer = torch.optim.SGD(policy.model.parameters(), lr=0.5)
    metrics = _update(policy, _engine(policy), optimizer, rollouts, advantages, _rl(ppo_mini_batch_size=None, max_grad_norm=1e9), None,
                      masked=masked)
    keep = [i for i in range(16) if not masked[i]]
    inputs = policy.batch([policy.encoder.encode(rollouts[i].messages, add_generation_prompt=False) for i in keep])
    log_probs, mask, _ = score_tokens(twin, inputs, suppressed_token_ids=policy.processor.control_token_ids)
    assert metrics["actor/tokens"] == float(mask.sum())  # the masked episodes' tokens are not in the totals
    loss = -(advantages[keep].unsqueeze(-1) * log_probs * mask).sum() / mask.sum()
    loss.backward()
    torch.optim.SGD(twin.parameters(), lr=0.5).step()
    for (name, trained), (_, expected) in zip(policy.model.named_parameters(), twin.named_parameters()):
        torch.testing.assert_close(trained, expected, rtol=1e-5, atol=1e-6, msg=name)


def test_grpo_step_masks_the_episodes_that_hit_the_turn_cap(env_server, vbar_data):
    from test_rollout_records import _step

    # An untrained micro policy rarely answers: with one turn nearly every episode ends on the cap.
    torch.manual_seed(0)
    result, rl = _step(env_server, vbar_data, max_turns=1, dynamic_sampling=False, mask_truncated_turns=True)
    truncated = sum(r.trajectory["end_reason"] == "max_turns" for r in result.rollouts)
    assert truncated > 0 and result.metrics[TRUNCATED_MASKED] == truncated
    if truncated == len(result.rollouts):
        assert result.metrics["actor/tokens"] == 0.0
    torch.manual_seed(0)
    off, _ = _step(env_server, vbar_data, max_turns=1, dynamic_sampling=False)
    assert off.metrics[TRUNCATED_MASKED] == 0.0 and off.metrics["actor/tokens"] > 0
