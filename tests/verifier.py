"""The standalone verifier script (``tools/verify_ledger.py``), loaded as a module for the tests,
and a fetcher that lets it read an app through Flask's test client."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "verify_ledger.py"


def load_tool(name: str, script: Path):
    """A standalone script of ``tools/`` as the module ``name`` (loaded once)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, script)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_verifier():
    """The verifier script as a module (loaded once)."""
    return load_tool("verify_ledger", SCRIPT)


def client_fetcher(client, token=None):
    """The verifier's ``fetch`` (and ``fetch.raw``, for tiles) over a Flask test client."""

    def fetch(path, authorized=False):
        headers = {"Accept": "application/json"}
        if authorized and token:
            headers["Authorization"] = f"Bearer {token}"
        response = client.get(path, headers=headers)
        return response.status_code, response.get_json()

    def raw(path):
        response = client.get(path)
        return response.status_code, response.data

    fetch.raw = raw  # tiles and the checkpoint, as bytes
    return fetch
