"""A turn cut at its token cap (no <|im_end|>: vLLM stops on max_tokens mid-text) and the episode
going on: the loop closes the turn with <|im_end|> as context (mask 0), so the next prompt it sends
the rollout server is the env server's presented prompt, token for token, and the trained tokens
are exactly what the sampler wrote. Here the cut falls in the middle of a tool call's JSON, the
case that reaches the env as a broken call and gets an error observation.

Generation is scripted (a stand-in for vLLM, which needs a GPU: it answers with fixed token ids and
records each request); the env server, veRL's token builder and the micro Qwen2.5-VL's processor are
real. The expected prompt is rendered from the env's own presented conversation, replayed on the
same server, with the processor alone.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.agent_loop import VistoolAgentLoop, close_turn
from vistool_verl.env_messages import to_verl_messages
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config

PRESENTATION = {"system_prompt": "Answer with <answer>...</answer> or call a tool.", "view": {}}


class Recording:
    """Answers each request with the next scripted ids and keeps the prompt ids it was sent."""

    def __init__(self, replies: list[list[int]]):
        self.replies = replies
        self.prompts: list[list[int]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any) -> TokenOutput:
        self.prompts.append(list(prompt_ids))
        ids = self.replies[len(self.prompts) - 1]
        return TokenOutput(token_ids=ids, log_probs=[-1.0] * len(ids), stop_reason="length")


def test_a_turn_cut_mid_json_is_closed_and_the_next_prompt_is_the_env_s(tasks_path, micro_dir, env_server):
    client, token_file, _ = env_server
    task = load_tasks(tasks_path)[0]
    gold = client.gold([task])[0]
    processor = load_processor(micro_dir)
    tokenizer = processor.tokenizer
    end = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
    call_ids = list(tokenizer(gold["tool_turns"][0], add_special_tokens=False)["input_ids"])
    cut = call_ids[: len(call_ids) // 2]  # stopped at max_tokens inside the JSON: no <|im_end|>
    cut_text = tokenizer.decode(cut, skip_special_tokens=False)
    assert "}" not in cut_text.split("{", 1)[-1] or not cut_text.rstrip().endswith("</tool_call>"), cut_text
    answer = list(tokenizer(gold["answer"], add_special_tokens=False)["input_ids"]) + [end]
    manager = Recording([cut, answer])
    cfg = trainer_config(response_length=2048, prompt_length=4096, max_turns=2)
    row = {"extra_info": {"task_json": json.dumps({k: v for k, v in task.items() if not k.startswith("_")}), "task_dir": task["_task_dir"]}}

    async def run() -> Any:
        loop = VistoolAgentLoop(DictConfigWrap(cfg), manager, tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                hf_model_type="qwen2_5_vl", max_turns=2, max_tool_calls=1, use_tools=True, presentation=PRESENTATION,
                                env_url=client.url, env_token_file=str(token_file), max_new_tokens=len(cut))
        return await loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}, **row)
    output = asyncio.run(run())

    # The env's presented prompt after that turn, replayed on the same server and rendered by the processor alone.
    options = {"tools": True, "max_turns": 2, "max_tool_calls": 1, "images": "path", "presentation": PRESENTATION}
    opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                     "options": options}])[0]
    step = client.step_episodes([{"episode_id": opened["episode_id"], "text": cut_text}])[0]
    client.close_episode(opened["episode_id"])
    assert not step["done"] and step["info"]["errors"], "a call cut mid-JSON is a broken call the env answers with an error"
    messages, images = to_verl_messages(step["observation"]["prompt"])
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    expected = processor(text=[text], images=images, return_tensors="pt")["input_ids"][0].tolist()
    assert manager.prompts[1] == expected

    # Trained: the cut turn as sampled and the answer; the closing <|im_end|>, the newline and the observation are not.
    trained = [t for t, m in zip(output.response_ids, output.response_mask) if m]
    assert trained == cut + answer
    closing = output.response_ids[len(cut)]
    assert closing == end and output.response_mask[len(cut)] == 0 and output.response_logprobs[len(cut)] == 0.0


def test_closing_touches_only_a_turn_without_its_end():
    assert close_turn([5, 6], [1, 1], [-0.1, -0.2], 9) == ([5, 6, 9], [1, 1, 0], [-0.1, -0.2, 0.0])
    assert close_turn([5, 9], [1, 1], None, 9) == ([5, 9], [1, 1], None)
    end_of_text = 4
    # A turn stopped on <|endoftext|> (vLLM stops on every end-of-sequence id): the stop token becomes
    # the closing <|im_end|>, as context.
    assert close_turn([5, 4], [1, 1], [-0.1, -0.2], 9, {end_of_text}) == ([5, 9], [1, 0], [-0.1, 0.0])


def test_a_tool_turn_that_stops_on_endoftext_reaches_the_env_without_it_and_the_next_prompt_is_the_env_s(tasks_path, micro_dir, env_server):
    """M2 of issue 41: the env gets the call's text without the stop token, the next prompt the rollout
    server is sent is the env's presented prompt, and the trained tokens are the call and the answer."""
    client, token_file, _ = env_server
    task = load_tasks(tasks_path)[0]
    gold = client.gold([task])[0]
    processor = load_processor(micro_dir)
    tokenizer = processor.tokenizer
    end, end_of_text = (int(tokenizer.convert_tokens_to_ids(t)) for t in ("<|im_end|>", "<|endoftext|>"))
    call = list(tokenizer(gold["tool_turns"][0], add_special_tokens=False)["input_ids"])
    answer = list(tokenizer(gold["answer"], add_special_tokens=False)["input_ids"]) + [end]
    manager = Recording([call + [end_of_text], answer])
    cfg = trainer_config(response_length=2048, prompt_length=4096, max_turns=2)
    row = {"extra_info": {"task_json": json.dumps({k: v for k, v in task.items() if not k.startswith("_")}), "task_dir": task["_task_dir"]}}

    async def run() -> Any:
        loop = VistoolAgentLoop(DictConfigWrap(cfg), manager, tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                hf_model_type="qwen2_5_vl", max_turns=2, max_tool_calls=1, use_tools=True, presentation=PRESENTATION,
                                env_url=client.url, env_token_file=str(token_file), max_new_tokens=64)
        return await loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}, **row)
    output = asyncio.run(run())

    trajectory = output.extra_fields["vistool_trajectory"]
    assert trajectory["turns"][0]["text"] == gold["tool_turns"][0] and "<|endoftext|>" not in json.dumps(trajectory)
    options = {"tools": True, "max_turns": 2, "max_tool_calls": 1, "images": "path", "presentation": PRESENTATION}
    opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                     "options": options}])[0]
    step = client.step_episodes([{"episode_id": opened["episode_id"], "text": gold["tool_turns"][0]}])[0]
    client.close_episode(opened["episode_id"])
    messages, images = to_verl_messages(step["observation"]["prompt"])
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert manager.prompts[1] == processor(text=[text], images=images, return_tensors="pt")["input_ids"][0].tolist()
    trained = [t for t, m in zip(output.response_ids, output.response_mask) if m]
    assert trained == call + answer
    assert output.response_ids[len(call)] == end and output.response_mask[len(call)] == 0 and output.response_logprobs[len(call)] == 0.0
