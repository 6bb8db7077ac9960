"""`serve-policy`: a trainer checkpoint behind an OpenAI-compatible chat-completions endpoint on
127.0.0.1, so `vistool eval` can run a checkpoint through the same harness as `openai:` models.

POST /v1/chat/completions takes `messages` (system/user/assistant/tool; content a string or parts,
images as `image_url` data URLs), `temperature` (0 = greedy), `max_tokens`; it answers
`choices[0].message.content` with the policy's raw text. GET /v1/models names the one model.
A bearer token is required when the environment variable named by --token-env is set.
It never fetches a remote image URL, never executes or parses what the model wrote, and never
listens beyond 127.0.0.1. Requests are served one generation at a time (one model, one device).

The conversation is read exactly as sent: what the policy sees (the system turn, the view of
earlier images) is the presentation of the env that made the messages (`vistool eval` applies the
checkpoint's run config: docs/CONTRACTS.md), never rewritten here. An earlier turn this server
wrote comes back as text; it is read as the token ids that were sampled for it (ReplyMemory), as the
trainer reads its own turns, because the same text can tokenise to other ids.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .events import EventStream

DEFAULT_MAX_TOKENS = 256
MAX_BODY_BYTES = 64 * 2**20
ROLES = ("system", "user", "assistant", "tool")


class RequestError(ValueError):
    """A request the server cannot answer; the message says what was wrong and how to fix it."""


class ReplyMemory:
    """The sampled token ids of the replies this server wrote, by their text (the newest `size`)."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._ids: OrderedDict[str, list[int]] = OrderedDict()

    def remember(self, text: str, token_ids: list[int]) -> None:
        self._ids[text] = list(token_ids)
        self._ids.move_to_end(text)
        while len(self._ids) > self.size:
            self._ids.popitem(last=False)

    def with_sampled_ids(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages` with each assistant turn this server wrote carrying its sampled ids."""
        out = []
        for message in messages:
            if message["role"] == "assistant":
                text = "".join(part.get("text", "") for part in message["content"] if part.get("type") == "text")
                ids = self._ids.get(text)
                if ids is not None:
                    message = {**message, "token_ids": list(ids)}
            out.append(message)
        return out


def to_policy_messages(messages: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages → the trainer's message parts (text, and images as inline data with a
    content-hash ref, so identical images share one preprocessing)."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list of {role, content} objects")
    converted = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise RequestError(f"messages[{index}].role must be one of {', '.join(ROLES)}")
        content = message.get("content")
        if isinstance(content, str):
            parts: list[dict[str, Any]] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            parts = [_part(part, f"messages[{index}].content[{number}]") for number, part in enumerate(content)]
        else:
            raise RequestError(f"messages[{index}].content must be a string or a list of parts")
        converted.append({"role": message["role"], "content": parts})
    return converted


def _part(part: Any, where: str) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url:
            raise RequestError(f"{where}: images must be data URLs (data:image/png;base64,...); this server fetches nothing")
        return {"type": "image", "data": url, "ref": "sha256-" + hashlib.sha256(url.encode()).hexdigest()}
    raise RequestError(f"{where}: expected {{type: 'text', text}} or {{type: 'image_url', image_url: {{url}}}}")


class PolicyServer:
    def __init__(self, policy: Any, model_name: str, token: str | None, port: int = 0):
        self.policy = policy
        self.model_name = model_name
        self.token = token
        self.replies = ReplyMemory()
        self.generation_lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = to_policy_messages(body.get("messages"))
        if body.get("n", 1) != 1:
            raise RequestError("'n' must be 1: one completion per request")
        temperature = body.get("temperature", 1.0)
        max_tokens = body.get("max_tokens", body.get("max_completion_tokens", DEFAULT_MAX_TOKENS))
        if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or temperature < 0:
            raise RequestError("'temperature' must be a number >= 0 (0 = greedy)")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise RequestError("'max_tokens' must be a positive integer")
        try:
            with self.generation_lock:
                messages = self.replies.with_sampled_ids(messages)
                prompt_tokens = len(self.policy.encoder.encode(messages, add_generation_prompt=True).input_ids)
                turn = self.policy.sample_turns([messages], max_tokens, float(temperature) or 1.0, greedy=temperature == 0)[0]
                self.replies.remember(turn.text, turn.token_ids)
        except (ValueError, OSError) as error:  # an undecodable image, a role order the template rejects
            raise RequestError(f"cannot encode the conversation: {error}") from None
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()), "model": self.model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": turn.text},
                         "finish_reason": "length" if turn.truncated else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(turn.token_ids),
                      "total_tokens": prompt_tokens + len(turn.token_ids)},
        }


def _handler_for(server: PolicyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
            self._reply(status, {"error": {"message": message, "type": kind}})

        def _authorised(self) -> bool:
            if server.token is None:
                return True
            given = self.headers.get("Authorization", "")
            if hmac.compare_digest(given.encode(), f"Bearer {server.token}".encode()):
                return True
            self._error(401, "missing or wrong bearer token (Authorization: Bearer <the token in the server's token variable>)",
                        "authentication_error")
            return False

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if not self._authorised():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._reply(200, {"object": "list", "data": [{"id": server.model_name, "object": "model", "owned_by": "vistool"}]})
            else:
                self._error(404, f"no route GET {self.path}: use POST /v1/chat/completions or GET /v1/models", "not_found")

        def do_POST(self) -> None:  # noqa: N802
            if not self._authorised():
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(404, f"no route POST {self.path}: use POST /v1/chat/completions", "not_found")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY_BYTES:
                self._error(400 if length <= 0 else 413, f"request body must be 1 byte to {MAX_BODY_BYTES} bytes of JSON; got {length}")
                return
            try:
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise RequestError("the request body must be a JSON object")
                self._reply(200, server.complete(body))
            except json.JSONDecodeError as error:
                self._error(400, f"the request body is not JSON: {error}")
            except RequestError as error:
                self._error(400, str(error))

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            sys.stderr.write(f"[serve-policy] {self.address_string()} {format % args}\n")

    return Handler


def checkpoint_model_name(checkpoint: Path) -> str:
    """`<run folder>/<checkpoint folder>`, e.g. demo/step-000040: what /v1/models lists."""
    resolved = checkpoint.resolve()
    run = resolved.parent.parent.name if resolved.parent.name == "checkpoints" else resolved.parent.name
    return f"{run}/{resolved.name}"


def serve_policy(checkpoint: str, port: int, device: str, config_path: str | None, token_env: str) -> int:
    from .config_migration import load_saved_config
    from ..model.policy import Policy
    from .run_config import ConfigError

    events = EventStream()
    folder = Path(checkpoint)
    weights = folder / "policy" if (folder / "policy").exists() else folder
    if not (weights / "config.json").exists():
        events.emit("failed", error=f"{folder} is not a checkpoint: expected {folder}/policy/ (save_pretrained) or a model folder")
        return 2
    dtype = "auto"
    run_config = Path(config_path) if config_path else folder / ".." / ".." / "config.json"
    if run_config.exists():
        try:
            saved = load_saved_config(run_config, events.warning).policy
        except ConfigError as error:
            events.emit("failed", error=f"the checkpoint's run config {run_config}: {error}")
            return 2
        dtype = saved.dtype
    policy = Policy.load(weights, device, dtype)
    token = os.environ.get(token_env) or None
    server = PolicyServer(policy, checkpoint_model_name(folder), token, port)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.httpd.shutdown, daemon=True).start())
    events.emit("listening", url=server.url, model=server.model_name, checkpoint=str(folder.resolve()),
                device=str(policy.device), auth=token is not None)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0
