"""The veRL agent loop gives a policy exactly what the trainer gives it (docs/CONTRACTS.md,
Presentation): the presented conversation of the demo's arms byte for byte (the golden file the
trainer and `vistool eval` are held to), the same first prompt token for token, and a trained
checkpoint writes through the loop the turns it writes in the trainer's own evaluation.

The trainer's side runs in the trainer's environment (.venv, trainer/tests/trained_policy.py): it
trains the micro checkpoint and reports its prompts and turns. Generation in the loop goes through
a scripted server manager where only the presentation is under test (a stand-in for vLLM, which
needs a GPU: it records each request and answers with the gold turns' ids), and through
TransformersServerManager, the bridge's CPU implementation of veRL's server manager, where the
trained policy itself must answer.
"""
from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import Qwen2_5_VLForConditionalGeneration
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.env_client import LocalEnvServer
from vistool_trainer.rollouts.presentation import presentation_of
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.run_config import load_config
from vistool_verl.agent_loop import VistoolAgentLoop
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config
from vistool_verl.transformers_server import TransformersServerManager

TRAINER_TESTS = repo_root() / "trainer" / "tests"
TRAINER_PYTHON = repo_root() / ".venv" / "bin" / "python"
sys.path.insert(0, str(TRAINER_TESTS))

from presented_conversation import ARMS, GOLDEN, arm_run_config, golden_task  # noqa: E402

needs_trainer = pytest.mark.skipif(not TRAINER_PYTHON.exists(), reason="the trainer's side runs in .venv (make venv)")


def trainer(*args: str) -> Any:
    """trained_policy.py in the trainer's own environment; its answer is the last stdout line."""
    result = subprocess.run([str(TRAINER_PYTHON), str(TRAINER_TESTS / "trained_policy.py"), *args], capture_output=True, text=True,
                            cwd=repo_root(), timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


class ScriptedManager:
    """veRL's server-manager call answered from a script of texts (each as its token ids closed by
    <|im_end|>); every request's prompt ids and images are kept."""

    def __init__(self, tokenizer: Any, script: list[str]):
        end = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.replies = [list(tokenizer(text, add_special_tokens=False)["input_ids"]) + [end] for text in script]
        self.requests: list[dict[str, Any]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       image_data: list[Any] | None = None, **_: Any) -> TokenOutput:
        turn = sum(1 for r in self.requests if r["request_id"] == request_id)
        self.requests.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "images": len(image_data or [])})
        ids = self.replies[turn]
        return TokenOutput(token_ids=ids, log_probs=[0.0] * len(ids), stop_reason="completed")


def run_loop(manager: Any, processor: Any, client: Any, token_file: Path, tasks: list[dict], config: Any, use_tools: bool,
             sampling: dict[str, Any] | None = None) -> list[Any]:
    cfg = trainer_config(response_length=768, prompt_length=3328, max_turns=config.env.max_turns)
    rows = [{"extra_info": {"task_json": json.dumps({k: v for k, v in t.items() if not k.startswith("_")}), "task_dir": t["_task_dir"]}}
            for t in tasks]

    async def run_all() -> list[Any]:
        outputs = []
        for row in rows:  # one at a time: the scripted manager counts turns per request
            loop = VistoolAgentLoop(DictConfigWrap(cfg), manager, processor.tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                    hf_model_type="qwen2_5_vl", max_turns=config.env.max_turns, max_tool_calls=config.env.max_tool_calls,
                                    use_tools=use_tools, presentation=presentation_of(config.policy), env_url=client.url,
                                    env_token_file=str(token_file))
            outputs.append(await loop.run(dict(sampling or {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}), **row))
        return outputs
    return asyncio.run(run_all())


def rendered(tokenizer: Any, prompt_ids: list[int]) -> str:
    """A prompt's text with each image's run of <|image_pad|> as one, as the golden file writes it."""
    return re.sub(r"(<\|image_pad\|>)+", "<|image_pad|>", tokenizer.decode(prompt_ids, skip_special_tokens=False))


