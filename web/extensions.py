"""The unbound extension singletons: the API (documenting problem+json), JWT and the limiter."""

from pathlib import Path

from flask_jwt_extended import JWTManager

from web.problems import ProblemApi
from web.ratelimits import limiter  # noqa: F401 - the limiter, owned by web.ratelimits

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
jwt = JWTManager()
