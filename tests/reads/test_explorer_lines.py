"""The explorer's slate and comparable matches on the markets with lines (Asian handicap,
over/under at any line): a set of selections per line, the `line` filter, and a sealed match
withholding its lines, prices and bookmakers from anonymous and free callers."""

from datetime import timedelta

import pytest

from app import create_app
from models import OddsSummary, Pick, Prediction
from store.database import db
from tests import factories, helpers
from tests.helpers import NOW, UNLIMITED, ok
from web.extensions import limiter

KICKOFF = NOW + timedelta(days=1)
DAY = KICKOFF.date()
#: The sealed match's pick: Asian handicap −0.25 home at 1.93 with a bookmaker no other row
#: names, so an answer that shows neither cannot have given them back.
PICK_PRICE, PICK_BOOK = 1.93, "marathonbet"
NAMES = {"ah": ("home", "away"), "ou": ("over", "under"), "1x2": ("home", "draw", "away")}


def predict(match, market, line, first, quality=0.9):
    """A published prediction of ``match`` at ``line`` (the first selection at ``first``)."""
    names = NAMES[market]
    shares = (first, 1 - first) if len(names) == 2 else (first, 0.25, 0.75 - first)
    probabilities = dict(zip(names, shares, strict=True))
    Prediction.create(
        match=match,
        market=market,
        line=line,
        probabilities=probabilities,
        model_probabilities=probabilities,
        market_probabilities=probabilities,
        pool_weight=0.5,
        source="pool",
        model_name="test",
        model_version="0",
        fitted_at=NOW,
        data_quality=quality,
        data_quality_parts={"history": 1.0, "bookmakers": 1.0, "sharpLine": 1.0},
    )


def priced(match, market, line, prices, bookmaker):
    """The odds summary of ``match`` at ``line``: best prices of ``bookmaker``."""
    for selection, price in zip(NAMES[market], prices, strict=True):
        OddsSummary.create(
            match=match,
            market=market,
            line=line,
            selection=selection,
            best_price=price,
            best_bookmaker=bookmaker,
            sharp_price=price,
            sharp_bookmaker=bookmaker,
            bookmakers=3,
        )


def build(app) -> None:
    """Tomorrow: a sealed match (an `A` pick at −0.25, quoted at −0.5 too, and over/under
    2.75) and an open one (−0.25 and 0.0); before: finished matches at −0.25, −0.5 and 0.0;
    a free and a Pro caller."""
    with app.app_context():
        sealed = factories.match("Sealed", "Side", kickoff=KICKOFF, status="scheduled")
        predict(sealed, "ah", -0.25, 0.56)
        predict(sealed, "ah", -0.5, 0.40)
        predict(sealed, "ou", 2.75, 0.47)
        predict(sealed, "1x2", 0.0, 0.45)
        priced(sealed, "ah", -0.25, (PICK_PRICE, 1.97), PICK_BOOK)
        priced(sealed, "ah", -0.5, (2.40, 1.62), PICK_BOOK)
        factories.pick(
            sealed, "ah", "home", odds=PICK_PRICE, bookmaker=PICK_BOOK, line=-0.25, rating="A"
        )
        open_ = factories.match("Open", "Other", kickoff=KICKOFF, status="scheduled")
        predict(open_, "ah", -0.25, 0.52, quality=0.5)
        predict(open_, "ah", 0.0, 0.61)
        priced(open_, "ah", -0.25, (1.90, 2.02), "bet365")
        past = []
        for i, (line, first, goals) in enumerate(
            [
                (-0.25, 0.57, (1, 0)),  # home won
                (-0.25, 0.54, (0, 0)),  # home half lost: away won half the stake
                (-0.25, 0.50, (2, 1)),  # home won
                (-0.25, 0.35, (0, 2)),  # away won
                (-0.5, 0.40, (1, 1)),  # another line: never compared with −0.25
                (0.0, 0.60, (1, 1)),  # a push
            ]
        ):
            played = factories.match(
                f"Past{i}", f"Rival{i}", kickoff=NOW - timedelta(days=10 - i), goals=goals
            )
            predict(played, "ah", line, first)
            past.append(played)
        app.people = {"anonymous": {}}
        for kind in ("free", "pro"):
            user = factories.user(f"{kind}@example.com", plan=kind)
            app.people[kind] = factories.bearer(factories.token(user))
        app.ids = {"sealed": sealed.id, "open": open_.id, "past": [m.id for m in past]}


@pytest.fixture(scope="module")
def world(tmp_path_factory, schema_template):
    """The world of :func:`build`, once for the tests that only read it."""
    folder = tmp_path_factory.mktemp("explorer-lines")
    if schema_template is not None:
        helpers.copy_sqlite(schema_template, folder / "test.db")
    app = create_app(helpers.settings(folder, CLOCK=lambda: NOW, **UNLIMITED))
    limiter.reset()
    if schema_template is None:
        with app.app_context():
            helpers.reset_tables()
    build(app)
    yield app
    if not db.is_closed():
        db.close()


@pytest.fixture
def changing(make_app):
    """The world of :func:`build` for a test that changes it."""
    app = make_app(CLOCK=lambda: NOW, **UNLIMITED)
    build(app)
    return app


