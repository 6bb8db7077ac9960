"""SFT + GRPO for a few steps against the REAL env server (`vistool serve`, started by the
trainer itself) on tasks from the REAL generator (`vistool data gen`): the run directory and the
event stream a person and the VS Code extension read."""
import io
import json
from pathlib import Path

from model_under_test import on_qwen_fixture, policy_section

from vistool_trainer.run.events import EventStream
from vistool_trainer.run.run_config import resolve_config
from record_schemas import assert_valid_metrics_lines, assert_valid_rollout_records
from vistool_trainer.run.run_directory import read_json_lines
from vistool_trainer.run.train import train


def small_config(tmp: Path, train_path: Path, eval_path: Path, name: str, **sections) -> dict:
    raw = {
        "name": name, "seed": 3, "output_dir": str(tmp / name), "device": "cpu",
        "data": {"train": str(train_path), "eval": str(eval_path)},
        # The micro policy, or the Qwen fixture under `make test-qwen` (model_under_test.py).
        "policy": policy_section(system_prompt=""),
        "env": {"max_turns": 2, "max_tool_calls": 1},
        "sft": {"steps": 3, "batch_size": 4},
        "rl": {"steps": 2, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False},
        "eval": {"n": 3, "max_new_tokens": 8},
        "checkpoint": {"every_steps": 1, "keep": 5},
    }
    for section, values in sections.items():
        raw[section] = {**raw.get(section, {}), **values} if isinstance(values, dict) else values
    return resolve_config(raw)


