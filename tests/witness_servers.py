"""The standalone witness (``tools/witness.py``), loaded as a module for the tests and serving
real HTTP on a loopback port from a thread; the same witness answering as a test scripts it
(:class:`ScriptedWitness`); a client for its ``add-checkpoint``."""

import contextlib
import io
import threading
import time
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

from tests.helpers import SHUTDOWN_POLL, Serving
from tests.verifier import load_tool

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "witness.py"


def load_witness_tool():
    """The witness script as a module (loaded once)."""
    return load_tool("witness_tool", SCRIPT)


@contextlib.contextmanager
def witnessing(state_path, log_keys, key=None, name="witness.example/w1", clock=None):
    """A witness cosigning the logs of ``log_keys`` (verifier keys), its state in
    ``state_path``, served on a free loopback port: yields ``(url, witness)``."""
    tool = load_witness_tool()
    key = tool.WitnessKey.parse(key) if key else tool.WitnessKey.generate(name)
    logs = [tool.LogKey.parse(text) for text in log_keys]
    witness = tool.Witness(key, logs, str(state_path), **({"clock": clock} if clock else {}))
    server = tool.serve(witness, "127.0.0.1", 0)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", witness
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def post(url: str, body: bytes | str) -> tuple[int, str, str]:
    """``(status, content type, text)`` of an ``add-checkpoint`` to the witness at ``url``."""
    data = body.encode() if isinstance(body, str) else body
    request = urllib.request.Request(f"{url}/add-checkpoint", data=data, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers.get_content_type(), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get_content_type(), error.read().decode()


class ScriptedWitness(Serving):
    """A witness of ``tools/witness.py`` (its key named ``name``, its state in ``state_path``,
    its clock ``clock``) on a free loopback port that logs each request, ``(method, path,
    headers, body)``, in ``requests``, and answers the next of ``script`` instead while it
    holds any: ``(status, content type, body bytes, seconds to wait first)``, or a function of
    the request's body giving one (``witness.add_checkpoint`` makes a real cosignature line).
    ``url`` is its address, ``vkey`` its verifier key."""

    def __init__(self, state_path, log_keys, name="w1.example", clock=None):
        tool = load_witness_tool()
        self.witness = tool.Witness(
            tool.WitnessKey.generate(name),
            [tool.LogKey.parse(text) for text in log_keys],
            str(state_path),
            **({"clock": clock} if clock else {}),
        )
        self.vkey = self.witness.key.verifier_key
        self.requests, self.script = [], []
        owner = self

        class Handler(tool.handler_for(self.witness)):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests.append((self.command, self.path, self.headers, body))
                if not owner.script:
                    self.rfile = io.BytesIO(body)  # the witness itself reads it
                    return super().do_POST()
                answer = owner.script.pop(0)
                status, kind, data, wait = answer(body) if callable(answer) else answer
                time.sleep(wait)
                with contextlib.suppress(ConnectionError):  # a client that gave up waiting
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                return None

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._serve(self.httpd)

    def bodies(self) -> list[bytes]:
        """The bodies of the requests, in order."""
        return [body for *_, body in self.requests]