def get(app, path, kind="pro"):
    return app.test_client().get(path, headers=app.people[kind])


def slate(app, query, kind="pro"):
    """``(match id, line)`` → item of the slate of ``DAY`` with ``query``."""
    body = ok(get(app, f"/api/explorer/slate?date={DAY}&{query}", kind))
    items = {(item["match"]["id"], item["line"]): item for item in body["items"]}
    assert len(items) == len(body["items"])  # one item per match and line
    return items


def test_the_slate_has_a_set_of_selections_per_line(world):
    sealed, open_ = world.ids["sealed"], world.ids["open"]
    items = slate(world, "market=ah")
    assert list(items) == [(sealed, -0.5), (sealed, -0.25), (open_, -0.25), (open_, 0.0)]
    at = items[sealed, -0.25]
    assert at["prediction"]["line"] == -0.25 and at["prediction"]["market"] == "ah"
    home, away = at["selections"]
    assert (home["selection"], home["probability"], home["bestPrice"]) == ("home", 0.56, 1.93)
    assert home["bookmaker"] == PICK_BOOK
    assert home["edge"] == pytest.approx(0.56 * 1.93 - 1, abs=1e-6)
    assert away["edge"] == pytest.approx(0.44 * 1.97 - 1, abs=1e-6)
    assert (at["pick"]["line"], at["pick"]["odds"], at["pick"]["locked"]) == (-0.25, 1.93, False)
    assert items[sealed, -0.5]["pick"] is None  # the pick stands at its own line only
    # Predicted but not priced: the probabilities, no price or edge.
    zero = items[open_, 0.0]["selections"][0]
    assert (zero["probability"], zero["bestPrice"], zero["edge"]) == (0.61, None, None)
    over = slate(world, "market=ou")
    assert list(over) == [(sealed, 2.75), (open_, None)]  # the open match has no over/under
    assert over[open_, None]["prediction"] is None
    assert over[sealed, 2.75]["selections"][0]["selection"] == "over"


def test_the_line_filter_keeps_the_items_at_that_line(world):
    sealed, open_ = world.ids["sealed"], world.ids["open"]
    assert list(slate(world, "market=ah&line=-0.25")) == [(sealed, -0.25), (open_, -0.25)]
    assert list(slate(world, "market=ah&line=-0.250")) == [(sealed, -0.25), (open_, -0.25)]
    assert list(slate(world, "market=ah&line=0")) == [(open_, 0.0)]
    assert list(slate(world, "market=ah&line=3")) == []
    assert list(slate(world, "market=ou&line=2.75")) == [(sealed, 2.75)]
    assert slate(world, "market=1x2&line=0") == {}  # a market without a line has none
    assert list(slate(world, "market=ah&line=-0.25&minDataQuality=0.8")) == [(sealed, -0.25)]
    response = get(world, f"/api/explorer/slate?date={DAY}&market=ah&line=0.3")
    assert response.status_code == 422 and list(response.get_json()["errors"]) == ["line"]


@pytest.mark.parametrize("kind", ["anonymous", "free", "pro"])
def test_a_sealed_match_withholds_its_lines_on_the_slate(world, kind):
    """Anonymous and free callers see the sealed match once per market with lines, its line
    null, whatever line they ask for: no line, price, probability, edge or bookmaker, and the
    pick locked. Pro callers see every line."""
    sealed, open_ = world.ids["sealed"], world.ids["open"]
    locked = kind != "pro"
    answers = {}
    for query in ("market=ah", "market=ah&line=-0.25", "market=ah&line=-0.5", "market=ah&line=2"):
        response = get(world, f"/api/explorer/slate?date={DAY}&{query}", kind)
        items = slate(world, query, kind)
        mine = {key: item for key, item in items.items() if key[0] == sealed}
        if not locked:
            assert PICK_BOOK in response.get_data(as_text=True) or query.endswith("2")
            continue
        text = response.get_data(as_text=True)
        assert PICK_BOOK not in text and str(PICK_PRICE) not in text
        (item,) = mine.values()
        assert item["line"] is None and item["prediction"]["line"] is None
        assert item["prediction"]["probabilities"] is None
        assert item["prediction"]["marketProbabilities"] is None
        for row in item["selections"]:
            assert [row[name] for name in ("probability", "bestPrice", "bookmaker", "edge")] == [
                None
            ] * 4
        pick = item["pick"]
        assert pick["locked"] and pick["rating"] == "A"
        assert [pick[name] for name in ("line", "selection", "odds", "bookmaker")] == [None] * 4
        answers[query] = item
        # The open match is not sealed: its lines show as asked.
        assert all(key[1] is not None for key in items if key[0] == open_)
    if locked:
        # What a sealed match shows does not depend on the line asked for.
        assert len({repr(item) for item in answers.values()}) == 1
    else:
        assert set(slate(world, "market=ah", kind)) >= {(sealed, -0.5), (sealed, -0.25)}


def comparable(app, query, kind="pro"):
    return ok(get(app, f"/api/explorer/comparable?{query}", kind))


