"""The vistool agent loop inside veRL's agent-loop machinery, against the real env server.

Generation goes through TransformersServerManager, vistool's implementation of veRL's
server-manager interface on transformers: the one stand-in here, because vLLM and SGLang need a
GPU. Everything else is real: veRL's AgentLoopBase and token builder, the micro Qwen2.5-VL, the
env server, generated tasks.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import torch
from transformers import Qwen2_5_VLForConditionalGeneration
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
from verl.utils.dataset.rl_dataset import RLHFDataset

from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.agent_loop import VistoolAgentLoop
from vistool_verl.env_messages import to_verl_messages
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config
from vistool_verl.transformers_server import TransformersServerManager

DEMO_POLICY = repo_root() / "runs" / "demo" / "tools" / "checkpoints"


def run_loops(model_dir: Path, env_server, rows: list[dict], max_turns: int = 3, presentation: dict | None = None):
    client, token_file, _ = env_server
    processor = load_processor(model_dir)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32)
    manager = TransformersServerManager(model, processor, max_new_tokens=40, seed=0)
    cfg = trainer_config(response_length=768, prompt_length=3328, max_turns=max_turns)

    async def run_all():
        loops = [VistoolAgentLoop(DictConfigWrap(cfg), manager, processor.tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                  hf_model_type="qwen2_5_vl", max_turns=max_turns, presentation=presentation,
                                  env_url=client.url, env_token_file=str(token_file)) for _ in rows]
        return await asyncio.gather(*(loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}, **row)
                                      for loop, row in zip(loops, rows)))
    return asyncio.run(run_all()), processor


def rows_for(tasks: list[dict]) -> list[dict]:
    return [{"extra_info": {"task_json": json.dumps({k: v for k, v in t.items() if not k.startswith("_")}), "task_dir": t["_task_dir"]}}
            for t in tasks]


def segments(ids: list[int], mask: list[int]) -> list[tuple[int, list[int]]]:
    """Runs of equal mask value: [(mask, ids), ...]."""
    runs: list[tuple[int, list[int]]] = []
    for token, m in zip(ids, mask):
        if runs and runs[-1][0] == m:
            runs[-1][1].append(token)
        else:
            runs.append((m, [token]))
    return runs


def check_tokens_match_the_env(output, processor, opening_messages) -> None:
    tokenizer = processor.tokenizer
    trajectory = output.extra_fields["vistool_trajectory"]
    # The prompt is the env's opening conversation as the processor renders it on its own.
    messages, images = to_verl_messages(opening_messages)
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    expected_prompt = processor(text=[text], images=images, return_tensors="pt")["input_ids"][0].tolist()
    assert output.prompt_ids == expected_prompt
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs)
    # Policy tokens (mask 1) are exactly the assistant turns the env recorded, each closed by <|im_end|>;
    # everything between them (mask 0) holds the env's observation text and nothing the policy wrote.
    runs = segments(output.response_ids, output.response_mask)
    written = [tokenizer.decode(ids, skip_special_tokens=False) for m, ids in runs if m == 1]
    assistant = [turn["text"] for turn in trajectory["turns"] if turn["role"] == "assistant"]
    assert [w.removesuffix("<|im_end|>") for w in written] == assistant
    observations = [tokenizer.decode(ids, skip_special_tokens=False) for m, ids in runs if m == 0]
    # The env's answer to the last turn ends the episode, so it never reaches the policy.
    turns = trajectory["turns"]
    last_assistant = max(i for i, turn in enumerate(turns) if turn["role"] == "assistant")
    env_turns = [turn for turn in turns[:last_assistant] if turn["role"] != "assistant"]
    assert len(observations) == len(env_turns)
    for rendered, turn in zip(observations, env_turns):
        assert turn["text"].strip() in rendered
        assert rendered.count("<|vision_start|>") == len(turn.get("images") or [])
    # One image per vision block, in order: the task's image, then each one a tool made.
    image_refs = [trajectory["task"]["image"]] + [ref for turn in env_turns for ref in turn.get("images") or []]
    assert len(output.multi_modal_data["images"]) == len(image_refs)


def test_the_loop_is_registered_under_its_name():
    assert _agent_loop_registry["vistool_agent"] == {"_target_": "vistool_verl.agent_loop.VistoolAgentLoop"}


def test_a_fresh_micro_policy_runs_multi_turn_episodes_whose_tokens_are_the_conversation_the_env_saw(tasks_path, micro_dir, env_server):
    tasks = load_tasks(tasks_path)[:2]
    outputs, processor = run_loops(micro_dir, env_server, rows_for(tasks))
    client = env_server[0]
    for task, output in zip(tasks, outputs):
        opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                          "options": {"tools": True, "max_turns": 3, "max_tool_calls": 3, "images": "path"}}])[0]
        client.close_episode(opened["episode_id"])
        check_tokens_match_the_env(output, processor, opened["observation"]["prompt"])
        trajectory = output.extra_fields["vistool_trajectory"]
        assert 1 <= sum(1 for t in trajectory["turns"] if t["role"] == "assistant") <= 3
        assert output.num_turns == 2 * sum(1 for t in trajectory["turns"] if t["role"] == "assistant")  # system+user, then pairs


@pytest.mark.skipif(not DEMO_POLICY.exists(), reason="needs the demo's trained micro policy (`make demo`) to make tool calls; "
                                                     "a fresh micro policy writes no valid call")
def test_a_trained_policy_calls_tools_and_the_edited_images_join_the_sequence(env_server):
    policy = sorted(DEMO_POLICY.iterdir())[-1] / "policy"
    demo_tasks = load_tasks(repo_root() / "runs" / "demo" / "data" / "eval" / "tasks.jsonl")[:3]
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    scratch = Path(env_server[1]).parent
    with LocalEnvServer(Path(demo_tasks[0]["_task_dir"]), scratch / "demo-images", scratch / "demo-token") as client:
        presentation = {"system_prompt": "Answer the question about the chart. You may call an image tool first."}
        outputs, processor = run_loops(policy, (client, scratch / "demo-token", None), rows_for(demo_tasks), presentation=presentation)
        with_images = [o for o in outputs if len(o.multi_modal_data["images"]) > 1]
        assert with_images, "the trained policy made no tool call"
        for task, output in zip(demo_tasks, outputs):
            opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                              "options": {"tools": True, "max_turns": 3, "max_tool_calls": 3, "images": "path",
                                                          "presentation": presentation}}])[0]
            client.close_episode(opened["episode_id"])
            check_tokens_match_the_env(output, processor, opened["observation"]["prompt"])


def test_a_row_without_its_task_is_refused_with_what_to_do(micro_dir, env_server):
    with pytest.raises(ValueError, match="extra_info.task_json"):
        run_loops(micro_dir, env_server, [{"extra_info": {"index": 0}}])
