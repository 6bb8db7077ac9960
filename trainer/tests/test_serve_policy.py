"""`serve-policy`: a checkpoint from a few real SFT steps answers OpenAI chat-completions requests
with an image, over real HTTP on 127.0.0.1, exactly as the policy itself generates."""
import base64
import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from test_end_to_end import small_config

from vistool_trainer.checkout import repo_root
from vistool_trainer.run.events import EventStream
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.serve_policy import to_policy_messages
from vistool_trainer.run.train import train

TOKEN = "test-token-1234"


@pytest.fixture(scope="module")
def served(tmp_path_factory, vbar_data):
    """(url, model, checkpoint, events before listening, a task) for a serve-policy process on a 2-step SFT checkpoint
    whose run config.json predates the removal of rl.no_tool_reward_scale."""
    tmp = tmp_path_factory.mktemp("serve-policy")
    config = small_config(tmp, *vbar_data, "tiny", sft={"steps": 2, "batch_size": 2}, rl={"enabled": False},
                          eval={"before_and_after": False})
    assert train(config, events=EventStream(stdout=io.StringIO(), stderr=io.StringIO())) == 0
    run = tmp / "tiny"
    checkpoint = sorted((run / "checkpoints").glob("step-*"))[-1]
    saved = json.loads((run / "config.json").read_text())
    saved["rl"]["no_tool_reward_scale"] = 0.8  # as a config.json written before b3a35ae would have it
    (run / "config.json").write_text(json.dumps(saved))
    process = subprocess.Popen([sys.executable, "-m", "vistool_trainer", "serve-policy", "--checkpoint", str(checkpoint), "--port", "0", "--device", "cpu"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=repo_root(),
                               env={**os.environ, "VISTOOL_POLICY_API_KEY": TOKEN})
    events = []
    try:
        for line in process.stdout:
            events.append(json.loads(line))
            if events[-1]["event"] in ("listening", "failed"):
                break
        assert events and events[-1]["event"] == "listening", events
        yield events[-1]["url"], events[-1]["model"], checkpoint, events, load_tasks(vbar_data[1])[0]
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()


def _post(url: str, body: dict, token: str | None = TOKEN) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _question(task) -> list[dict]:
    with open(os.path.join(task["_task_dir"], task["image"]), "rb") as stream:
        image = base64.b64encode(stream.read()).decode()
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image}"}},
                                         {"type": "text", "text": task["question"]}]}]


def test_it_announces_a_loopback_url_and_the_checkpoint_as_the_model(served):
    url, model, checkpoint, _, _ = served
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert model == f"tiny/{checkpoint.name}"


def test_an_old_run_config_key_is_a_warning_event_not_a_failure(served):
    warnings = [event for event in served[3] if event["event"] == "warning"]
    assert len(warnings) == 1 and "rl.no_tool_reward_scale" in warnings[0]["message"]


def test_a_greedy_request_with_an_image_answers_what_the_policy_itself_generates(served):
    url, model, checkpoint, _, task = served
    messages = _question(task)
    status, reply = _post(url, {"model": model, "messages": messages, "temperature": 0, "max_tokens": 6})
    assert status == 200, reply
    assert reply["object"] == "chat.completion" and reply["model"] == model
    content = reply["choices"][0]["message"]["content"]
    assert isinstance(content, str) and 1 <= reply["usage"]["completion_tokens"] <= 6
    assert reply["usage"]["prompt_tokens"] > 10  # the image's tokens are in the prompt
    policy = Policy.load(checkpoint / "policy", "cpu")
    expected = policy.sample_turns([to_policy_messages(messages)], 6, 1.0, greedy=True)[0]
    assert content == expected.text
    assert reply["choices"][0]["finish_reason"] == ("length" if expected.truncated else "stop")
    # Greedy is deterministic: the same request gets the same answer.
    assert _post(url, {"model": model, "messages": messages, "temperature": 0, "max_tokens": 6})[1]["choices"][0]["message"]["content"] == content


def test_without_the_bearer_token_the_request_is_refused(served):
    url, model, _, _, task = served
    status, reply = _post(url, {"model": model, "messages": _question(task), "temperature": 0, "max_tokens": 2}, token=None)
    assert status == 401 and "bearer token" in reply["error"]["message"]
    status, _ = _post(url, {"model": model, "messages": _question(task)}, token="wrong")
    assert status == 401


def test_a_remote_image_url_is_refused_with_a_reason(served):
    url, model, _, _, _ = served
    body = {"model": model, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://example.com/a.png"}}]}]}
    status, reply = _post(url, body)
    assert status == 400 and "data URLs" in reply["error"]["message"]


def test_a_turn_the_server_wrote_comes_back_as_the_ids_it_sampled_not_a_new_tokenisation():
    """Byte-level BPE spells one text many ways; a sampled turn need not be the tokenizer's own
    spelling. Sent back as text, it is read as the sampled ids, as the trainer reads its turns."""
    from vistool_trainer.run.serve_policy import ReplyMemory

    memory = ReplyMemory(size=2)
    memory.remember("<answer>low</answer>", [5, 6, 7])
    messages = [{"role": "user", "content": [{"type": "text", "text": "Question: Q"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "never written here"}]}]
    marked = memory.with_sampled_ids(messages)
    assert marked[1]["token_ids"] == [5, 6, 7] and "token_ids" not in marked[2] and "token_ids" not in messages[1]
    memory.remember("a", [1])
    memory.remember("b", [2])  # the oldest goes first
    assert "token_ids" not in memory.with_sampled_ids(messages)[1]
