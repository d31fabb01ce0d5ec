"""Real local servers the side-effect tests talk to: an HTTP receiver for webhooks, an SMTP
server (aiosmtpd) and an SMS endpoint with Twilio's Messages API shape. Each records what it
got and answers from a script, so a test can make it fail the way real ones do."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable
from email import message_from_bytes
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Receiver:
    """An HTTP server that records every request and answers from a script per path; a
    ``hook`` runs before it answers (e.g. to kill the worker that sent the request). A
    script entry may carry a delay in seconds as a third item (to time a sender out); ``bodies``
    gives a path's response body (``{"got": path}`` otherwise)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: dict[str, list[tuple[Any, ...]]] = {}
        self.bodies: dict[str, bytes] = {}
        self.hook: Callable[[dict[str, Any]], None] | None = None
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = {"path": self.path, "headers": dict(self.headers), "body": body,
                           "at": time.monotonic()}  # fmt: skip
                with receiver.lock:
                    receiver.requests.append(request)
                    answers = receiver.script.get(self.path) or [(200, {})]
                    status, headers, *delay = answers.pop(0) if len(answers) > 1 else answers[0]
                if receiver.hook is not None:
                    receiver.hook(request)
                time.sleep(delay[0] if delay else 0)
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(
                        receiver.bodies.get(self.path) or json.dumps({"got": self.path}).encode()
                    )
                except OSError:  # the sender gave up or died
                    pass

            do_PUT = do_POST
            do_PATCH = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, path: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["path"] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class MailServer:
    """SMTP on 127.0.0.1 (aiosmtpd). ``script[address]`` lists replies to RCPT TO for that
    address, one per attempt (the last repeats), e.g. ``["451 4.3.0 try later", "250 OK"]``."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.script: dict[str, list[str]] = {}
        self.data_delays: list[float] = []  # seconds before answering DATA, one per message
        self.lock = threading.Lock()
        self.port = free_port()
        self.controller = Controller(_MailHandler(self), hostname="127.0.0.1", port=self.port)
        self.controller.start()
        self.url = f"smtp://127.0.0.1:{self.port}?from=charter@example.com&starttls=off"

    def to(self, address: str) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if address in m["to"]]

    def reset(self) -> None:
        with self.lock:
            self.messages.clear()
            self.script.clear()
            self.data_delays.clear()

    def close(self) -> None:
        self.controller.stop()


class _MailHandler:
    def __init__(self, server: MailServer) -> None:
        self.server = server

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: Any) -> str:  # fmt: skip
        with self.server.lock:
            replies = self.server.script.get(address)
            reply = (replies.pop(0) if len(replies) > 1 else replies[0]) if replies else "250 OK"
        if reply.startswith("250"):
            envelope.rcpt_tos.append(address)
        return reply

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.server.lock:
            delay = self.server.data_delays.pop(0) if self.server.data_delays else 0.0
        await asyncio.sleep(delay)
        message = message_from_bytes(envelope.content, policy=default_policy)
        body = message.get_body(("plain",))
        with self.server.lock:
            self.server.messages.append({
                "from": envelope.mail_from,
                "to": list(envelope.rcpt_tos),
                "subject": message["Subject"],
                "message_id": str(message["Message-ID"]).strip(),
                "key": str(message["X-Charter-Idempotency-Key"]).strip(),
                "body": body.get_content().strip() if body else "",
            })  # fmt: skip
        return "250 Message accepted"


class SmsServer:
    """An SMS provider with Twilio's Messages API shape: records each message; ``script[to]``
    lists (status, headers, delay seconds) answers for that number, the last repeating."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.script: dict[str, list[tuple[int, dict[str, str], float]]] = {}
        self.lock = threading.Lock()
        sms = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                form = {k: v[-1] for k, v in urllib.parse.parse_qs(raw).items()}
                with sms.lock:
                    key = self.headers.get("I-Twilio-Idempotency-Token")
                    auth = self.headers.get("Authorization")
                    sms.messages.append({"path": self.path, "form": form, "auth": auth, "key": key})
                    answers = sms.script.get(form.get("To", "")) or [(201, {}, 0.0)]
                    status, headers, delay = answers.pop(0) if len(answers) > 1 else answers[0]
                time.sleep(delay)
                payload: dict[str, Any] = {"sid": f"SM{len(sms.messages)}", "status": "queued"}
                if status >= 400:
                    payload = {"code": 21211, "message": f"refused with {status}", "status": status}
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(json.dumps(payload).encode())
                except OSError:  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = self.server.server_address[1]
        self.url = f"http://AC123:secret@127.0.0.1:{port}?from=%2B15550001111&timeout=1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, number: str) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if m["form"].get("To") == number]

    def reset(self) -> None:
        with self.lock:
            self.messages.clear()
            self.script.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
