"""The env client's time limit grows with a batch's items, and a request that runs out of time
drops its keep-alive connection, so the late answer is never read as the next request's.

The server is a real HTTP server on loopback whose handler answers each request after a set delay
with the request's own `n`: a stand-in for the env server's transport only (its timing), since the
real server cannot be made slow on demand."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from vistool_trainer.rollouts.env_client import EnvClient


class _SlowEcho(BaseHTTPRequestHandler):
    delay_s = 0.6

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(self.delay_s)
        answer = json.dumps({"results": [{"n": item["n"]} for item in body["items"]]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowEcho)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_batch_gets_more_time_per_item_and_a_timeout_drops_the_connection(slow_server, monkeypatch):
    monkeypatch.setattr("vistool_trainer.rollouts.env_client.BATCH_ITEM_TIMEOUT_S", 0.1)
    client = EnvClient(slow_server, "token", timeout_s=0.3)
    # One item: 0.3 + 0.1 = 0.4 s against a 0.6 s answer.
    with pytest.raises(TimeoutError, match=r"POST /v1/batch/step \(1 items\): the env server did not answer in 0 s"):
        client.step_episodes([{"n": 1}])
    assert client._connection is None
    # Eight items: 0.3 + 0.8 = 1.1 s, and the answer read is this request's, not the late one before it.
    assert client.step_episodes([{"n": 10 + i} for i in range(8)]) == [{"n": 10 + i} for i in range(8)]
    client.close()
