"""The fast path (``web/fastpath.py``): a cache hit answered before Flask dispatches it, with what
the full path answers (status, body, headers and access-log line alike) and what it counts
(one rate-limit hit, one quota request); and everything it must leave to the full path."""

import logging

import pytest
from flask.views import MethodView
from werkzeug.test import EnvironBuilder

from models import Match, UsageCounter, User, bump_data_version
from services.accounts import quotas
from services.operations import jobs
from store.database import db
from tests import asserts, factories, world
from tests.helpers import call
from web import access, fastpath, ratelimits
from web.blueprint import Blueprint
from web.extensions import limiter
from web.fastpath import FastPath

#: Headers that describe the moment or the count rather than the answer.
MOMENTARY = {"X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit"}


@pytest.fixture
def app(make_app):
    app = make_app(CLOCK=lambda: world.T0, RATELIMIT_PUBLIC="1000 per minute")
    with app.app_context():
        slugs = world.build()
        app.settled_id = Match.get(Match.slug == slugs["settled"]).id
    return app


def paths(app):
    """Every public view with stored answers, in the forms a reader sends."""
    return [
        "/api/picks/today",
        f"/api/matches/{app.settled_id}",
        "/api/explorer/slate",
        "/api/explorer/slate?date=2026-03-10",
        "/api/track-record/by-competition-type",
        "/track-record",
        "/sitemap.xml",
    ]


def full_path(app):
    """Flask's own WSGI callable: every request down the full path."""
    assert isinstance(app.wsgi_app, FastPath)
    return app.wsgi_app.wsgi_app


def served_fast(app, path, headers=None) -> bool:
    """Whether the fast path answers ``path`` itself (without the rate-limit hit it would spend,
    the limits being off here; it may charge a quota)."""
    environ = EnvironBuilder(
        path=path, headers=headers or {}, environ_base={"REMOTE_ADDR": "127.0.0.1"}
    ).get_environ()
    enabled, limiter.enabled = limiter.enabled, False
    try:
        return app.wsgi_app.answer(environ) is not None
    finally:
        limiter.enabled = enabled


def steady(headers) -> list:
    return sorted((name, value) for name, value in headers if name not in MOMENTARY)


#: The Data API's views with stored answers.
DATA_PATHS = [
    "/api/v1/data/catalog",
    "/api/v1/data/matches?limit=100&include=odds,predictions,picks",
    "/api/v1/data/track-record",
    "/api/v1/data/usage",  # each caller's own
]


@pytest.mark.parametrize("caller", ["anonymous", "free", "pro", "admin"])
@pytest.mark.parametrize("if_none_match", [False, True])
def test_a_fast_answer_is_the_full_paths_answer(app, people, caller, if_none_match, caplog):
    caplog.set_level(logging.INFO, logger="picks.access")
    token = {} if caller == "anonymous" else people[caller][1]
    for path in paths(app) + (DATA_PATHS if caller in ("pro", "admin") else []):
        status, headers, _ = call(app, path, token)  # stores the answer
        assert status == "200 OK", path
        sent = {"X-Request-ID": "fast-path-check", **token}
        if if_none_match:
            sent["If-None-Match"] = dict(headers)["ETag"]
        assert served_fast(app, path, token)
        caplog.clear()
        full = call(full_path(app), path, sent)
        fast = call(app, path, sent)
        lines = [record.getMessage().split(" duration_ms=") for record in caplog.records]
        assert fast[0] == full[0] == ("304 NOT MODIFIED" if if_none_match else "200 OK"), path
        assert fast[2] == full[2], path
        assert steady(fast[1]) == steady(full[1]), path
        remaining = [int(dict(answer[1])["X-RateLimit-Remaining"]) for answer in (full, fast)]
        assert remaining[1] == remaining[0] - 1  # one hit each, on the same counter
        assert len(lines) == 2 and lines[0][0] == lines[1][0], lines  # one log line each
        assert lines[0][1].split(" ", 1)[1] == lines[1][1].split(" ", 1)[1]


