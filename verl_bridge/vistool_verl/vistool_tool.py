"""vistool's image tools as veRL `BaseTool`s, for veRL's own ToolAgentLoop (the DeepEyes way: the
model writes hermes tool calls, veRL's loop parses them and calls the tool, the tool's image joins
the conversation). veRL removed its own image tool in 2026; these put the chart tools back.

Each call is one short episode on the env server: `create` opens it for the row's task
(`create_kwargs`: `task_json` and `task_dir`, as the converter writes them with
`--tools-kwargs`), `execute` sends the call as the model's tool-call text (the server validates the
arguments against the tool's schema, never executes model text) and returns the server's
observation, the edited image and its text; `release` closes the episode. veRL's ToolAgentLoop
creates and releases a tool instance around every call, so each call edits the task's original
image: calls do not chain as they do in vistool's own agent loop (`vistool_agent`), which is the one
to use when edits must build on each other, and which scores the episode with vistool's rewards.

`tools_config` writes the YAML veRL's tool registry reads (`rollout.multi_turn.tool_config_path`),
with each tool's OpenAI schema as the env's `vistool tools list --json` gives it.
"""
from __future__ import annotations

import copy

import json
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from vistool_trainer.checkout import repo_root

from .env_messages import to_verl_messages
from .env_session import EnvAddress, EnvServerError, off_loop

CLASS_NAME = "vistool_verl.vistool_tool.VistoolTool"


class VistoolTool(BaseTool):
    """config: `env_url`, `env_token_file` (default VISTOOL_ENV_URL / VISTOOL_ENV_TOKEN_FILE)."""

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
        super().__init__(config, tool_schema)
        self.env = EnvAddress.resolve(config.get("env_url"), config.get("env_token_file"))
        self._episodes: dict[str, str] = {}

    async def create(self, instance_id: Optional[str] = None, create_kwargs: dict[str, Any] | None = None, **kwargs) -> tuple[str, ToolResponse]:
        create_kwargs = create_kwargs or kwargs.get("create_kwargs") or {}
        task = task_of(create_kwargs)
        if task is None:
            raise ValueError(f"vistool tool {self.name}: create_kwargs needs task_dir and task_id (or task_json, the task record); "
                             "write the rows with `vistool-verl data convert --to verl --tools-kwargs`")
        client = self.env.client()
        try:
            opened = (await off_loop(client.start_episodes, [{"task": task, "task_dir": str(create_kwargs["task_dir"]),
                                                              "options": {"tools": True, "max_tool_calls": 1, "images": "path"}}]))[0]
        finally:
            client.close()
        instance_id = instance_id or uuid4().hex
        self._episodes[instance_id] = opened["episode_id"]
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
        episode_id = self._episodes[instance_id]
        text = f"<tool_call>{json.dumps({'name': self.name, 'arguments': parameters})}</tool_call>"
        client = self.env.client()
        try:
            step = (await off_loop(client.step_episodes, [{"episode_id": episode_id, "text": text}], soft=True))[0]
        finally:
            client.close()
        if "error" in step:
            raise EnvServerError(f"the env server could not run {self.name} (HTTP {step['error'].get('status')}): {step['error'].get('message')}")
        messages, images = to_verl_messages(step["observation"]["messages"])
        texts = [part["text"] for message in messages for part in (message.get("content") or []) if part.get("type") == "text"]
        call = (step.get("info", {}).get("calls") or [{}])[0]
        metrics = {"ok": bool(call.get("ok")), "errors": [e.get("class") for e in step.get("info", {}).get("errors") or []]}
        # veRL's ToolResponse refuses image=None (it must be a list when given): a call that made no
        # image (the env's error text) leaves the key out, so the model reads the env's words.
        response = ToolResponse(text="\n".join(texts) or None, image=images) if images else ToolResponse(text="\n".join(texts) or None)
        return response, 0.0, metrics

    async def release(self, instance_id: str, **kwargs) -> None:
        episode_id = self._episodes.pop(instance_id, None)
        if episode_id is None:
            return
        client = self.env.client()
        try:
            await off_loop(client.close_episode, episode_id)
        except EnvServerError:
            pass  # expired already
        finally:
            client.close()


