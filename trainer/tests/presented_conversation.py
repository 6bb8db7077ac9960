"""The presented conversation of one task of the demo's kind, under the demo's two arms, as each
path hands it to its policy: the trainer's rollouts, `vistool eval`, and (in the veRL bridge's
tests) the veRL agent loop. trainer/tests/golden/presented-conversation.json holds it, written by
`python trainer/tests/presented_conversation.py`; each path's test compares its own with it, byte
for byte.

For each arm: the opening prompt and the prompt after one observation (the gold call's edited
image with the tools on; the refusal with them off). Each prompt is kept two ways: the messages
(roles, text parts, images numbered in order of first appearance, since a PNG's hash depends on
the machine's fonts) and the text the chat template renders from them, an image as one
`<|image_pad|>`. The policy's turns are scripted (the task's gold call, then its gold answer), so
the second prompt always follows an observation.
"""
from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "presented-conversation.json"
ARMS = ("tools", "text")


def golden_task(root: Path) -> Path:
    """One held-out task of the demo's kind (its generator options), into `root/data`."""
    from dataclasses import replace

    from vistool_trainer.run.demo import demo_config
    from vistool_trainer.run.train import generate_tasks

    generate = replace(demo_config(str(root / "runs"), 20.0).data.generate, n_eval=1)
    return generate_tasks(root / "data", generate, 1, "test")


def arm_run_config(root: Path, arm: str) -> Any:
    """The demo's resolved run config for `arm` (run/demo.py)."""
    from vistool_trainer.run.demo import demo_config

    return demo_config(str(root / "runs"), 20.0, arm=arm)


def image_key(part: dict[str, Any]) -> str:
    """An image's identity: the env's content hash, or the hash of an inline PNG's bytes (the same thing)."""
    if part.get("ref") and not str(part["ref"]).startswith("sha256-"):
        return str(part["ref"])
    data = str(part.get("data", ""))
    return hashlib.sha256(base64.b64decode(data.split(",", 1)[1] if data.startswith("data:") else data)).hexdigest()


def normalized(prompts: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each prompt as {messages, text}; images numbered across the arm's prompts by first appearance."""
    from vistool_trainer.model.chat_template import pieces_as_text, render_pieces

    numbers: dict[str, int] = {}
    out = []
    for prompt in prompts:
        messages = []
        for message in prompt:
            content = message["content"] if isinstance(message["content"], list) else [{"type": "text", "text": message["content"]}]
            parts = []
            for part in content:
                if part.get("type") == "image":
                    parts.append({"image": numbers.setdefault(image_key(part), len(numbers) + 1)})
                else:
                    parts.append({"text": part["text"]})
            messages.append({"role": message["role"], "content": parts})
        # A turn the policy wrote renders as its text (the sampled ids it carries in the trainer spell the same text).
        as_text = [{key: value for key, value in message.items() if key != "token_ids"} for message in prompt]
        out.append({"messages": messages, "text": pieces_as_text(render_pieces(as_text, add_generation_prompt=True))})
    return out


class RecordingPolicy:
    """Writes `script`'s turns and keeps each conversation it is asked to continue (the trainer's
    sample_turns contract); the tokenizer is a real micro policy's."""

    def __init__(self, policy: Any, script: list[str]):
        self.policy, self.encoder, self.processor = policy, policy.encoder, policy.processor
        self.script = list(script)
        self.prompts: list[list[dict[str, Any]]] = []

    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float, greedy: bool) -> list[Any]:
        from vistool_trainer.model.policy import SampledTurn

        turns = []
        for messages in conversations:
            self.prompts.append(list(messages))
            text = self.script[len(self.prompts) - 1]
            ids = list(self.processor.tokenizer(text, add_special_tokens=False)["input_ids"]) + [self.processor.end_of_turn_id]
            turns.append(SampledTurn(token_ids=ids, text=text, truncated=False))
        return turns


def gold_script(client: Any, task: dict[str, Any]) -> list[str]:
    gold = client.gold([task])[0]
    return [gold["tool_turns"][0], gold["answer"]]


def trainer_prompts(client: Any, task: dict[str, Any], config: Any, policy: Any) -> list[list[dict[str, Any]]]:
    """The two prompts the trainer's rollout loop gives its policy in `config`'s arm."""
    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.rollouts.rollout import run_rollouts

    recording = RecordingPolicy(policy, gold_script(client, task))
    run_rollouts(recording, client, [task], 1, episode_options(config), 8, 1.0, greedy=True)
    return recording.prompts


def trainer_conversations(root: Path, tasks_path: Path) -> dict[str, list[dict[str, Any]]]:
    from vistool_trainer.config import PolicyConfig, from_dict
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.presentation import policy_corpus
    from vistool_trainer.rollouts.rollout import load_tasks

    task = load_tasks(tasks_path)[0]
    with LocalEnvServer(tasks_path.parent, root / "images", root / "token", root / "server.log") as client:
        policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}),
                               policy_corpus(client, [task], None) * 5, 1, "cpu")
        return {arm: normalized(trainer_prompts(client, task, arm_run_config(root, arm), policy)) for arm in ARMS}


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        result = trainer_conversations(root, golden_task(root))
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