def test_sft_then_grpo_through_the_real_env_server_writes_the_run_directory_and_events(tmp_path, vbar_data, judge_server):
    train_path, eval_path = vbar_data
    stdout = io.StringIO()
    judge = {"judge": {"enabled": True, "base_url": f"http://127.0.0.1:{judge_server.server_port}/v1", "max_retries": 0}}
    config = small_config(tmp_path, train_path, eval_path, "full", rewards=judge,
                          sft={"steps": 3, "batch_size": 4, "probe_tasks": 2, "probe_every": 2})
    code = train(config, events=EventStream(stdout=stdout, stderr=io.StringIO()))
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert code == 0, [e for e in events if e["event"] == "failed"]
    names = [event["event"] for event in events]
    assert names[0] == "started" and names[-1] == "finished"
    assert {"step", "rollouts", "checkpoint", "eval"} <= set(names)
    # The warm-up's gold replay says how far it got, and ends on the whole count before the first SFT step.
    gold = [e for e in events if e["event"] == "progress" and e["what"] == "gold conversations"]
    assert gold and gold[-1]["stage"] == "sft" and gold[-1]["done"] == gold[-1]["total"] > 0
    assert events.index(gold[-1]) < next(i for i, e in enumerate(events) if e["event"] == "step")
    run = tmp_path / "full"
    metrics = read_json_lines(run / "metrics.jsonl")
    rl = [m for m in metrics if m["stage"] == "rl"]
    assert [m["rl/step"] for m in rl] == [1, 2]
    # The SFT probe ran on steps 2 and 3 (every 2, and the last) on the two held-out tasks' gold turns.
    probed = [m["sft/step"] for m in metrics if m["stage"] == "sft" and "sft/probe_call_acc" in m]
    assert probed == [2, 3]
    assert all(0.0 <= m[key] <= 1.0 for m in metrics if "sft/probe_call_acc" in m
               for key in ("sft/probe_call_acc", "sft/probe_answer_after_tool_acc"))
    for key in ("reward/mean", "reward/accuracy", "reward/format", "reward/tool_bonus", "reward/no_tool_factor",
                "acc/mean", "tool/call_rate", "tool/error_rate", "response_length/mean",
                "turns/mean", "actor/entropy", "actor/pg_clipfrac", "actor/pg_clipfrac_lower", "actor/ppo_kl", "actor/kl", "actor/grad_norm", "sampling/kept_groups",
                "timing/gen_s", "timing/env_s", "timing/train_s",
                # the server's judge counters, from the score responses (the judge is on in this run's rewards)
                "judge/requests", "judge/failures", "judge/cache_hits",
                # which calls fail and why, counted per step (tool_metrics.py)
                "errors/E1", "errors/E4"):
        assert key in rl[0], key
    assert [m["label"] for m in metrics if m["stage"] == "eval"] == ["before", "after_sft", "after_rl"]
    rollouts = read_json_lines(run / "rollouts" / "step-000004.jsonl")
    assert len(rollouts) == 4 and {"prompt_id", "group", "turns", "reward", "advantage", "reward_breakdown", "reward_notes"} <= set(rollouts[0])
    # The server's reasons for each reward travel into the record (a random policy gives no answer).
    assert all(any("no final answer" in note or "answer" in note for note in r["reward_notes"]) for r in rollouts), rollouts[0]["reward_notes"]
    # Rollouts the update trained on carry their token view: the sampled tokens of each assistant turn
    # spell its text, with a log-probability (≤ 0) and an entropy (≥ 0) per token.
    every_step = [r for path in sorted((run / "rollouts").glob("step-*.jsonl")) for r in read_json_lines(path)]
    # Every line the run wrote is what the record contracts say (the schemas the panels' types come from).
    assert_valid_rollout_records(every_step)
    assert_valid_metrics_lines(metrics)
    viewed = [r for r in every_step if "token_view" in r]
    assert viewed and all(r["kept"] for r in viewed), [(r["kept"], "token_view" in r) for r in every_step]
    for record in viewed:
        for entry in record["token_view"]:
            turn = record["turns"][entry["turn"]]
            assert turn["role"] == "assistant"
            assert "".join(entry["tokens"]).removesuffix("<|im_end|>") == turn["text"]
            assert len(entry["logprob"]) == len(entry["entropy"]) == len(entry["mask"]) == len(entry["tokens"])
            assert all(lp <= 0 for lp in entry["logprob"]) and all(e >= 0 for e in entry["entropy"])
    # The weights travel too, so the viewer can show weight × value; they are the run config's.
    weights = json.loads((run / "config.json").read_text())["rewards"]["weights"]
    assert all(r["reward_weights"] == {k: float(v) for k, v in weights.items()} for r in rollouts), rollouts[0]["reward_weights"]
    # The server wrote the images the rollouts name into this run's images/ folder.
    first_image = rollouts[0]["task"]["image"]
    assert (run / "images" / f"{first_image}.png").exists()
    assert json.loads((run / "run.json").read_text())["status"] == "finished"
    assert (run / "config.json").exists()
    # Every evaluation kept each held-out task's rollout in each arm (rollouts/eval-<label>.jsonl),
    # in the record schema, the two arms of a task on consecutive lines, at the evaluation's step.
    eval_tasks = [json.loads(line)["id"] for line in eval_path.read_text().splitlines() if line.strip()][:3]
    for line in (m for m in metrics if m["stage"] == "eval"):
        kept = read_json_lines(run / "rollouts" / f"eval-{line['label']}.jsonl")
        assert_valid_rollout_records(kept)
        assert [(r["prompt_id"], r["arm"], r["group"]) for r in kept] == [(t, arm, g) for t in eval_tasks for g, arm in enumerate(("tools", "no_tools"))]
        assert {r["label"] for r in kept} == {line["label"]} and {r["step"] for r in kept} == {line["step"]}
        for arm in ("tools", "no_tools"):
            assert sum(r["correct"] for r in kept if r["arm"] == arm) == line[f"eval/correct_{arm}"]
        assert all((run / "images" / f"{r['task']['image']}.png").exists() for r in kept)
    # A checkpoint evaluated afterwards (the editor's Evaluate Checkpoint) keeps its records beside them, at its step.
    from vistool_trainer.run.evaluate_command import evaluate_checkpoint
    newest = sorted((run / "checkpoints").glob("step-*"))[-1]
    assert evaluate_checkpoint(str(run / "config.json"), str(newest), 2) == 0
    afterwards = read_json_lines(run / "rollouts" / f"eval-checkpoint_{newest.name.replace('-', '_')}.jsonl")
    assert [(r["prompt_id"], r["arm"]) for r in afterwards] == [(t, arm) for t in eval_tasks[:2] for arm in ("tools", "no_tools")]
    assert {r["step"] for r in afterwards} == {json.loads((newest / "trainer_state.json").read_text())["global_step"]}
    assert_valid_rollout_records(afterwards)


