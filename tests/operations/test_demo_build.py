"""Building the demo world: the same instant gives the same picks; a rebuild is refused in a
database that holds imported leagues."""

from datetime import UTC, datetime

import pytest

from engine.demo import football
from errors import CommandError
from models import League, Match, Pick
from services.operations import demo_world

NOW = datetime(2026, 11, 24, 20, 30, tzinfo=UTC)
SMALL = football.DemoSettings(past_seasons=1)


def picks_made():
    """Every pick as the API would identify and rate it."""
    columns = (Pick.id, Pick.match, Pick.market, Pick.selection, Pick.rating, Pick.odds)
    return sorted(Pick.select(*columns).tuples())


@pytest.mark.slow
def test_the_same_instant_builds_the_same_picks(make_app):
    """Two builds at one instant make the same picks (a world of one past season and a two-day
    replay, to keep it quick: its size changes nothing of how it is built)."""
    made = []
    for _ in range(2):
        app = make_app()
        with app.app_context():
            built = demo_world.build(NOW, app.config, live_days=2, knobs=SMALL)
            made.append(picks_made())
    assert made[0] == made[1] and len(made[0]) > 100
    assert built["days"] == 3 and built["published"] > 0


@pytest.mark.slow  # reads the demo world (a copy of the run's one build)
def test_the_cli_keeps_a_database_that_holds_the_world(request):
    app = request.getfixturevalue("demo_world")("kept")  # the name the module's import holds
    with app.app_context():
        before = sorted(Match.select(Match.id, Match.slug).tuples())
        assert before
        result = app.test_cli_runner().invoke(args=["data", "demo"])
        assert result.exit_code == 0 and "demo world kept" in result.output
        assert sorted(Match.select(Match.id, Match.slug).tuples()) == before
        with pytest.raises(CommandError):
            demo_world.build(NOW, app.config)


def test_a_rebuild_is_refused_beside_imported_leagues(make_app):
    app = make_app(CLOCK=lambda: NOW)
    with app.app_context():
        League.create(
            code="E0", name="Premier League", country="England", competition_type="top-flight"
        )
        result = app.test_cli_runner().invoke(args=["data", "demo", "--rebuild"])
        assert result.exit_code == 1
        assert "other leagues than the demo's (E0)" in result.output
        assert League.select().count() == 1
