"""A stand-in for the vistool env server, speaking docs/CONTRACTS.md over real HTTP on 127.0.0.1.

Test double at the trainer's external boundary, used while `vistool serve` and `vistool data gen`
are not yet wired into bin/vistool.js. It implements the contract's shapes (bearer token,
batch endpoints, messages with image parts by path, rollout records) with one tool,
focus_on_columns_with_mask, on PIL-drawn tables. It is not the real engine: the real
parser, tools and rewards live in env/.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

COLUMNS = ["Team", "Wins", "Goals"]
TEAMS = ["Ajax", "Bruges", "Celtic"]


def make_tasks(directory: Path, count: int, seed: int) -> Path:
    """Draw `count` 224x112 tables and write tasks.jsonl (TaskRecord shape, with gold calls)."""
    import random

    chooser = random.Random(seed)
    (directory / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for index in range(count):
        values = [[team, chooser.randint(0, 9), chooser.randint(0, 9)] for team in TEAMS]
        image = Image.new("RGB", (224, 112), "white")
        draw = ImageDraw.Draw(image)
        columns_bbox = {}
        for col, name in enumerate(COLUMNS):
            x1 = 4 + col * 72
            columns_bbox[name] = {"x1": x1, "y1": 4, "x2": x1 + 70, "y2": 108}
            draw.text((x1 + 4, 8), name, fill="black")
            for row, record in enumerate(values):
                draw.text((x1 + 4, 34 + row * 24), str(record[col]), fill="black")
        name = f"images/t{index:04d}.png"
        image.save(directory / name)
        target = chooser.choice(COLUMNS[1:])
        row = chooser.randrange(len(TEAMS))
        lines.append({"id": f"table-{seed}-{index:04d}", "image": name, "question": f"{target} of {TEAMS[row]}?",
                      "answer": str(values[row][COLUMNS.index(target)]), "kind": "table", "difficulty": 1,
                      "meta": {"unit": "pixels", "source": "generator", "columns_bbox": columns_bbox},
                      "gold": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Team", target]}}],
                      "source": "synthetic"})
    path = directory / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


class _Episode:
    def __init__(self, task: dict[str, Any], image: Image.Image, options: dict[str, Any], store: Path):
        self.id = str(uuid.uuid4())
        self.task, self.image, self.store = task, image, store
        self.tools = options.get("tools", True) is not False
        self.max_turns = int(options.get("max_turns", 6))
        self.max_calls = int(options.get("max_tool_calls", 8))
        self.turn = 0
        self.done = False
        first = self.save(image)
        self.record = {"prompt_id": task["id"], "task": {"question": task["question"], "answer": task["answer"], "kind": task["kind"],
                                                          "difficulty": task["difficulty"], "image": first["ref"]},
                       "turns": [], "answer": None, "end_reason": None, "tool_calls": 0, "tool_errors": 0}
        system = "Use tools, then <answer>...</answer>." if self.tools else "Answer with <answer>...</answer>."
        self.first = [{"role": "system", "content": [{"type": "text", "text": system}]},
                      {"role": "user", "content": [first, {"type": "text", "text": f"Question: {task['question']}"}]}]

    def save(self, image: Image.Image) -> dict[str, Any]:
        import io

        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        ref = hashlib.sha256(buffer.getvalue()).hexdigest()
        path = self.store / f"{ref}.png"
        if not path.exists():
            path.write_bytes(buffer.getvalue())
        return {"type": "image", "ref": ref, "path": str(path), "width": image.width, "height": image.height}

    def step(self, text: str) -> dict[str, Any]:
        self.turn += 1
        turn = {"role": "assistant", "text": text, "calls": [], "errors": [], "answer": None}
        self.record["turns"].append(turn)
        messages: list[dict[str, Any]] = []
        answer = re.search(r"<answer>(.*?)</answer>", text, re.S)
        call = re.search(r"<tool_call>(.*?)</tool_call>", text, re.S)
        if answer:
            turn["answer"] = answer.group(1).strip()
            self.record["answer"] = turn["answer"]
            self.done, self.record["end_reason"] = True, "answer"
        elif call and self.tools and self.record["tool_calls"] < self.max_calls:
            try:
                parsed = json.loads(call.group(1))
                keep = parsed["arguments"]["columns"]
                boxes = self.task["meta"]["columns_bbox"]
                unknown = [name for name in keep if name not in boxes]
                if parsed["name"] != "focus_on_columns_with_mask" or unknown:
                    raise KeyError(f"unknown column(s) {unknown}")
                edited = self.image.copy()
                draw = ImageDraw.Draw(edited)
                for name, box in boxes.items():
                    if name not in keep:
                        draw.rectangle([box["x1"], box["y1"], box["x2"], box["y2"]], fill="white")
                self.image = edited
                image_part = self.save(edited)
                self.record["tool_calls"] += 1
                turn["calls"].append({"name": parsed["name"], "arguments": parsed["arguments"], "ok": True, "image_out": image_part["ref"]})
                messages.append({"role": "tool", "name": parsed["name"],
                                 "content": [{"type": "text", "text": "OBSERVATION: masked. The edited image follows."}, image_part]})
                self.record["turns"].append({"role": "tool", "text": "OBSERVATION", "images": [image_part["ref"]]})
            except (ValueError, KeyError, TypeError) as error:
                self.record["tool_errors"] += 1
                turn["errors"].append({"class": "E4", "message": str(error)})
                messages.append({"role": "tool", "content": [{"type": "text", "text": f"ERROR [E4]: {error}"}]})
        else:
            turn["errors"].append({"class": "E1", "message": "no tool call or answer"})
            messages.append({"role": "user", "content": [{"type": "text", "text": "ERROR [E1]: No tool call or final answer found."}]})
        if not self.done and self.turn >= self.max_turns:
            self.done, self.record["end_reason"] = True, "max_turns"
        return {"observation": {"messages": messages}, "done": self.done,
                "info": {"turn": self.turn, "calls": turn["calls"], "errors": turn["errors"], "answer": turn["answer"]}}

    def score(self) -> dict[str, Any]:
        correct = self.record["answer"] is not None and self.record["answer"] == str(self.task["answer"])
        fmt = 1.0 if self.record["answer"] is not None else 0.0
        components = {"accuracy": float(correct), "format": fmt}
        reward = components["accuracy"] + 0.1 * fmt
        self.record.update({"correct": correct, "reward": reward, "reward_breakdown": components})
        return {"reward": reward, "components": components, "weights": {"accuracy": 1.0, "format": 0.1}, "correct": correct}


class ContractEnvServer:
    def __init__(self, images_dir: Path, token: str = "test-token"):
        self.images_dir, self.token = images_dir, token
        images_dir.mkdir(parents=True, exist_ok=True)
        self.episodes: dict[str, _Episode] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                if self.headers.get("Authorization") != f"Bearer {owner.token}":
                    return self._reply(401, {"error": {"status": 401, "message": "missing or wrong bearer token"}})
                try:
                    with owner.lock:
                        status, answer = owner.route(method, self.path, body)
                except KeyError as error:
                    status, answer = 404, {"error": {"status": 404, "message": str(error)}}
                self._reply(status, answer)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ContractEnvServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def start(self, item: dict[str, Any]) -> dict[str, Any]:
        task = item["task"]
        with Image.open(Path(item["task_dir"]) / task["image"]) as opened:
            image = opened.convert("RGB")
        episode = _Episode(task, image, item.get("options") or {}, self.images_dir)
        self.episodes[episode.id] = episode
        return {"episode_id": episode.id, "observation": {"messages": episode.first}, "tools": []}

    def route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET" and path == "/v1/health":
            return 200, {"status": "ok", "version": "contract-stub", "episodes": len(self.episodes)}
        if method == "POST" and path == "/v1/batch/episodes":
            return 200, {"results": [self.start(item) for item in body["items"]]}
        if method == "POST" and path == "/v1/batch/step":
            return 200, {"results": [self.episodes[item["episode_id"]].step(item["text"]) for item in body["items"]]}
        if method == "POST" and path == "/v1/batch/score":
            return 200, {"results": [self.episodes[item["episode_id"]].score() for item in body["items"]]}
        if path.startswith("/v1/episodes/"):
            episode_id = path.rsplit("/", 1)[1]
            if method == "GET":
                return 200, self.episodes[episode_id].record
            if method == "DELETE":
                self.episodes.pop(episode_id)
                return 200, {"closed": True}
        return 404, {"error": {"status": 404, "message": f"no such endpoint: {method} {path}"}}
