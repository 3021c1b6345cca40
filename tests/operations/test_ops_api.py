"""The Operations API over HTTP: each kind succeeding and failing, read back with its result;
the 409s, the interrupted-operation rule, 404s, bounds and who may call it."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from clock import utcnow
from models import Match, MatchIntelligence, Operation, Pick
from services.feeds import imports
from services.forecasting import calibration_runs, predictions
from services.record import settling
from tests import asserts, factories

OPS = "/api/v1/ops/operations"
REFRESHES = f"{OPS}/intelligence-refreshes"
SETTLEMENTS = f"{OPS}/settlement-runs"
CALIBRATIONS = f"{OPS}/calibration-runs"
RECORD = {
    "id",
    "kind",
    "status",
    "params",
    "createdAt",
    "startedAt",
    "finishedAt",
    "durationMs",
    "createdBy",
    "error",
}
SELECTIONS = {"1x2": ("home", "draw", "away"), "ou25": ("over", "under"), "btts": ("yes", "no")}
PRICES = {"1x2": (2.1, 3.4, 3.6), "ou25": (1.9, 1.95), "btts": (1.8, 2.0)}


def quotes(bookmaker, shift=0.0, closing=False):
    """``bookmaker``'s quote of every selection of every market."""
    return [
        (bookmaker, market, selection, price + shift, closing)
        for market, names in SELECTIONS.items()
        for selection, price in zip(names, PRICES[market], strict=True)
    ]


ODDS = [*quotes("pinnacle"), *quotes("bet365", 0.1), *quotes("pinnacle", closing=True)]


@pytest.fixture
def world(ctx):
    """Forty finished matches over the last forty days with odds, predicted walk-forward, one
    pending pick on the latest (12 hours ago), and a fixture, a finished and a cancelled match to
    refresh: name → match."""
    now = utcnow()
    pairs = itertools.permutations(range(7), 2)  # 42 distinct fixtures; the last is kept
    played = [
        factories.match_record(
            f"T{home}",
            f"T{away}",
            kickoff=now - timedelta(days=day, hours=-12),  # half a day off any window's edge
            goals=(day % 3, day % 2),
            odds=ODDS,
        )
        for day, (home, away) in zip(range(40, 0, -1), pairs, strict=False)
    ]
    imports.store_records(played)
    last = Match.get(Match.kickoff_at == played[-1].kickoff_at)
    predictions.backfill(factories.settings())
    difference = last.home_goals - last.away_goals
    factories.pick(last, "1x2", "draw" if not difference else "home" if difference > 0 else "away")
    return {
        "open": factories.match(
            "T6", "T5", kickoff=now + timedelta(days=2), status="scheduled", odds=ODDS
        ),
        "finished": last,
        "cancelled": factories.match(
            "X", "Y", kickoff=now - timedelta(hours=3), status="cancelled"
        ),
    }


