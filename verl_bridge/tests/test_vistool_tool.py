"""vistool's tools as veRL BaseTools, loaded by veRL's own tool registry from the YAML
`vistool-verl tools config` writes, and called as veRL's ToolAgentLoop calls them (create →
execute → release) against the real env server. The expected image is the env server's own answer
to the same call in an episode opened directly (images are content-addressed: the same ref is the
same pixels).
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from PIL import Image
from verl.tools.tool_registry import initialize_tools_from_config

from vistool_trainer.rollouts.env_client import EnvServerError
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.parquet_rows import write_verl
from vistool_verl.vistool_tool import VistoolTool, tool_schemas, tools_config


@pytest.fixture(scope="module")
def registry_tools(env_server, tmp_path_factory) -> dict[str, VistoolTool]:
    client, token_file, _ = env_server
    path = tmp_path_factory.mktemp("tools") / "tools.yaml"
    path.write_text(yaml.safe_dump(tools_config(tool_schemas(), client.url, str(token_file))))
    return {tool.name: tool for tool in initialize_tools_from_config(str(path))}


def test_the_registry_loads_one_vistool_tool_per_engine_tool_with_the_engine_s_schema(registry_tools):
    names = [schema["function"]["name"] for schema in tool_schemas()]
    assert sorted(registry_tools) == sorted(names)
    assert all(isinstance(tool, VistoolTool) for tool in registry_tools.values())
    schema = registry_tools["focus_on_x_values_with_mask"].get_openai_tool_schema().model_dump(exclude_none=True)
    assert schema["function"]["parameters"]["required"] == ["x_values"]
    # A drawing tool's point is a label or [x, y]: veRL needs a type on it, so it gets the union of both.
    point = registry_tools["mark_point"].get_openai_tool_schema().model_dump(exclude_none=True)["function"]["parameters"]["properties"]["point"]
    assert point["type"] == ["string", "array"]


def test_a_call_returns_the_env_servers_edited_image_and_text_and_release_closes_the_episode(registry_tools, tasks_path, tmp_path, env_server):
    client, _, _ = env_server
    task = load_tasks(tasks_path)[0]
    call = json.loads(client.gold([task])[0]["tool_turns"][0].removeprefix("<tool_call>").removesuffix("</tool_call>"))
    # The rows the converter writes with --tools-kwargs carry what create needs (veRL's RLHFDataset hands extra_info.tools_kwargs over).
    write_verl(tasks_path, tmp_path / "rows.parquet", tool_names=[call["name"]])
    import pyarrow.parquet as pq
    row = pq.read_table(tmp_path / "rows.parquet").to_pylist()[0]
    create_kwargs = row["extra_info"]["tools_kwargs"][call["name"]]["create_kwargs"]
    assert create_kwargs == {"task_id": task["id"], "task_dir": task["_task_dir"]}
    tool = registry_tools[call["name"]]

    async def call_it():
        instance_id, _ = await tool.create(create_kwargs=create_kwargs)
        try:
            return instance_id, tool._episodes[instance_id], await tool.execute(instance_id, call["arguments"])
        finally:
            await tool.release(instance_id)
    instance_id, episode_id, (response, reward, metrics) = asyncio.run(call_it())
    assert metrics == {"ok": True, "errors": []} and reward == 0.0
    assert len(response.image) == 1 and isinstance(response.image[0], Image.Image)
    # The same call in an episode opened directly: the same edited image and observation text.
    opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                     "options": {"tools": True, "images": "path"}}])[0]
    step = client.step_episodes([{"episode_id": opened["episode_id"], "text": f"<tool_call>{json.dumps(call)}</tool_call>"}])[0]
    client.close_episode(opened["episode_id"])
    parts = step["observation"]["messages"][0]["content"]
    expected_image = next(p for p in parts if p["type"] == "image")
    with Image.open(Path(expected_image["path"])) as image:
        assert response.image[0].tobytes() == image.convert("RGB").tobytes()
    assert response.text == "\n".join(p["text"] for p in parts if p["type"] == "text")
    assert instance_id not in tool._episodes
    with pytest.raises(EnvServerError, match="404"):
        client.trajectory(episode_id)


def test_a_row_without_its_task_is_refused_with_what_to_write(registry_tools):
    tool = next(iter(registry_tools.values()))
    with pytest.raises(ValueError, match="--tools-kwargs"):
        asyncio.run(tool.create(create_kwargs={"task_dir": "/nowhere"}))


def test_a_call_the_env_refuses_returns_the_env_s_error_text_not_a_validation_error(registry_tools, tasks_path, env_server):
    """veRL 0.9.1's ToolResponse refuses image=None (M5 of issue 41, checked here: the call used to
    raise pydantic's 'Image must be a list'); a call that makes no image gives the env's text alone."""
    from verl.tools.schemas import ToolResponse

    with pytest.raises(ValueError, match="Image must be a list"):
        ToolResponse(text="x", image=None)
    task = load_tasks(tasks_path)[0]
    tool = registry_tools["focus_on_x_values_with_mask"]

    async def call_it():
        instance_id, _ = await tool.create(create_kwargs={"task_id": task["id"], "task_dir": task["_task_dir"]})
        try:
            return await tool.execute(instance_id, {"x_values": ["no such bar at all"]})
        finally:
            await tool.release(instance_id)
    response, reward, metrics = asyncio.run(call_it())
    assert response.image is None and response.text, response
    assert metrics["ok"] is False and metrics["errors"], metrics
