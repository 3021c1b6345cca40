"""One admission step (``web/admission.py``) for both request paths: whatever the caller, the
access rule, the rate limit and the quota say, the fast path answers exactly as the full path
does (status, body, every header, the access-log line) or leaves the request to it."""

import json
import logging
import re

import pytest

from models import Match
from tests import factories, world
from tests.helpers import call

#: Headers that describe the moment or the count rather than the answer: each request counts
#: once, so the second of two answers has one request fewer left.
MOMENTARY = {"X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "Retry-After"}

CALLERS = ["anonymous", "free", "pro", "admin", "suspended", "forged"]

#: Each answer's situation: a first answer, one revalidated with its ETag, one past the rate
#: limit, one past the monthly quota.
SITUATIONS = ["fresh", "revalidated", "over-limit", "over-quota"]


@pytest.fixture
def served(make_app):
    """An app on the world at ``world.T0`` with its people, and the paths with stored answers."""
    app = make_app(CLOCK=lambda: world.T0)
    with app.app_context():
        slugs = world.build()
        settled = Match.get(Match.slug == slugs["settled"]).id
        accounts = {kind: headers for kind, (_, headers) in factories.people().items()}
    accounts["anonymous"] = {}
    accounts["forged"] = {"Authorization": "Bearer not.a.token"}
    paths = [
        "/api/picks/today",
        f"/api/matches/{settled}",
        "/api/explorer/slate",
        "/track-record",
        "/sitemap.xml",
        "/api/v1/data/catalog",  # charged to the quota
        "/api/v1/data/usage",  # each caller's own
    ]
    return app, accounts, paths


def both(app, path, headers):
    """The full path's answer, then the fast path's, and whether the fast path handed its
    request to the full path rather than answering it."""
    fast_path = app.wsgi_app
    inner, handed = fast_path.wsgi_app, []

    def full_path(environ, start_response):
        handed.append(path)
        return inner(environ, start_response)

    full = call(inner, path, headers)
    fast_path.wsgi_app = full_path
    try:
        fast = call(app, path, headers)
    finally:
        fast_path.wsgi_app = inner
    return full, fast, bool(handed)


def steady(answer) -> list:
    """An answer's headers but those that tick: the rate limit's counts and waits, and a 429's
    length (its detail names the seconds to wait, which the limiter reads off the real clock)."""
    status, headers, _ = answer
    ticking = MOMENTARY | ({"Content-Length"} if status.startswith("429") else set())
    return sorted((name, value) for name, value in headers if name not in ticking)


def content(answer):
    """An answer's body, with the seconds a 429 says to wait left out (they tick)."""
    status, _, body = answer
    if not status.startswith("429"):
        return body
    problem = json.loads(body)
    problem["detail"] = re.sub(r"\d+ s\b", "N s", problem["detail"])
    return problem


def prime(app, accounts, paths, caller):
    """Store every path's answers (anonymous, Pro, the caller's own) and verify the caller's
    token, as earlier requests would have."""
    for path in paths:
        for who in {"anonymous", "pro", caller}:
            call(app, path, accounts[who])


@pytest.mark.parametrize("situation", SITUATIONS)
@pytest.mark.parametrize("caller", CALLERS)
def test_the_fast_path_admits_and_answers_as_the_full_path(served, caller, situation, caplog):
    app, accounts, paths = served
    prime(app, accounts, paths, caller)
    sent = {"X-Request-ID": "admission-check", **accounts[caller]}
    if situation == "over-limit":  # a fresh counter of one request an hour, spent
        app.config.update(
            RATELIMIT_PUBLIC="1 per hour", RATELIMIT_AUTH="1 per hour", RATELIMIT_DATA="1 per hour"
        )
        call(app, paths[0], accounts[caller])
        call(app, "/api/v1/data/usage", accounts[caller])
    if situation == "over-quota":  # the requests primed spent it
        app.config.update(QUOTA_PRO_REQUESTS=1)
    caplog.set_level(logging.INFO, logger="picks.access")
    statuses = set()
    for path in paths:
        headers = dict(sent)
        if situation == "revalidated":
            headers["If-None-Match"] = dict(call(app, path, accounts[caller])[1]).get("ETag", "")
        caplog.clear()
        full, fast, handed = both(app, path, headers)
        statuses.add(full[0])
        assert fast[0] == full[0], (path, fast[0], full[0])
        assert handed == (full[0][:3] not in ("200", "304")), path  # served whatever it may
        assert content(fast) == content(full), path
        assert steady(fast) == steady(full), path
        counted = [dict(answer[1]).get("X-RateLimit-Remaining") for answer in (full, fast)]
        if counted[0] is not None:  # each counted once, on the same counter
            assert int(counted[1]) == max(0, int(counted[0]) - 1), path
        waits = [int(dict(answer[1]).get("Retry-After", 0)) for answer in (full, fast)]
        assert abs(waits[0] - waits[1]) <= 1, path
        lines = [record.getMessage().split(" duration_ms=") for record in caplog.records]
        assert len(lines) == 2 and lines[0][0] == lines[1][0], lines  # one log line each
        assert lines[0][1].split(" ", 1)[1] == lines[1][1].split(" ", 1)[1], lines
    # Each situation is what it says for the callers it applies to.
    expected = {
        "fresh": "200 OK",
        "revalidated": "304 NOT MODIFIED",
        "over-limit": "429 TOO MANY REQUESTS",
        "over-quota": "429 TOO MANY REQUESTS" if caller == "pro" else "200 OK",
    }[situation]
    if caller != "forged":
        assert expected in statuses, statuses
