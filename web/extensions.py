"""The unbound extension singletons: the API (documenting problem+json), JWT and the limiter."""

import threading
import time
from collections import OrderedDict
from pathlib import Path

from flask import current_app
from flask_jwt_extended import JWTManager
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from web.problems import ProblemApi

DESCRIPTION = (Path(__file__).parents[1] / "docs" / "openapi.md").read_text(encoding="utf-8")

api = ProblemApi(
    spec_kwargs={
        "info": {
            "description": DESCRIPTION,
            "contact": {"name": "Sports Pick Service maintainers"},
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/", "description": "This deployment"}],
    }
)


class VerifiedTokens:
    """The claims of the access tokens an app verified lately, by token: a bounded LRU.

    A token's signature and claims are verified once; later requests with the same token get
    its claims back while its ``exp`` holds. Only verified tokens are kept, so no one can fill
    it with tokens of their making; who the token names is still read from the database at
    every request (its account's status and token stamp).
    """

    def __init__(self, max_entries: int = 4096):
        self.max_entries = max_entries
        self.claims = OrderedDict()
        self.lock = threading.Lock()

    def get(self, token: str, config) -> dict | None:
        """The claims of ``token`` verified under ``config``'s key while its ``exp`` holds (as
        PyJWT judges it, with ``JWT_DECODE_LEEWAY``), else None."""
        key = (token, config["JWT_SECRET_KEY"])
        leeway = config.get("JWT_DECODE_LEEWAY", 0)
        leeway = leeway.total_seconds() if hasattr(leeway, "total_seconds") else leeway
        with self.lock:
            claims = self.claims.get(key)
            if claims is None:
                return None
            if "exp" in claims and claims["exp"] <= time.time() - leeway:
                del self.claims[key]
                return None
            self.claims.move_to_end(key)
        return dict(claims)  # the caller's own copy

    def put(self, token: str, config, claims: dict) -> None:
        """Remember ``claims``, just verified for ``token`` under ``config``'s key."""
        key = (token, config["JWT_SECRET_KEY"])
        with self.lock:
            self.claims[key] = dict(claims)
            self.claims.move_to_end(key)
            while len(self.claims) > self.max_entries:
                self.claims.popitem(last=False)


class RememberingJWTManager(JWTManager):
    """flask-jwt-extended's manager, verifying each access token once per process.

    Decoding a token is flask-jwt-extended's three passes of PyJWT (its claims and headers
    unverified, then verified), which cost a third of a signed-in request. A token is a fixed
    string and the key a fixed setting, so the verdict on it changes only with the clock, and
    :class:`VerifiedTokens` checks that (``exp``) again at every use.
    """

    def _decode_jwt_from_config(self, encoded_token, csrf_value=None, allow_expired=False):
        config = current_app.config
        remembered = csrf_value is None and not allow_expired  # bearer tokens, as we take them
        tokens = current_app.extensions["verified_tokens"]
        claims = tokens.get(encoded_token, config) if remembered else None
        if claims is None:
            claims = super()._decode_jwt_from_config(encoded_token, csrf_value, allow_expired)
            if remembered:
                tokens.put(encoded_token, config, claims)
        return claims


jwt = RememberingJWTManager()
limiter = Limiter(key_func=get_remote_address)
