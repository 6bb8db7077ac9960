"""vistool tasks ↔ veRL's parquet rows.

`vistool-verl data convert --to verl TASKS --out FILE.parquet` writes one row per task in the
layout veRL's RLHFDataset reads: `data_source`, `prompt` (the opening prompt the env server
presents for the run's presentation, `--presentation`, with `<image>` where the image goes), `images` (the PNG bytes, so the file travels alone),
`ability`, `reward_model` {style, ground_truth}, `agent_name` (vistool_agent) and `extra_info`
{index, task_json, task_dir, question, split}. `split` is `train` or `val` (`--split`): veRL does
not tell an agent loop that it is validating, so the val rows say so (vistool_verl.live_records).
The task record is kept whole as JSON text: its band metadata has different keys in every row,
which a parquet struct column would widen into one union of all keys with nulls (the loss
VTool-R1's parquet files show).

`--from verl FILE.parquet --out DIR` gives the tasks back: rows this module wrote come back
byte for byte; other veRL rows go through `vistool data convert --from verl` (the engine's loader).
"""
from __future__ import annotations

import argparse
import base64
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vistool_trainer.rollouts.env_client import LocalEnvServer
from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.rollout import load_tasks

from .agent_loop import AGENT_NAME
from .vistool_tool import tool_schemas, tools_kwargs

BATCH = 256


def tasks_file(source: Path) -> Path:
    path = source / "tasks.jsonl" if source.is_dir() else source
    if not path.is_file():
        raise ValueError(f"{source}: expected a tasks.jsonl or the folder holding one (what `vistool data gen --out` writes)")
    return path


def opening_messages(tasks: list[dict[str, Any]], use_tools: bool, presentation: dict[str, Any] | None = None) -> list[list[dict[str, Any]]]:
    """The prompt the env server opens each task's episode with under `presentation` (the system
    turn it chooses for `use_tools`, the image, the question)."""
    options: dict[str, Any] = {"tools": use_tools}
    if presentation is not None:
        options["presentation"] = presentation
    folders = sorted({task["_task_dir"] for task in tasks})
    with tempfile.TemporaryDirectory(prefix="vistool-verl-") as scratch, \
            LocalEnvServer([Path(f) for f in folders], Path(scratch) / "images", Path(scratch) / "token") as client:
        opened: list[list[dict[str, Any]]] = []
        for offset in range(0, len(tasks), BATCH):
            chunk = tasks[offset:offset + BATCH]
            results = client.start_episodes([{"task": _record(task), "task_dir": task["_task_dir"], "options": options}
                                             for task in chunk])
            for result in results:
                opened.append(result["observation"]["prompt"])
                client.close_episode(result["episode_id"])
        return opened


SPLITS = ("train", "val")


def to_row(index: int, task: dict[str, Any], messages: list[dict[str, Any]], split: str = "train",
           tool_names: list[str] | None = None) -> dict[str, Any]:
    prompt = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            text = "".join("<image>" if part.get("type") == "image" else str(part.get("text", "")) for part in content)
        else:
            text = str(content)
        prompt.append({"role": message["role"], "content": text})
    image_path = Path(task["_task_dir"]) / task["image"]
    answer = task["answer"]
    return {
        "data_source": f"vistool/{task.get('kind', 'chart')}",
        "prompt": prompt,
        "images": [{"bytes": image_path.read_bytes(), "path": str(task["image"])}],
        "ability": "visual_reasoning",
        "reward_model": {"style": "rule", "ground_truth": answer if isinstance(answer, str) else json.dumps(answer)},
        "agent_name": AGENT_NAME,
        "extra_info": {"index": index, "task_json": json.dumps(_record(task), sort_keys=True), "task_dir": task["_task_dir"],
                       "question": task["question"], "split": split,
                       # veRL's ToolAgentLoop with vistool_verl.vistool_tool: each tool's episode opens on this task.
                       **({"tools_kwargs": tools_kwargs(str(task["id"]), task["_task_dir"], tool_names)} if tool_names else {})},
    }


def write_verl(source: Path, out: Path, presentation: dict[str, Any] | None = None, use_tools: bool = True, split: str = "train",
               tool_names: list[str] | None = None) -> int:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    tasks = load_tasks(tasks_file(source))
    messages = opening_messages(tasks, use_tools, presentation)
    rows = [to_row(i, task, m, split, tool_names) for i, (task, m) in enumerate(zip(tasks, messages))]
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.tmp")
    pq.write_table(pa.Table.from_pylist(rows), temporary)
    temporary.replace(out)  # a reader never sees half a file
    return len(rows)