def test_a_data_request_is_charged_once_and_refused_past_the_quota(make_app):
    """Fast or not, each request counts once against the rate limit and the monthly quota; past
    the quota, the full path's 429 (and the rate-limit count it took over from the fast path)."""
    app = make_app(CLOCK=lambda: world.T0, QUOTA_PRO_REQUESTS=3)
    client = app.test_client()
    with app.app_context():
        user, token = factories.people()["pro"]
    answers = [client.get(DATA_PATHS[0], headers=token) for _ in range(5)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429, 429]
    asserts.problem(answers[3], 429, "quota-exceeded")
    assert served_fast(app, "/api/picks/today") is False  # nothing stored for it: no query
    remaining = [int(answer.headers["X-RateLimit-Remaining"]) for answer in answers]
    assert remaining == [599, 598, 597, 596, 595]  # RATELIMIT_DATA: 600 a minute, a hit each
    with app.app_context():
        assert UsageCounter.get(UsageCounter.user == user.id).requests == 3


def test_an_account_changed_since_its_token_was_verified_takes_the_full_path(app, people):
    path = DATA_PATHS[0]
    client = app.test_client()
    for kind, change, problem in (
        ("pro", {"status": "suspended"}, (403, "account-suspended")),
        ("admin", {"token_stamp": "renewed"}, (401, None)),
    ):
        user, token = people[kind]
        assert client.get(path, headers=token).status_code == 200
        assert served_fast(app, path, token)
        with app.app_context():
            User.update(**change).where(User.id == user.id).execute()
        assert not served_fast(app, path, token)
        answer = client.get(path, headers=token)
        if problem[1]:
            asserts.problem(answer, *problem)
        else:
            assert answer.status_code == 401
    # A free account never gets what Pro subscribers were answered.
    assert client.get(path, headers=people["free"][1]).status_code == 403
    # A token in another form than the one the fast path reads is the full path's to judge.
    token = people["free"][1]["Authorization"].split()[1]
    assert not served_fast(app, "/api/picks/today", {"Authorization": f"bearer  {token}"})
    assert (
        client.get("/api/picks/today", headers={"Authorization": f"bearer {token}"}).status_code
        == 200
    )


def test_a_request_the_fast_path_must_not_answer_takes_the_full_path(app):
    for path in paths(app)[:3]:
        call(app, path)
        assert served_fast(app, path)
        # A token, however bad, is checked: an invalid one is a 401, never a stored answer.
        status, _, _ = call(app, path, {"Authorization": "Bearer not-a-token"})
        assert status.startswith("401"), path
    client = app.test_client()
    assert client.head("/api/picks/today").status_code == 200
    assert client.post("/api/picks/today").status_code == 405


def test_a_changed_data_version_or_an_expired_answer_is_made_again(app, make_app):
    path = "/api/explorer/slate"
    call(app, path)
    assert served_fast(app, path)
    with app.app_context(), db.atomic():
        bump_data_version()
    assert not served_fast(app, path)  # the data changed: the full path makes it again
    assert call(app, path)[0] == "200 OK" and served_fast(app, path)
    later = make_app(
        CLOCK=lambda: world.T0.replace(minute=1), DATABASE_URL=app.config["DATABASE_URL"]
    )
    later.extensions["answer_cache"] = app.extensions["answer_cache"]
    assert not served_fast(later, path)  # stored for PUBLIC_MAX_AGE (30 s) only