@lru_cache(maxsize=64)
def _tasks_in(task_dir: str) -> dict[str, dict[str, Any]]:
    with open(Path(task_dir) / "tasks.jsonl") as lines:
        return {record["id"]: record for record in map(json.loads, filter(str.strip, lines))}


def task_of(create_kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The task record: given whole (`task_json`), or by `task_id` from `task_dir`/tasks.jsonl."""
    if not create_kwargs.get("task_dir"):
        return None
    if isinstance(create_kwargs.get("task_json"), str):
        return json.loads(create_kwargs["task_json"])
    if create_kwargs.get("task_id") is not None:
        return _tasks_in(str(create_kwargs["task_dir"])).get(str(create_kwargs["task_id"]))
    return None


def tools_kwargs(task_id: str, task_dir: str, names: list[str]) -> dict[str, Any]:
    """A row's `extra_info.tools_kwargs`: every tool opens its episode on this task."""
    return {name: {"create_kwargs": {"task_id": task_id, "task_dir": task_dir}} for name in names}


def tool_schemas() -> list[dict[str, Any]]:
    """Every tool's OpenAI function schema, from the engine itself (`vistool tools list --json`)."""
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "tools", "list", "--json"]
    result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed: {result.stderr[-500:]}")
    return json.loads(result.stdout)


def verl_tool_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An engine tool schema as veRL's OpenAIFunctionToolSchema accepts it. veRL requires a `type` on
    every property, where a drawing tool's point is `anyOf` a label (string) or [x, y] (array): such a
    property gets the union of its alternatives' types (`["string", "array"]`, veRL's form of a
    union), and keeps its `anyOf` and description for the model to read."""
    converted = copy.deepcopy(schema)
    properties = converted.get("function", {}).get("parameters", {}).get("properties", {})
    for name, prop in properties.items():
        if "type" in prop:
            continue
        alternatives = prop.get("anyOf") or prop.get("oneOf") or []
        types = list(dict.fromkeys(alternative.get("type") for alternative in alternatives if isinstance(alternative.get("type"), str)))
        if not types:
            raise ValueError(f"tool {converted.get('function', {}).get('name')!r}: property {name!r} has no type veRL can name")
        prop["type"] = types[0] if len(types) == 1 else types
    return converted


def tools_config(schemas: list[dict[str, Any]], env_url: str | None = None, env_token_file: str | None = None) -> dict[str, Any]:
    """veRL's tool-registry YAML (as a dict) for these OpenAI function schemas (`vistool tools list --json`)."""
    config: dict[str, Any] = {"type": "native"}
    if env_url:
        config["env_url"] = env_url
    if env_token_file:
        config["env_token_file"] = env_token_file
    return {"tools": [{"class_name": CLASS_NAME, "config": dict(config), "tool_schema": verl_tool_schema(schema)} for schema in schemas]}


def main(argv: list[str]) -> int:
    """`vistool-verl tools config --out tools.yaml`: the tool registry file for veRL's ToolAgentLoop."""
    import argparse

    import yaml

    parser = argparse.ArgumentParser(prog="vistool-verl tools config", description=main.__doc__)
    parser.add_argument("config", choices=["config"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--env-url", default=None, help="the env server (default: VISTOOL_ENV_URL when the tool starts)")
    parser.add_argument("--env-token-file", default=None, help="its token file (default: VISTOOL_ENV_TOKEN_FILE)")
    args = parser.parse_args(argv)
    config = tools_config(tool_schemas(), args.env_url, args.env_token_file)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(yaml.safe_dump(config, sort_keys=False))
    print(json.dumps({"tools": len(config["tools"]), "out": str(args.out)}))
    return 0
