"""A real HTTP server on 127.0.0.1 that speaks the OpenAI-compatible API: chat completions, embeddings, rerank.

Nothing is mocked below HTTP: clients open real sockets to it. Behaviour is scriptable per path:

    with FakeOpenAI() as fake:
        fake.chat_content = '{"action": "MERGE", "confidence": 0.9}'   # what the "model" answers
        fake.script("/v1/chat/completions", Reply(status=500), Reply(delay_s=2.0), Reply(close=True))
        ...                                                           # queued replies are used first, in order
        fake.stop()                                                   # the server goes away

Defaults when no scripted reply is queued: chat answers ``chat_content`` (or ``chat_fn(body)``); embeddings are
deterministic unit vectors of ``embed_dim`` derived from a hash of each input; rerank scores are word overlap
(``/v1/rerank`` in the vLLM/Jina/Cohere shape, ``/rerank`` as TEI's bare list).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    """A dict/list is sent as JSON; str/bytes are sent raw (e.g. invalid JSON). None: the default reply."""
    delay_s: float = 0.0
    close: bool = False
    """Close the connection without answering (after the delay)."""
    truncate: bool = False
    """Announce the full Content-Length but send only half the body, then close."""


@dataclass
class Recorded:
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.open_sockets: set[socket.socket] = set()
        self._sock_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._sock_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._sock_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Close kept-alive connections too: a server that goes away does not finish its conversations."""
        with self._sock_lock:
            sockets, self.open_sockets = list(self.open_sockets), set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


class FakeOpenAI:
    def __init__(self, *, embed_dim: int = 16) -> None:
        self.embed_dim = embed_dim
        self.chat_content: str = "{}"
        self.chat_fn: Callable[[dict[str, Any]], str] | None = None
        self.reject_response_formats: set[str] = set()
        self.requests: list[Recorded] = []
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                fake._handle(self)

        self._server = _Server(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """The server goes away: the listening socket closes; later requests are refused."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.drop_connections()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- scripting ------------------------------------------------------------------------------
    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self._queues[path].extend(replies)

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    # --- serving --------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        path = h.path.split("?")[0]
        with self._lock:
            self.requests.append(Recorded(path, body, dict(h.headers)))
            reply = self._queues[path].popleft() if self._queues[path] else Reply()
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.close:
            h.close_connection = True
            return
        status, payload = reply.status, reply.body
        if payload is None and status == 200:
            status, payload = self._default(path, body)
        elif payload is None:
            payload = {"error": {"message": f"scripted {status}", "type": "server_error"}}
        data = (
            payload
            if isinstance(payload, bytes)
            else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
        )
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            if reply.truncate:
                h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(data[: len(data) // 2] if reply.truncate else data)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): fine
            pass
        if reply.truncate:
            h.close_connection = True

    def _default(self, path: str, body: Any) -> tuple[int, Any]:
        if path == "/v1/chat/completions":
            fmt = (body.get("response_format") or {}).get("type") if isinstance(body, dict) else None
            if fmt in self.reject_response_formats:
                return 400, {
                    "error": {"message": f"response_format {fmt} is not supported", "type": "invalid_request"}
                }
            content = self.chat_fn(body) if self.chat_fn else self.chat_content
            return 200, {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
        if path == "/v1/embeddings":
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            return 200, {
                "object": "list",
                "model": body.get("model"),
                "data": [
                    {"object": "embedding", "index": i, "embedding": fake_vector(t, self.embed_dim).tolist()}
                    for i, t in reversed(
                        list(enumerate(inputs))
                    )  # out of order on purpose: clients sort by index
                ],
            }
        if path in ("/v1/rerank", "/rerank"):
            q = set(body["query"].lower().split())
            docs = body.get("documents") or body.get("texts") or []
            scores = [len(q & set(d.lower().split())) / (len(q) or 1) for d in docs]
            ranked = sorted(range(len(docs)), key=lambda i: -scores[i])[: body.get("top_n") or len(docs)]
            if path == "/rerank":  # TEI's own route: a bare list
                return 200, [{"index": i, "score": scores[i]} for i in ranked]
            return 200, {
                "model": body.get("model"),
                "results": [{"index": i, "relevance_score": scores[i]} for i in ranked],
            }
        return 404, {"error": {"message": f"no route {path}"}}


def fake_vector(text: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)
