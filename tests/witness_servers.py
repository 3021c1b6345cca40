"""The standalone witness (``tools/witness.py``), loaded as a module for the tests and serving
real HTTP on a loopback port from a thread; a client for its ``add-checkpoint``."""

import contextlib
import threading
import urllib.error
import urllib.request
from pathlib import Path

from tests.helpers import SHUTDOWN_POLL
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
