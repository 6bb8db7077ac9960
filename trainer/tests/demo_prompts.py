"""The token ids the trainer gives the demo's micro policy, for one held-out task, in both arms.

`python trainer/tests/demo_prompts.py` writes trainer/tests/golden/demo-prompts.json; the test
test_demo_prompts.py computes the same things again and compares them with that file, byte for
byte. The demo's recipe and its published numbers rest on these ids: what the policy reads when
it opens an episode, what it reads after one tool observation (the edited image, or, with the
tools off, the refusal), and the sequences SFT trains on. A change that moves any of them moves
the demo, and must come with a new golden file and a new demo run (docs/DEMO.md).

Everything is the trainer's own path: the demo's resolved run configs (run/demo.py), its task
generator options (5,000 training tasks, seed 1), the tokenizer corpus the trainer builds
(`tokenizer_corpus`), the real env server, `run_rollouts` and `gold_conversations`. Only the
sampling is scripted: the policy writes the task's gold tool call and then its gold answer, so
the second prompt always follows a tool observation, whatever the untrained weights would write.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "demo-prompts.json"


class ScriptedPolicy:
    """The demo's real policy (its tokenizer and encoder) writing `script`'s turns in order, and
    keeping the encoding of every prompt it is asked to continue."""

    def __init__(self, policy: Any, script: list[str]):
        self.policy = policy
        self.encoder = policy.encoder
        self.processor = policy.processor
        self.script = list(script)
        self.prompts: list[Any] = []

    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float, greedy: bool) -> list[Any]:
        from vistool_trainer.model.policy import SampledTurn

        turns = []
        for messages in conversations:
            self.prompts.append(self.encoder.encode(messages, add_generation_prompt=True))
            text = self.script[len(self.prompts) - 1]
            ids = list(self.processor.tokenizer(text, add_special_tokens=False)["input_ids"]) + [self.processor.end_of_turn_id]
            turns.append(SampledTurn(token_ids=ids, text=text, truncated=False))
        return turns


def _ids_and_text(policy: Any, encoded: Any) -> dict[str, Any]:
    return {"ids": list(encoded.input_ids), "text": policy.processor.tokenizer.decode(encoded.input_ids, skip_special_tokens=False)}


def _segments(policy: Any, segments: list[Any]) -> list[dict[str, Any]]:
    return [{**_ids_and_text(policy, segment), "loss_mask": list(segment.loss_mask)} for segment in segments]


def demo_data(root: Path) -> tuple[Path, Path]:
    """The demo's two splits, generated as `make demo` generates them (run/demo.py)."""
    from vistool_trainer.run.demo import demo_config, generate_demo_data

    return generate_demo_data(root, demo_config(str(root), 20.0, arm="tools"))


def compute(root: Path, train_path: Path, eval_path: Path) -> dict[str, Any]:
    """Both arms' prompts and SFT sequences for the first held-out task (see the module's text)."""
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.rollout import load_tasks, run_rollouts
    from vistool_trainer.run.demo import demo_config
    from vistool_trainer.run.train import episode_options, tokenizer_corpus
    from vistool_trainer.trainers.sft import gold_conversations

    train_tasks, eval_tasks = load_tasks(train_path), load_tasks(eval_path)
    task = eval_tasks[0]
    roots = [train_path.parent.resolve(), eval_path.parent.resolve()]
    result: dict[str, Any] = {"task": task["id"], "question": task["question"], "arms": {}}
    with LocalEnvServer(roots, root / "images", root / "token", root / "server.log") as client:
        gold = client.gold([task])[0]
        script = [gold["tool_turns"][0], gold["answer"]]
        for arm in ("tools", "text"):
            config = demo_config(str(root / "runs"), 20.0, arm=arm)
            corpus = tokenizer_corpus(config, client, train_tasks)
            policy = Policy.create(config.policy, corpus, config.seed, "cpu")
            options = episode_options(config)
            scripted = ScriptedPolicy(policy, script)
            run_rollouts(scripted, client, [task], 1, options, config.rl.max_new_tokens, 1.0, greedy=True)
            if len(scripted.prompts) != 2:
                raise AssertionError(f"{arm}: expected two prompts (opening, after one observation), got {len(scripted.prompts)}")
            conversations = gold_conversations(client, [task], options, seed=config.seed)
            direct = gold_conversations(client, [task], options, seed=config.seed, direct_answers=True) if options.tools else []
            sft: dict[str, Any] = {}
            for name, conversation in [("gold", conversations[0])] + [("direct", d) for d in direct]:
                sft[name] = {"training": _segments(policy, policy.encoder.training_segments(conversation)),
                             "after_tool": _segments(policy, policy.encoder.after_tool_segments(conversation)),
                             "calls_without_images": _segments(policy, policy.encoder.call_segments_without_images(conversation))}
            result["arms"][arm] = {"opening": _ids_and_text(policy, scripted.prompts[0]),
                                   "after_observation": _ids_and_text(policy, scripted.prompts[1]),
                                   "sft": sft}
    return result


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        train_path, eval_path = demo_data(root)
        result = compute(root, train_path, eval_path)
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