def test_a_paused_run_resumed_reaches_the_same_weights_as_an_uninterrupted_run(tmp_path, vbar_data):
    import torch
    from safetensors.torch import load_file

    train_path, eval_path = vbar_data
    quiet = lambda: EventStream(stdout=io.StringIO(), stderr=io.StringIO())
    no_eval = {"n": 3, "max_new_tokens": 8, "before_and_after": False}
    assert train(small_config(tmp_path, train_path, eval_path, "straight", eval=no_eval), events=quiet()) == 0
    split = small_config(tmp_path, train_path, eval_path, "split", eval=no_eval)
    assert train(split, max_steps=4, events=quiet()) == 0  # 3 SFT steps + 1 RL step, then a checkpoint
    assert json.loads((tmp_path / "split" / "run.json").read_text())["status"] == "paused"
    assert train(split, resume=True, events=quiet()) == 0
    final = lambda name: load_file(str(sorted((tmp_path / name / "checkpoints").glob("step-*"))[-1] / "policy" / "model.safetensors"))
    a, b = final("straight"), final("split")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6, msg=key)


def test_a_run_resumed_mid_rl_keeps_the_kl_reference_rl_started_from(tmp_path, vbar_data):
    """With a KL term, the reference is the policy as RL began. A run paused after two RL steps and
    resumed must compare with that policy, not with the checkpoint it resumed from: its later steps'
    KL and its final weights equal an uninterrupted run's."""
    import torch
    from safetensors.torch import load_file

    train_path, eval_path = vbar_data
    quiet = lambda: EventStream(stdout=io.StringIO(), stderr=io.StringIO())
    no_eval = {"n": 3, "max_new_tokens": 8, "before_and_after": False}
    with_kl = {"kl_coef": 1.0, "lr": 0.05, "steps": 4, "prompts_per_step": 4, "group_size": 4, "max_new_tokens": 24}
    # An untrained policy earns 0 everywhere, so no advantage would move it; a repetition check that
    # fires on any repeated word gives its samples different rewards, and RL's first step an update.
    spread = {"repetition": {"ngram_size": 1, "max_ngram_occurrences": 1}}
    if on_qwen_fixture():
        # The fixture's random head over 151,936 rows is nearly uniform: at T = 1 its 24 tokens
        # almost never repeat a word, every sample earns 0 and the KL stays 0.0 at every step (the
        # test could not tell a right reference from a wrong one). At T = 0.1 about half its samples
        # loop on a word (4 of 8 in a probe of the raw fixture), which spreads the rewards.
        with_kl["temperature"] = 0.1
    assert train(small_config(tmp_path, train_path, eval_path, "straight", eval=no_eval, rl=with_kl, rewards=spread), events=quiet()) == 0
    split = small_config(tmp_path, train_path, eval_path, "split", eval=no_eval, rl=with_kl, rewards=spread)
    assert train(split, max_steps=5, events=quiet()) == 0  # 3 SFT steps + 2 RL steps, then a checkpoint
    assert (tmp_path / "split" / "kl-reference" / "complete").exists()
    assert train(split, resume=True, events=quiet()) == 0
    kl = lambda name: [line["actor/kl"] for line in read_json_lines(tmp_path / name / "metrics.jsonl") if "actor/kl" in line]
    straight, resumed = kl("straight"), kl("split")
    assert len(straight) == 4 and len(resumed) == 4
    assert max(straight[2:]) > 0, f"the policy has moved away from the reference by the steps after the pause: {straight}"
    for a, b in zip(straight, resumed):
        assert abs(a - b) <= 1e-6 * max(1.0, abs(a)), (straight, resumed)
    final = lambda name: load_file(str(sorted((tmp_path / name / "checkpoints").glob("step-*"))[-1] / "policy" / "model.safetensors"))
    a, b = final("straight"), final("split")
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6, msg=key)
