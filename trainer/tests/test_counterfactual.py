"""The counterfactual replay on the trainer's side: the tool effect's interval against Newcombe's
published paired example (1998, method 10: the table 36, 12, 2, 0 → 0.2, [0.0569, 0.3404]), which
turns a replay forces, and — against the real `vistool serve` and the micro policy — that a forced
turn goes to the server exactly as given while the withheld observation shows the unedited image."""
from __future__ import annotations

from dataclasses import replace

import pytest

from vistool_trainer.algorithms.tool_effect import ToolEffectPair, tool_effect, tool_effect_metrics
from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.answer_text import answer_text, grid_answer
from vistool_trainer.rollouts.counterfactual import forced_turns, replay_withheld
from vistool_trainer.rollouts.rollout import EpisodeOptions, load_tasks, run_rollouts
from vistool_trainer.trainers.evaluate import counterfactual_metrics


def _pairs(count: int, real: bool, withheld: bool, replayed: bool, changed: bool) -> list[ToolEffectPair]:
    return [ToolEffectPair(real, withheld, replayed, changed)] * count


def test_the_tool_effect_reproduces_newcombes_paired_example():
    pairs = (_pairs(30, True, True, False, False) + _pairs(6, True, True, True, False)
             + _pairs(12, True, False, True, True) + _pairs(2, False, True, True, True))
    effect = tool_effect(pairs)
    assert effect["effect"] == pytest.approx(0.2, abs=1e-12)
    assert effect["ci95"] == pytest.approx([0.0569, 0.3404], abs=1e-4)
    assert (effect["n"], effect["replayed"], effect["method"]) == (50, 20, "newcombe-paired")
    assert effect["answer_changed_rate"] == pytest.approx(14 / 20)
    metrics = tool_effect_metrics(effect)
    assert set(metrics) == {"eval/tool_effect", "eval/tool_effect_lo", "eval/tool_effect_hi", "eval/answer_changed_rate", "eval/counterfactual_n"}
    # Nothing replayed: no answer-changed rate to report.
    assert "eval/answer_changed_rate" not in tool_effect_metrics(tool_effect(_pairs(3, True, True, False, False)))


def test_a_replay_forces_the_turns_up_to_the_first_successful_call():
    def turn(*oks: bool) -> dict:
        return {"role": "assistant", "calls": [{"ok": ok} for ok in oks]}
    observation = {"role": "tool"}
    assert forced_turns({"turns": [turn(False), observation, turn(True), observation, turn(True), observation, turn()]}) == 2
    assert forced_turns({"turns": [turn(False), observation, turn()]}) is None
    assert forced_turns({"turns": []}) is None


def test_answers_are_compared_as_the_scorer_compares_them():
    assert grid_answer("The Nile.") == grid_answer("nile")
    assert grid_answer(["A", "b"]) == grid_answer(["a", "B"])
    assert grid_answer(None) != grid_answer("7")
    assert answer_text(["1", "2"]) == "1 || 2" and answer_text(None) is None


def _gold_replies(client, tasks, options):
    """Each task's gold tool turn then its gold answer, as assistant replies (the env writes them)."""
    gold = client.gold(tasks)
    return [[{"role": "assistant", "content": [{"type": "text", "text": text}]} for text in [*g["tool_turns"][:1], g["answer"]]] for g in gold]


def _tiny_policy(tasks):
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), [t["question"] for t in tasks] * 5, 1, "cpu")


def test_forced_turns_reach_the_server_as_given_and_withheld_results_show_the_unedited_image(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[1])[:2]
    policy = _tiny_policy(tasks)
    options = EpisodeOptions(max_turns=3, presentation={"system_prompt": ""})
    forced = _gold_replies(client, tasks, options)
    real = run_rollouts(policy, client, tasks, 1, options, 8, 1.0, greedy=True, forced=forced)
    withheld = run_rollouts(policy, client, tasks, 1, replace(options, withhold_results=True), 8, 1.0, greedy=True, forced=forced)
    for task, replies, a, b in zip(tasks, forced, real, withheld):
        assert [r["content"][0]["text"] for r in a.conversation.replies] == [r["content"][0]["text"] for r in replies]
        assert [r["content"][0]["text"] for r in b.conversation.replies] == [r["content"][0]["text"] for r in replies]
        # The gold answer is right both ways: forcing it is not sampling it.
        assert a.correct and b.correct and a.trajectory["answer"] == b.trajectory["answer"]
        question_ref = next(p["ref"] for p in b.conversation.prompts[0][-1]["content"] if p["type"] == "image")
        shown = lambda rollout: [p for p in rollout.conversation.prompts[1][-1]["content"] if p["type"] == "image"]  # noqa: E731
        texts = lambda rollout: [p["text"] for p in rollout.conversation.prompts[1][-1]["content"] if p["type"] == "text"]  # noqa: E731
        assert [p["ref"] for p in shown(b)] == [question_ref], "withheld: the observation shows the unedited task image"
        assert [p["ref"] for p in shown(a)] != [question_ref], "as run: the tool's output"
        assert texts(a) == texts(b), "the same observation text"
        call_a, call_b = a.trajectory["turns"][0]["calls"][0], b.trajectory["turns"][0]["calls"][0]
        assert call_a["ok"] and call_b["ok"] and call_a["image_out"] == call_b["image_out"]


def test_replaying_the_real_runs_records_a_counterfactual_and_the_effect(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[1])[:2]
    policy = _tiny_policy(tasks)
    options = EpisodeOptions(max_turns=3, presentation={"system_prompt": ""})
    # The real runs: the gold call then the gold answer (right); a run without a call is not replayed.
    real = run_rollouts(policy, client, tasks, 1, options, 8, 1.0, greedy=True, forced=_gold_replies(client, tasks, options))
    replays = replay_withheld(policy, client, tasks, real, options, 8)
    assert all(set(r) == {"answer", "correct", "changed"} for r in replays)
    for rollout, replay in zip(real, replays):
        # The untrained micro policy writes no valid answer after the forced call: wrong, and changed.
        assert replay["changed"] == (grid_answer(rollout.trajectory["answer"]) != grid_answer(replay["answer"]))
        assert replay["correct"] is (replay["answer"] is not None and not replay["changed"])
    metrics = counterfactual_metrics(policy, client, tasks, real, options, 8)
    right_withheld = sum(bool(r["correct"]) for r in replays)
    assert metrics["eval/tool_effect"] == pytest.approx((2 - right_withheld) / 2)
    assert metrics["eval/counterfactual_n"] == 2.0
    assert all("counterfactual" in r.trajectory for r in real)