def test_comparable_matches_at_the_main_line_or_the_line_asked(world):
    sealed, past = world.ids["sealed"], world.ids["past"]
    body = comparable(world, f"matchId={sealed}&market=ah&limit=10")
    # The main line is the forecast nearest even odds: −0.25 (0.56) before −0.5 (0.40).
    assert (body["market"], body["line"], body["locked"]) == ("ah", -0.25, False)
    assert body["prediction"]["line"] == -0.25
    ids = [item["match"]["id"] for item in body["items"]]
    # Nearest 0.56 first: 0.57, 0.54, 0.50, 0.35; the −0.5 and 0.0 matches are another line.
    assert ids == [past[0], past[1], past[2], past[3]]
    assert [item["outcome"] for item in body["items"]] == ["home", "away", "home", "away"]
    assert body["items"][0]["distance"] == pytest.approx(0.01 * 2**0.5, abs=1e-6)
    # Stakes decided: 1 (home), ½ (the home side half lost at 0-0), 1 (home), 1 (away).
    rates = {row["selection"]: row for row in body["summary"]["selections"]}
    assert rates["home"]["observedRate"] == pytest.approx(2 / 3.5)
    assert rates["away"]["observedRate"] == pytest.approx(1.5 / 3.5)
    assert rates["home"]["meanPredicted"] == pytest.approx((0.57 + 0.54 + 0.50 + 0.35) / 4)
    asked = comparable(world, f"matchId={sealed}&market=ah&line=-0.5")
    assert asked["line"] == -0.5 and [i["match"]["id"] for i in asked["items"]] == [past[4]]
    missing = comparable(world, f"matchId={sealed}&market=ah&line=1")
    assert (missing["line"], missing["prediction"], missing["items"]) == (1.0, None, [])
    assert comparable(world, f"matchId={sealed}&market=1x2&line=0.5")["prediction"] is None


def test_a_push_has_no_winning_selection(world):
    body = comparable(world, f"matchId={world.ids['open']}&market=ah&line=0")
    (item,) = body["items"]
    assert (item["match"]["id"], item["outcome"]) == (world.ids["past"][5], None)
    assert [row["observedRate"] for row in body["summary"]["selections"]] == [None, None]


@pytest.mark.parametrize("kind", ["anonymous", "free", "pro"])
@pytest.mark.parametrize("line", ["", "&line=-0.25", "&line=-0.5"])
def test_a_sealed_match_lists_no_comparable_matches_nor_its_line(world, kind, line):
    body = comparable(world, f"matchId={world.ids['sealed']}&market=ah{line}", kind)
    if kind == "pro":
        assert body["items"] and body["line"] is not None
        return
    assert (body["locked"], body["line"], body["items"]) == (True, None, [])
    assert body["prediction"]["probabilities"] is None and body["prediction"]["line"] is None
    assert [row["observedRate"] for row in body["summary"]["selections"]] == [None, None]


@pytest.mark.parametrize("kind", ["anonymous", "free"])
def test_nothing_a_sealed_match_hides_moves_the_explorer(changing, kind):
    """Non-interference: the explorer's answers about the sealed market (the pick's, "ah") read
    the same (body, size and ETag) as anonymous and free callers see them when its pick moves to
    another line, side, price and bookmaker and its lines, probabilities and prices change; a
    Pro caller's change. (The match's other markets keep their prices and lines: the seal is
    market by market: the over/under lines show.)"""
    world = changing
    sealed = world.ids["sealed"]
    lines = ("", "&line=-0.25", "&line=-0.75")
    paths = [f"/api/explorer/slate?date={DAY}&market=ah{line}" for line in lines] + [
        f"/api/explorer/comparable?matchId={sealed}&market=ah{line}" for line in lines
    ]

    def read(who):
        found = {}
        for path in paths:
            response = get(world, path, who)
            found[path] = (response.get_json(), response.headers["ETag"], len(response.data))
        return found

    before = {who: read(who) for who in (kind, "pro")}
    with world.app_context():
        Pick.update(
            line=-0.75, selection="away", odds=2.21, bookmaker="another", probability=0.4
        ).where(Pick.match == sealed).execute()
        Prediction.delete().where(
            (Prediction.match == sealed) & (Prediction.line == -0.5)
        ).execute()
        Prediction.update(probabilities={"home": 0.3, "away": 0.7}).where(
            (Prediction.match == sealed) & (Prediction.market == "ah")
        ).execute()
        predict(sealed, "ah", -0.75, 0.61)
        predict(sealed, "ou", 3.0, 0.41)
        OddsSummary.update(best_price=OddsSummary.best_price + 0.3, best_bookmaker="another").where(
            OddsSummary.match == sealed
        ).execute()
        priced(sealed, "ah", -0.75, (2.21, 1.71), "another")
    after = {who: read(who) for who in (kind, "pro")}
    assert [path for path in paths if before[kind][path] != after[kind][path]] == []
    assert [path for path in paths if before["pro"][path] != after["pro"][path]]
    # The match's over/under lines, a market the pick does not seal, show as they are.
    assert {line for match, line in slate(world, "market=ou", kind) if match == sealed} == {
        2.75,
        3.0,
    }