def test_a_callers_usage_is_their_own_and_served_while_their_counters_hold(app, people):
    client, usage = app.test_client(), "/api/v1/data/usage"
    pro = people["pro"][1]
    with app.app_context():
        other = factories.bearer(factories.token(factories.user("pro2@example.com", plan="pro")))
    first = client.get(usage, headers=pro)
    assert first.status_code == 200 and served_fast(app, usage, pro)
    assert client.get("/api/picks/today", headers=other).status_code == 200  # token verified
    assert not served_fast(app, usage, other)  # the same plan, but not the same caller
    client.get(DATA_PATHS[0], headers=other)  # another caller's count changes nothing of theirs
    assert client.get(usage, headers=other).get_json()["requests"]["used"] == 1
    assert served_fast(app, usage, pro)
    assert client.get(usage, headers=pro).get_data() == first.get_data()
    assert client.get(DATA_PATHS[0], headers=pro).status_code == 200  # counts one request
    assert not served_fast(app, usage, pro)  # their counters moved: made again
    again = client.get(usage, headers={**pro, "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 200 and again.headers["ETag"] != first.headers["ETag"]
    assert again.get_json()["requests"]["used"] == first.get_json()["requests"]["used"] + 1
    assert again.headers["Cache-Control"] == "private, no-cache"
    assert served_fast(app, usage, pro)
    with app.app_context():
        User.update(plan="free").where(User.id == people["pro"][0].id).execute()
    assert not served_fast(app, usage, pro)
    asserts.problem(client.get(usage, headers=pro), 403, "subscription-required")
    # What the answer shows of the account (its plan; its role's limits) is part of it too.
    admin, admin_id = people["admin"][1], people["admin"][0].id
    assert client.get(usage, headers=admin).get_json()["requests"]["limit"] is None
    for change, shown in (({"plan": "pro"}, "plan"), ({"role": "user"}, "requests")):
        before = client.get(usage, headers=admin).get_json()
        assert served_fast(app, usage, admin)
        with app.app_context():
            User.update(**change).where(User.id == admin_id).execute()
        assert not served_fast(app, usage, admin)
        assert client.get(usage, headers=admin).get_json()[shown] != before[shown]


def test_a_calibration_run_makes_the_track_record_again(app):
    """The track record page shows the latest calibration run: its success changes the data
    version, so the page stored before it is made again."""
    path = "/track-record"
    assert call(app, path)[0] == "200 OK" and served_fast(app, path)
    with app.app_context():
        assert jobs.calibrate(30, app.config, now=world.T0)["status"] == "succeeded"
    assert not served_fast(app, path)
    assert call(app, path)[0] == "200 OK" and served_fast(app, path)


def test_an_answer_for_premium_readers_is_never_served_anonymously(app, people):
    path = "/api/picks/today"
    pro = people["pro"][1]
    assert app.test_client().get(path, headers=pro).status_code == 200  # stored for Pro
    assert not served_fast(app, path)  # the only stored answer is a premium one


@pytest.mark.parametrize("strategy", ["sliding-window-counter", "fixed-window", "moving-window"])
def test_the_limit_refuses_on_the_fast_path_with_one_count(make_app, strategy):
    """Requests past the limit get the full path's 429, and each request, allowed or refused, is
    counted once: the full path takes over the fast path's refused hit."""
    app = make_app(
        CLOCK=lambda: world.T0, RATELIMIT_PUBLIC="3 per minute", RATELIMIT_STRATEGY=strategy
    )
    client = app.test_client()
    path = "/api/explorer/slate"
    answers = [client.get(path) for _ in range(5)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429, 429]
    assert [answer.headers["X-RateLimit-Remaining"] for answer in answers] == list("21000")
    assert answers[3].get_json()["type"].endswith("/problems/rate-limited")
    assert int(answers[3].headers["Retry-After"]) >= 1
    with app.test_request_context():
        item = ratelimits._item(app, "3 per minute")
        key = item.key_for(app.config["RATELIMIT_KEY_PREFIX"], "ip:127.0.0.1", "public-read")
    if strategy == "fixed-window":  # counts every request, refused or not: once each
        assert limiter.storage.get(key) == 5


def test_a_failure_in_the_fast_path_is_logged_and_the_full_path_answers(app, monkeypatch, caplog):
    path = "/api/explorer/slate"
    assert call(app, path)[0] == "200 OK"

    def broken(*_args):
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(fastpath, "_stored", broken)
    status, headers, _ = call(app, path)
    assert status == "200 OK" and dict(headers)["X-RateLimit-Remaining"] == "998"
    (record,) = [record for record in caplog.records if record.name == "picks.fastpath"]
    assert record.exc_info and "broken on purpose" in str(record.exc_info[1])


@pytest.mark.parametrize("rule", [access.PUBLIC, access.LOGIN])
def test_an_own_answer_without_a_required_token_is_refused_when_the_view_is_declared(rule):
    blp = Blueprint("own_probe", __name__, url_prefix="/own-probe")

    class Own(MethodView):
        @blp.access(rule)
        @blp.cached(own=quotas.usage_version)
        def get(self):
            return {}

    with pytest.raises(TypeError, match="needs a token"):
        blp.route("")(Own)
