"""A real webhook receiver on loopback that verifies every delivery with ``standardwebhooks``."""

import contextlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from tests.helpers import SHUTDOWN_POLL


@dataclass
class Received:
    """One request as the receiver saw it."""

    headers: dict
    body: bytes
    verified_by: list  # indexes of the receiver's secrets whose signature matched
    answered: int | None

    @property
    def payload(self) -> dict:
        return json.loads(self.body)

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


@dataclass
class Receiver:
    """What the server knows: the secrets it checks with, what to answer next, what came."""

    url: str
    secrets: list = field(default_factory=list)
    answers: list = field(default_factory=list)  # status, (status, headers), or "hang"
    received: list = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def verify(self, body: bytes, headers: dict) -> list:
        """Which secrets verify this delivery (standardwebhooks checks the timestamp too)."""
        found = []
        for index, secret in enumerate(self.secrets):
            with contextlib.suppress(WebhookVerificationError):
                Webhook(secret).verify(body, headers)
                found.append(index)
        return found

    def wait_for(self, count: int, timeout: float = 20.0) -> list:
        """The first ``count`` requests, waiting up to ``timeout`` seconds for them."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            assert len(self.received) >= count, f"{len(self.received)} of {count} arrived"
            return list(self.received[:count])

    def of_type(self, event_type: str) -> list:
        return [item for item in self.received if item.payload["type"] == event_type]


def _handler(receiver: Receiver):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {name.lower(): value for name, value in self.headers.items()}
            with receiver.arrived:
                answer = receiver.answers.pop(0) if receiver.answers else 200
            item = Received(headers, body, receiver.verify(body, headers), None)
            extra = {}
            if answer == "hang":  # seen, then held until the test releases it
                with receiver.arrived:
                    receiver.received.append(item)
                    receiver.arrived.notify_all()
                receiver.released.wait(60)
                item.answered = 200
            else:
                if isinstance(answer, tuple):
                    answer, extra = answer
                item.answered = answer
                with receiver.arrived:  # recorded before the sender hears the answer
                    receiver.received.append(item)
                    receiver.arrived.notify_all()
            try:
                self.send_response(item.answered)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # a sender that stopped waiting (a held answer past its timeout)

        def log_message(self, *args):
            pass

    return Handler


@contextlib.contextmanager
def receiving(*secrets, host="127.0.0.1", path="/hooks"):
    """A receiver listening on a free loopback port until the block ends."""
    server = ThreadingHTTPServer((host, 0), None)
    server.daemon_threads = True
    receiver = Receiver(f"http://{host}:{server.server_address[1]}{path}", list(secrets))
    server.RequestHandlerClass = _handler(receiver)
    thread = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.released.set()
        server.shutdown()
        server.server_close()