def test_the_loop_presents_the_golden_conversation_in_each_demo_arm(tmp_path, micro_dir):
    tasks_path = golden_task(tmp_path)
    task = load_tasks(tasks_path)[0]
    golden = json.loads(GOLDEN.read_text())
    processor = load_processor(micro_dir)
    with LocalEnvServer(tasks_path.parent, tmp_path / "images", tmp_path / "token", tmp_path / "server.log") as client:
        gold = client.gold([task])[0]
        for arm in ARMS:
            config = arm_run_config(tmp_path, arm)
            manager = ScriptedManager(processor.tokenizer, [gold["tool_turns"][0], gold["answer"]])
            run_loop(manager, processor, client, tmp_path / "token", [task], config, use_tools=config.env.tools)
            assert [rendered(processor.tokenizer, r["prompt_ids"]) for r in manager.requests] == [p["text"] for p in golden[arm]], arm
            # The images sent with each prompt are the ones it shows: the view's hidden chart is not among them.
            assert [r["images"] for r in manager.requests] == [p["text"].count("<|image_pad|>") for p in golden[arm]], arm


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> dict[str, Path]:
    if not TRAINER_PYTHON.exists():
        pytest.skip("the trained checkpoint is made in .venv (make venv)")
    return {key: Path(value) for key, value in trainer("train", str(tmp_path_factory.mktemp("trained-micro"))).items()}


@needs_trainer
def test_the_loops_first_prompt_is_the_trainers_token_for_token(trained, tmp_path):
    policy = trained["checkpoint"] / "policy"
    expected = trainer("first-prompts", str(policy), str(trained["config"]), str(trained["tasks"]))
    config = load_config(trained["config"])
    tasks = load_tasks(trained["tasks"])[:4]
    processor = load_processor(policy)
    with LocalEnvServer(trained["tasks"].parent, tmp_path / "images", tmp_path / "token", tmp_path / "server.log") as client:
        for arm in ("tools", "no_tools"):
            manager = ScriptedManager(processor.tokenizer, ["<answer>low</answer>"])
            run_loop(manager, processor, client, tmp_path / "token", tasks, config, use_tools=arm == "tools")
            for task, request in zip(tasks, manager.requests):
                assert request["prompt_ids"] == expected[task["id"]][arm], (task["id"], arm)


@needs_trainer
def test_a_trained_checkpoint_writes_through_the_loop_the_turns_it_writes_in_the_trainers_evaluation(trained, tmp_path):
    """The run config keeps only the newest image in view, so every turn after a tool call is
    generated from a prompt the loop rebuilt from the env's (the chart hidden)."""
    expected = trainer("replies", str(trained["checkpoint"]), str(trained["config"]), str(trained["tasks"]))
    config = load_config(trained["config"])
    tasks = load_tasks(trained["tasks"])
    policy = trained["checkpoint"] / "policy"
    processor = load_processor(policy)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(policy, dtype=torch.float32)
    manager = TransformersServerManager(model, processor, max_new_tokens=config.eval.max_new_tokens)
    calls = 0
    with LocalEnvServer(trained["tasks"].parent, tmp_path / "images", tmp_path / "token", tmp_path / "server.log") as client:
        for arm in ("tools", "no_tools"):
            outputs = run_loop(manager, processor, client, tmp_path / "token", tasks, config, use_tools=arm == "tools",
                               sampling={"temperature": 0.0, "top_p": 1.0, "top_k": -1, "logprobs": True})
            for task, output in zip(tasks, outputs):
                trajectory = output.extra_fields["vistool_trajectory"]
                turns = [turn["text"] for turn in trajectory["turns"] if turn["role"] == "assistant"]
                assert turns == expected[task["id"]][arm]["turns"], (task["id"], arm)
                calls += trajectory["tool_calls"]
    assert calls >= len(tasks) // 2, "the trained policy calls the tool, so later turns read the rebuilt prompt"
