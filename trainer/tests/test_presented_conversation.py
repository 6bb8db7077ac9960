"""The presented conversation of one task, in both of the demo's arms, is the same byte for byte on
every path a policy is played through: the trainer's rollouts and `vistool eval` here (the veRL
agent loop in verl_bridge/tests/test_presentation.py), each compared with
trainer/tests/golden/presented-conversation.json (presented_conversation.py says what it holds).

`vistool eval` runs as a user runs it (node, the demo arm's run config given with --run-config, tool
observations in tool turns as a vistool checkpoint reads them); its policy is a recording
OpenAI-compatible server (the stand-in for a served model) whose requests are read back with
serve-policy's own conversion, as a checkpoint would receive them.
"""
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from presented_conversation import ARMS, GOLDEN, arm_run_config, gold_script, golden_task, normalized, trainer_conversations

from vistool_trainer.checkout import repo_root
from vistool_trainer.config import to_dict
from vistool_trainer.rollouts.env_client import short_lived_server
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.serve_policy import to_policy_messages


@pytest.fixture(scope="module")
def golden_task_file(tmp_path_factory, cli_bundle):
    return golden_task(tmp_path_factory.mktemp("presented"))


def test_the_trainer_presents_the_golden_conversation(golden_task_file, tmp_path):
    assert trainer_conversations(tmp_path, golden_task_file) == json.loads(GOLDEN.read_text())


class _Recording(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers from a script by turn and keeps every request."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.server.requests.append(body)  # type: ignore[attr-defined]
        turn = sum(1 for message in body["messages"] if message["role"] == "assistant")
        reply = json.dumps({"id": "r", "object": "chat.completion", "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": self.server.script[turn]}}]}).encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


def test_vistool_eval_presents_the_golden_conversation_in_each_arm(golden_task_file, tmp_path):
    task = load_tasks(golden_task_file)[0]
    script = short_lived_server(lambda client: gold_script(client, task))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recording)
    server.requests, server.script = [], script  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        presented = {}
        for arm in ARMS:
            config = arm_run_config(tmp_path, arm)
            config_path = tmp_path / f"{arm}.vistool.json"
            config_path.write_text(json.dumps(to_dict(config)))
            server.requests.clear()  # type: ignore[attr-defined]
            command = ["node", str(repo_root() / "bin" / "vistool.js"), "eval", "--policy", f"openai:http://127.0.0.1:{server.server_address[1]}/v1#m",
                       "--tasks", str(golden_task_file), "--out", str(tmp_path / f"eval-{arm}"), "--run-config", str(config_path),
                       "--observation-role", "tool", "--tools", "on" if config.env.tools else "off", "--api-key-env", "NO_KEY_FOR_THIS_SERVER"]
            result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, result.stderr[-2000:]
            requests = server.requests  # type: ignore[attr-defined]
            assert len(requests) == 2, f"{arm}: expected the opening and one turn after an observation, got {len(requests)} requests"
            presented[arm] = normalized([to_policy_messages(request["messages"]) for request in requests])
    finally:
        server.shutdown()
        server.server_close()
    assert presented == json.loads(GOLDEN.read_text())