def read_verl(parquet: Path, out: Path) -> int:
    """Task records back from a veRL parquet file: DIR/tasks.jsonl + DIR/images/."""
    rows = pq.read_table(parquet).to_pylist()
    if not rows:
        raise ValueError(f"{parquet} holds no rows")
    if not all(isinstance(row.get("extra_info"), dict) and row["extra_info"].get("task_json") for row in rows):
        return _through_engine_loader(parquet, rows, out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for number, row in enumerate(rows, start=1):
        task = json.loads(row["extra_info"]["task_json"])
        image = (row.get("images") or [{}])[0] or {}
        target = out / "images" / f"{number:06d}-{Path(str(task['image'])).name}"
        if image.get("bytes"):
            target.write_bytes(image["bytes"])
        else:
            shutil.copyfile(Path(row["extra_info"]["task_dir"]) / task["image"], target)
        task["image"] = str(target.relative_to(out))
        lines.append(json.dumps(task))
    (out / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    return len(lines)


def _through_engine_loader(parquet: Path, rows: list[dict[str, Any]], out: Path) -> int:
    """Rows from elsewhere: JSON lines in the layout the engine's veRL loader reads, then that loader."""
    with tempfile.TemporaryDirectory(prefix="vistool-verl-rows-") as scratch:
        jsonl = Path(scratch) / f"{parquet.stem}.jsonl"
        with jsonl.open("w") as handle:
            for row in rows:
                images = [{"bytes": base64.b64encode(i["bytes"]).decode()} if isinstance(i, dict) and i.get("bytes") else i
                          for i in row.get("images") or []]
                handle.write(json.dumps({**row, "images": images}, default=str) + "\n")
        command = ["node", str(repo_root() / "bin" / "vistool.js"), "data", "convert", "--from", "verl", str(jsonl), "--out", str(out)]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise ValueError(f"{parquet}: {result.stderr.strip() or result.stdout.strip()}")
    return sum(1 for line in (out / "tasks.jsonl").read_text().splitlines() if line.strip())


def presentation_argument(value: str | None) -> dict[str, Any] | None:
    """--presentation: the block as JSON text, or a file holding it (a run config's presentation,
    as `vistool config export --to verl` prints it)."""
    if value is None:
        return None
    text = value if value.lstrip().startswith("{") else Path(value).read_text()
    try:
        block = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"--presentation is not JSON ({error}): give {{\"system_prompt\": ..., \"view\": {{...}}}} or a file holding it") from None
    if not isinstance(block, dict):
        raise ValueError("--presentation must be a JSON object: {\"system_prompt\": ..., \"view\": {...}}")
    return block


def _record(task: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in task.items() if not key.startswith("_")}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="vistool-verl data convert", description="vistool tasks <-> veRL parquet rows")
    parser.add_argument("convert", choices=["convert"])
    direction = parser.add_mutually_exclusive_group(required=True)
    direction.add_argument("--to", choices=["verl"], help="tasks.jsonl (or its folder) -> one parquet file")
    direction.add_argument("--from", dest="source_format", choices=["verl"], help="a veRL parquet file -> DIR/tasks.jsonl + DIR/images/")
    parser.add_argument("source", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--presentation", default=None,
                        help="the run's presentation block (JSON, or a file): {\"system_prompt\": ..., \"view\": {...}}, as the run config's "
                             "policy.system_prompt and policy.view; default: the env server's own system turn")
    parser.add_argument("--no-tools", action="store_true", help="rows for the text-only arm (no tools offered)")
    parser.add_argument("--split", choices=SPLITS, default="train",
                        help="extra_info.split of the rows: 'val' for data.val_files, so the agent loop files their rollouts as validation")
    parser.add_argument("--tools-kwargs", action="store_true",
                        help="also write extra_info.tools_kwargs, for veRL's own ToolAgentLoop with vistool_verl.vistool_tool")
    args = parser.parse_args(argv)
    try:
        if args.to:
            names = [schema["function"]["name"] for schema in tool_schemas()] if args.tools_kwargs else None
            count = write_verl(args.source, args.out, presentation_argument(args.presentation), not args.no_tools, args.split, names)
        else:
            count = read_verl(args.source, args.out)
    except ValueError as error:
        parser.exit(2, f"vistool-verl data convert: {error}\n")
    print(json.dumps({"rows" if args.to else "tasks": count, "out": str(args.out)}))
    return 0
