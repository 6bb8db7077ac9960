"""rl.train_turns 'final' (agent_loop.yaml `train_turns`): the response mask the loop hands veRL
equals VTool-R1 v2's, written here from its source (VTool-R1/training-v2, recipe/vtool/vtool.py,
`VToolAgentLoop.run`) and not from the loop's code:

- the first assistant turn, when the source's parser reads a tool attempt in it (anything but
  NOTOOL: a well-formed call or a broken one), gets mask 0 (its log-probs are zeroed too);
- the observation after it gets mask 0;
- the next assistant turn is the final answer, mask 1, and the loop ends;
- a first turn with no tool attempt is the answer: mask 1, and the loop ends.

Generation is scripted (a stand-in for vLLM, which needs a GPU: it answers with fixed texts); the
env server, veRL's token builder and the micro Qwen2.5-VL's tokenizer and processor are real.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.agent_loop import VistoolAgentLoop
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config
from vistool_verl.turn_masks import check_train_turns, masked_turns


class Scripted:
    """veRL's server-manager call answered from a script of texts, each closed by <|im_end|>."""

    def __init__(self, tokenizer: Any, script: list[str]):
        end = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.replies = [list(tokenizer(text, add_special_tokens=False)["input_ids"]) + [end] for text in script]
        self.turn = 0

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any) -> TokenOutput:
        ids = self.replies[self.turn]
        self.turn += 1
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


def run_loop(micro_dir, env_server, task: dict, script: list[str], train_turns: str):
    client, token_file, _ = env_server
    processor = load_processor(micro_dir)
    cfg = trainer_config(response_length=2048, prompt_length=4096, max_turns=2)
    row = {"extra_info": {"task_json": json.dumps({k: v for k, v in task.items() if not k.startswith("_")}), "task_dir": task["_task_dir"]}}

    async def run() -> Any:  # the loop binds the running event loop when it is made
        loop = VistoolAgentLoop(DictConfigWrap(cfg), Scripted(processor.tokenizer, script), processor.tokenizer, processor, RLHFDataset,
                                DictConfigWrap(cfg.data), hf_model_type="qwen2_5_vl", max_turns=2, max_tool_calls=1, use_tools=True,
                                presentation={"system_prompt": "Answer with <answer>...</answer> or call a tool.", "view": {}},
                                env_url=client.url, env_token_file=str(token_file), train_turns=train_turns)
        return await loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}, **row)
    return asyncio.run(run())


def runs(mask: list[int]) -> list[tuple[int, int]]:
    """Runs of equal mask value as (value, length)."""
    out: list[tuple[int, int]] = []
    for m in mask:
        if out and out[-1][0] == m:
            out[-1] = (m, out[-1][1] + 1)
        else:
            out.append((m, 1))
    return out


def vtool_source_mask(first_turn: int, tool_attempted: bool, observation: int, answer: int) -> list[int]:
    """recipe/vtool/vtool.py's response mask for a first turn of `first_turn` tokens, its observation
    and the answer after it (the lengths), built as its run() builds it."""
    mask = [1] * first_turn
    if not tool_attempted:
        return mask
    mask = [0] * first_turn  # `for index in range(current_resp_start, ...): response_mask[index] = 0`
    mask += [0] * observation  # `response_mask += [0] * len(observation_ids)`
    return mask + [1] * answer  # the final turn: `response_mask += [1] * len(response_ids_chunk)`, then break


@pytest.fixture(scope="module")
def task_and_gold(tasks_path, env_server):
    task = load_tasks(tasks_path)[0]
    return task, env_server[0].gold([task])[0]


@pytest.mark.parametrize("first", ["gold call", "broken call"])
def test_final_masks_the_tool_call_turn_as_vtool_r1_v2_does(micro_dir, env_server, task_and_gold, first):
    task, gold = task_and_gold
    first_text = gold["tool_turns"][0] if first == "gold call" else '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": '
    script = [first_text, gold["answer"]]
    every = run_loop(micro_dir, env_server, task, script, "all")
    final = run_loop(micro_dir, env_server, task, script, "final")
    assert final.response_ids == every.response_ids and final.prompt_ids == every.prompt_ids
    # With every turn trained the response is: first turn (1), observation (0), answer (1).
    shape = runs(every.response_mask)
    assert [value for value, _ in shape] == [1, 0, 1], shape
    (_, first_len), (_, obs_len), (_, answer_len) = shape
    assert final.response_mask == vtool_source_mask(first_len, True, obs_len, answer_len)
    # Only the answer is trained, and it is the text the env scored.
    tokenizer = load_processor(micro_dir).tokenizer
    trained = [t for t, m in zip(final.response_ids, final.response_mask) if m]
    assert tokenizer.decode(trained, skip_special_tokens=False).removesuffix("<|im_end|>") == gold["answer"]


def test_final_trains_a_direct_answer_whole(micro_dir, env_server, task_and_gold):
    task, gold = task_and_gold
    output = run_loop(micro_dir, env_server, task, [gold["answer"]], "final")
    assert output.response_mask == vtool_source_mask(len(output.response_ids), False, 0, 0)


def test_the_rule_on_spans_and_its_refusals():
    mask = [1, 1, 1, 0, 0, 1, 1]
    assert masked_turns(mask, [(0, 3), (5, 7)], [True, False], "final") == [0, 0, 0, 0, 0, 1, 1]
    assert masked_turns(mask, [(0, 3), (5, 7)], [True, False], "all") == mask
    # A tool turn whose observation did not fit is the last in the sequence: it stays masked (vtool.py breaks after masking it).
    assert masked_turns([1, 1], [(0, 2)], [True], "final") == [0, 0]
    assert check_train_turns("final") == "final"
    with pytest.raises(ValueError, match="train_turns is 'last'; it must be one of all, final"):
        check_train_turns("last")