def ok(response):
    """The JSON body of a 200."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    return response.get_json()


def succeeded(client, headers, path, body, kind, params, caller):
    """POST an operation and check its record and its read back; returns the record."""
    record = ok(client.post(path, json=body, headers=headers))
    assert set(record) == RECORD
    assert (record["kind"], record["status"], record["params"]) == (kind, "succeeded", params)
    assert (record["createdBy"], record["error"]) == (caller.id, None)
    assert record["createdAt"].endswith("Z") and record["finishedAt"].endswith("Z")
    assert record["createdAt"][:19] <= record["startedAt"][:19] <= record["finishedAt"][:19]
    assert isinstance(record["durationMs"], int) and record["durationMs"] >= 0
    assert ok(client.get(f"{OPS}/{record['id']}", headers=headers)) == record
    return record


def test_a_settlement_run_succeeds_and_reads_back(client, people, world):
    operator, headers = people["operator"]
    record = succeeded(
        client, headers, SETTLEMENTS, {}, "settlement-run", {"lastDays": 7}, operator
    )
    result = ok(client.get(f"{OPS}/{record['id']}/result", headers=headers))
    assert result["settledAt"].endswith("Z")
    assert {name: value for name, value in result.items() if name != "settledAt"} == {
        "lastDays": 7,
        "examined": 1,
        "won": 1,
        "lost": 0,
        "void": 0,
        "halfWon": 0,
        "halfLost": 0,
        "pending": 0,
    }
    pick = Pick.get(Pick.match == world["finished"])
    assert (pick.status, pick.profit) == ("won", 1.0)


def test_a_calibration_run_succeeds_and_reads_back(client, people, world):
    admin, headers = people["admin"]
    body = {"windowDays": 30}
    record = succeeded(client, headers, CALIBRATIONS, body, "calibration-run", body, admin)
    result = ok(client.get(f"{OPS}/{record['id']}/result", headers=headers))
    assert set(result) == {"windowDays", "from", "to", "referenceMethod", "markets"}
    assert result["windowDays"] == 30 and result["referenceMethod"].startswith("closing odds")
    assert list(result["markets"]) == ["1x2", "ou25", "btts"]
    for market, scores in result["markets"].items():
        assert set(scores) == {
            *("count", "brier", "logLoss", "rps", "ece", "bins", "priceBands", "reference")
        }
        assert scores["count"] == 30  # the finished matches of the last 30 days
        assert scores["brier"] is not None and scores["reference"]["count"] == 30
        assert (scores["rps"] is None) is (market != "1x2")
        assert sum(bin_["count"] for bin_ in scores["bins"]) == 30 * len(SELECTIONS[market])
        priced = sum(band["count"] for band in scores["priceBands"])
        assert priced == sum(band["count"] for band in scores["reference"]["priceBands"])
        assert priced == 30 * len(SELECTIONS[market])


def test_an_intelligence_refresh_succeeds_and_reads_back(client, people, world):
    operator, headers = people["operator"]
    match = world["open"]
    body = {"matchId": match.id}
    record = succeeded(client, headers, REFRESHES, body, "intelligence-refresh", body, operator)
    result = ok(client.get(f"{OPS}/{record['id']}/result", headers=headers))
    assert set(result) == {
        "matchId",
        "refreshedAt",
        "predictions",
        "intelligence",
        "picks",
        "published",
        "rebuilt",
    }
    assert (result["matchId"], result["predictions"], result["intelligence"]) == (match.id, 3, 1)
    assert MatchIntelligence.get(MatchIntelligence.match == match).updated_at is not None


def failing_after(work):
    """``work`` done for real, then a failure: what it wrote must be rolled back."""

    def run(*args, **kwargs):
        work(*args, **kwargs)
        raise RuntimeError("the feed timed out")

    return run


@pytest.mark.parametrize(
    ("path", "body", "kind", "module", "name"),
    [
        (SETTLEMENTS, {"lastDays": 3}, "settlement-run", settling, "run"),
        (CALIBRATIONS, {"windowDays": 30}, "calibration-run", calibration_runs, "run"),
        (REFRESHES, {"matchId": "open"}, "intelligence-refresh", predictions, "refresh"),
    ],
)
def test_a_failing_operation_is_recorded_with_its_error(
    client, people, world, monkeypatch, path, body, kind, module, name
):
    operator, headers = people["operator"]
    monkeypatch.setattr(module, name, failing_after(getattr(module, name)))
    if "matchId" in body:
        body = {"matchId": world["open"].id}
    record = ok(client.post(path, json=body, headers=headers))
    assert set(record) == RECORD
    assert (record["kind"], record["status"], record["params"]) == (kind, "failed", body)
    assert record["error"] == "RuntimeError: the feed timed out"
    assert record["finishedAt"] and record["createdBy"] == operator.id
    assert ok(client.get(f"{OPS}/{record['id']}", headers=headers)) == record
    problem = asserts.problem(
        client.get(f"{OPS}/{record['id']}/result", headers=headers), 409, "operation-failed"
    )
    assert "RuntimeError: the feed timed out" in problem["detail"]
    # What the work wrote before it failed was rolled back.
    assert Pick.get(Pick.match == world["finished"]).status == "pending"
    assert not MatchIntelligence.select().where(MatchIntelligence.match == world["open"]).exists()


# Unfinished and interrupted operations


def stored_operation(status, age_seconds=0, started=True):
    """An operation row of ``status`` created (and started, if ``started``) that long ago."""
    moment = factories.now() - timedelta(seconds=age_seconds)
    return Operation.create(
        kind="settlement-run",
        status=status,
        params={"lastDays": 7},
        created_at=moment,
        started_at=moment if started else None,
    )


@pytest.mark.parametrize(("status", "started"), [("queued", False), ("running", True)])
def test_the_result_of_an_unfinished_operation_is_a_409(client, people, ctx, status, started):
    headers = people["operator"][1]
    operation = stored_operation(status, started=started)
    assert ok(client.get(f"{OPS}/{operation.id}", headers=headers))["status"] == status
    problem = asserts.problem(
        client.get(f"{OPS}/{operation.id}/result", headers=headers), 409, "operation-not-finished"
    )
    assert status in problem["detail"]


@pytest.mark.parametrize(
    ("status", "started", "age", "stale", "interrupted"),
    [
        ("running", True, 30, 60, False),
        ("running", True, 90, 60, True),
        ("queued", False, 90, 60, True),
        ("queued", False, 30, 60, False),
        ("running", True, 800, None, False),  # the default: 900 s
        ("running", True, 1000, None, True),
    ],
)
def test_an_operation_left_unfinished_too_long_reads_as_interrupted(
    make_app, status, started, age, stale, interrupted
):
    frozen = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # however long the test itself takes
    app = make_app(CLOCK=lambda: frozen, **({"OPERATION_STALE_SECONDS": stale} if stale else {}))
    client = app.test_client()
    with app.app_context():
        headers = factories.people()["operator"][1]
        operation = stored_operation(status, age, started)
    record = ok(client.get(f"{OPS}/{operation.id}", headers=headers))
    result = client.get(f"{OPS}/{operation.id}/result", headers=headers)
    if not interrupted:
        assert (record["status"], record["error"], record["finishedAt"]) == (status, None, None)
        asserts.problem(result, 409, "operation-not-finished")
        return
    limit = stale or 900
    assert record["status"] == "failed" and record["finishedAt"]
    assert record["error"] == f"interrupted: still {status} after {limit} s"
    problem = asserts.problem(result, 409, "operation-failed")
    assert record["error"] in problem["detail"]
    with app.app_context():  # marked once, in the table, not only in the answer
        stored = Operation.get_by_id(operation.id)
        assert (stored.status, stored.error) == ("failed", record["error"])


# Lookups and state


@pytest.mark.parametrize(
    "path", [f"{OPS}/987654", f"{OPS}/987654/result", f"{OPS}/abc", f"{OPS}/2147483648"]
)
def test_an_unknown_operation_is_a_404(client, people, path):
    asserts.problem(client.get(path, headers=people["operator"][1]), 404, "not-found")


@pytest.mark.parametrize(
    ("name", "status", "problem"),
    [
        (None, 404, "not-found"),
        ("finished", 409, "match-not-open"),
        ("cancelled", 409, "match-not-open"),
    ],
)
def test_a_refresh_of_an_unknown_or_closed_match_is_refused_unrecorded(
    client, people, world, name, status, problem
):
    match_id = world[name].id if name else 987654
    response = client.post(REFRESHES, json={"matchId": match_id}, headers=people["admin"][1])
    body = asserts.problem(response, status, problem)
    assert str(match_id) in body["detail"]
    assert Operation.select().count() == 0


# Bounds


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (SETTLEMENTS, {"lastDays": 0}, "lastDays"),
        (SETTLEMENTS, {"lastDays": 3651}, "lastDays"),
        (SETTLEMENTS, {"lastDays": "7"}, "lastDays"),
        (SETTLEMENTS, {"lastDays": 1.5}, "lastDays"),
        (SETTLEMENTS, {"lastDays": None}, "lastDays"),
        (CALIBRATIONS, {"windowDays": 6}, "windowDays"),
        (CALIBRATIONS, {"windowDays": 3651}, "windowDays"),
        (CALIBRATIONS, {"windowDays": "90"}, "windowDays"),
        (REFRESHES, {}, "matchId"),
        (REFRESHES, {"matchId": 0}, "matchId"),
        (REFRESHES, {"matchId": "1"}, "matchId"),
        (REFRESHES, {"matchId": 2**31}, "matchId"),
    ],
)
def test_out_of_bounds_requests_are_422s_naming_the_field(client, people, path, body, field):
    response = client.post(path, json=body, headers=people["operator"][1])
    problem = asserts.problem(response, 422, "validation-error")
    assert list(problem["errors"]) == [field]
    with client.application.app_context():
        assert Operation.select().count() == 0


@pytest.mark.parametrize(
    ("path", "body", "params"),
    [
        (SETTLEMENTS, None, {"lastDays": 7}),
        (SETTLEMENTS, {"lastDays": 1}, {"lastDays": 1}),
        (SETTLEMENTS, {"lastDays": 3650}, {"lastDays": 3650}),
        (CALIBRATIONS, None, {"windowDays": 90}),
        (CALIBRATIONS, {}, {"windowDays": 90}),
        (CALIBRATIONS, {"windowDays": 7}, {"windowDays": 7}),
        (CALIBRATIONS, {"windowDays": 3650}, {"windowDays": 3650}),
    ],
)
def test_bounds_and_defaults_are_accepted(client, people, path, body, params):
    options = {} if body is None else {"json": body}
    record = ok(client.post(path, headers=people["operator"][1], **options))
    assert (record["status"], record["params"]) == ("succeeded", params)


# Who may call it


#: Every operations endpoint: (method, path, body, the status an operator gets). ``{id}`` is a
#: succeeded operation; the refresh names an unknown match, so passing the access rule is a 404.
ENDPOINTS = [
    ("post", SETTLEMENTS, {}, 200),
    ("post", CALIBRATIONS, {}, 200),
    ("post", REFRESHES, {"matchId": 987654}, 404),
    ("get", f"{OPS}/{{id}}", None, 200),
    ("get", f"{OPS}/{{id}}/result", None, 200),
    ("get", "/api/v1/ops/health/services", None, 200),
]


@pytest.mark.parametrize(
    "kind", ["operator", "admin", "pro", "free", "anonymous", "suspended-admin"]
)
def test_operations_are_for_operators_and_admins(client, people, kind):
    operation_id = ok(client.post(SETTLEMENTS, headers=people["operator"][1]))["id"]
    headers = people[kind][1] if kind != "anonymous" else {}
    for method, path, body, allowed in ENDPOINTS:
        options = {"headers": headers, **({"json": body} if body is not None else {})}
        response = client.open(path.format(id=operation_id), method=method.upper(), **options)
        if kind in ("operator", "admin"):
            assert response.status_code == allowed, (path, response.get_data(as_text=True))
        elif kind == "anonymous":
            asserts.unauthorized(response)
        elif kind == "suspended-admin":
            asserts.problem(response, 403, "account-suspended")
        else:
            problem = asserts.problem(response, 403, "role-required")
            assert problem["detail"] == "The admin or operator role is required."


def test_refusals_come_before_lookups(client, people):
    """A caller without the role learns nothing about which operations exist."""
    for kind in ("free", "pro"):
        response = client.get(f"{OPS}/987654", headers=people[kind][1])
        asserts.problem(response, 403, "role-required")
    asserts.unauthorized(client.get(f"{OPS}/987654/result"))
