"""Kick-offs from two sources that disagree, synced from the two real local source servers on a
frozen clock: the earliest kick-off governs the pick cut-off and the live rule, the latest the
unlock (``services.feeds.kickoffs``). The probe of issue 37: The Odds API gave a kick-off two
and a half hours late (an in-play pick, counted live), or one in the past (a locked match
opened to anonymous callers).
"""

import io
from datetime import UTC, datetime, timedelta

import pytest

from models import Match, Pick, Prediction
from services.feeds import kickoffs
from services.feeds.formats import footballdata
from services.operations import health
from tests import factories, sync_world
from tests.data import needs_football_data
from tests.source_servers import OddsApiServer
from tests.syncing import KEY, Waits, odds_events, run_sync, serve, sync_app
from tests.verifier import client_fetcher, load_verifier

pytestmark = needs_football_data

#: The match whose kick-off The Odds API gives late, and the one it prices generously on
#: Friday (a pick rated A, locked for anonymous callers until kick-off), by home team.
LATE, LOCKED = "Bournemouth", "Newcastle"


class World:
    """football-data and The Odds API serving Friday's fixtures, the app synced from both on a
    frozen clock."""

    def __init__(self, make_app, football_data, odds):
        (self.friday, self.files), _, (self.monday, self.results) = sync_world.week()
        self.football_data, self.odds = football_data, odds
        self.events = {event["home_team"]: event for event in odds_events(self.files)}
        self.kickoffs = {
            home_team: datetime.fromisoformat(event["commence_time"][:-1]).replace(tzinfo=UTC)
            for home_team, event in self.events.items()
        }
        self.clock = factories.Clock(self.friday)
        self.app = sync_app(make_app, football_data, odds, CLOCK=self.clock)
        self.waits = Waits()

    def kickoff(self, home_team) -> datetime:
        """The kick-off football-data gives the match of ``home_team`` (as The Odds API did on
        Friday)."""
        return self.kickoffs[home_team]

    def match(self, home_team) -> Match:
        """The stored match of ``home_team`` (on football-data's day)."""
        event = self.events[home_team]
        slug = Match.slug_for(event["home_team"], event["away_team"], self.kickoff(home_team))
        return Match.get(Match.slug == slug)

    def move(self, home_team, kickoff) -> None:
        """The Odds API gives the match of ``home_team`` this kick-off from now on."""
        self.events[home_team]["commence_time"] = f"{kickoff:%Y-%m-%dT%H:%M:%SZ}"

    def price(self, home_team, price) -> None:
        """The Odds API's bookmakers but the sharp one quote each 1x2 outcome of the match of
        ``home_team`` at ``price``: a generous line, within the sane range."""
        for book in self.events[home_team]["bookmakers"]:
            if book["key"] == "pinnacle":
                continue
            for market in book["markets"]:
                if market["key"] == "h2h":
                    for outcome in market["outcomes"]:
                        outcome["price"] = price

    def finish(self, home_team, kickoff) -> None:
        """The Odds API's scores give the match of ``home_team``, kicked off at ``kickoff``,
        its real result (football-data's season file's)."""
        event = self.events[home_team]
        (row,) = [
            row
            for row in sync_world.rows()[1]
            if row["HomeTeam"] == home_team
            and footballdata.parse_date(row["Date"]) == self.kickoff(home_team).date()
        ]
        self.odds.scores["soccer_epl"] = [
            {
                "id": event["id"],
                "sport_key": "soccer_epl",
                "commence_time": f"{kickoff:%Y-%m-%dT%H:%M:%SZ}",
                "completed": True,
                "home_team": event["home_team"],
                "away_team": event["away_team"],
                "scores": [
                    {"name": event["home_team"], "score": row["FTHG"]},
                    {"name": event["away_team"], "score": row["FTAG"]},
                ],
            }
        ]

    def sync(self, now, files=None) -> dict:
        """One sync of both sources at ``now`` (football-data serving ``files`` from then)."""
        self.clock.now = now
        if files is not None:
            serve(self.football_data, files, now)
        self.odds.events["soccer_epl"] = list(self.events.values())
        _, result = run_sync(self.app, now, self.waits)
        odds = next(report for report in result["sources"] if report["source"] == "the-odds-api")
        assert odds["calls"] >= 1 and not odds["errors"], odds
        return result

    def anonymous(self, home_team) -> tuple[dict, str]:
        """What an anonymous caller reads of the match of ``home_team``: its API answer, and
        its prediction page."""
        match = self.match(home_team)
        client = self.app.test_client()
        answer = client.get(f"/api/matches/{match.id}")
        assert answer.status_code == 200
        page = client.get(f"/api/v1/seo/predictions/{match.slug}", headers={"Accept": "text/html"})
        assert page.status_code == 200
        return answer.get_json(), page.get_data(as_text=True)


@pytest.fixture
def world(make_app, football_data):
    with OddsApiServer(credits=2000, key=KEY) as odds:
        yield World(make_app, football_data, odds)


LOCKED_PAGE = "This pick is sealed until kick-off"


def _locked(world, home_team) -> bool:
    """Whether the match of ``home_team`` is locked for anonymous callers, in its answer and on
    its prediction page alike (its pick rated A locked, what to back withheld)."""
    answer, page = world.anonymous(home_team)
    (pick,) = [pick for pick in answer["picks"] if pick["rating"] == "A"]
    assert pick["locked"] == (pick["selection"] is None) == (LOCKED_PAGE in page)
    return pick["locked"]


def test_a_late_kickoff_from_one_source_makes_no_in_play_pick_nor_a_live_one(world):
    """The Odds API says Bournemouth kick off two and a half hours after football-data does. A
    sync after the real kick-off, with new generous prices, predicts nothing of the match and
    makes no pick of it; The Odds API moving the kick-off later still changes nothing; the
    results settle the record, every live pick made before its match's earliest kick-off,
    and the verifier agrees."""
    real = world.kickoff(LATE)
    late = real + timedelta(hours=2, minutes=30)
    world.move(LATE, late)
    with world.app.app_context():
        world.sync(world.friday, world.files)
        match = world.match(LATE)
        assert (match.kickoff_at, match.unlock_at) == (real, late)

        in_play = real + timedelta(hours=1)
        world.price(LATE, 3.0)  # a price seen in play, after the real kick-off
        world.sync(in_play)
        assert (
            not Pick.select().where((Pick.match == match.id) & (Pick.created_at >= real)).exists()
        )
        assert (
            not Prediction.select()
            .where((Prediction.match == match.id) & (Prediction.made_at >= real))
            .exists()
        )
        (disagreement,) = kickoffs.disagreements([match.id])
        assert disagreement["kickoff_at"] == real and disagreement["unlock_at"] == late
        assert {source: kickoff for source, (kickoff, _) in disagreement["reports"].items()} == {
            "football-data": real,
            "the-odds-api": late,
        }
        checked = health.report(world.app.config, lambda: ("ok", "memory"), 1.0, in_play)
        for source in ("football-data", "the-odds-api"):
            entry = next(s for s in checked["services"] if s["name"] == source)
            assert entry["status"] == "degraded" and "1 kick-off disputed" in entry["detail"]

        # Later still: the pick cut-off and the live rule keep the earliest.
        world.move(LATE, real + timedelta(hours=4))
        world.price(LATE, 2.9)
        world.sync(in_play + timedelta(minutes=30))
        assert Match.get_by_id(match.id).kickoff_at == real
        assert (
            not Pick.select().where((Pick.match == match.id) & (Pick.created_at >= real)).exists()
        )

        # The Odds API's scores finish the match at its own kick-off: it settles, its picks
        # judged against the earliest kick-off.
        world.finish(LATE, real + timedelta(hours=4))
        world.sync(real + timedelta(hours=6))
        assert Match.get_by_id(match.id).status == "finished"
        world.sync(world.monday, world.results)
        settled = Pick.select(Pick, Match).join(Match).where(Pick.status != "pending")
        assert settled.exists()
        counted = Pick.is_live & Pick.not_live_reason.is_null()
        for pick in settled.where(counted):
            assert pick.created_at < pick.match.kickoff_at
        # No pick of the match made in play counts live, whatever The Odds API says.
        late_picks = Pick.select().where((Pick.match == match.id) & (Pick.created_at >= real))
        assert not late_picks.where(counted).exists()
    verifier = load_verifier()
    report, _, _ = verifier.verify(
        client_fetcher(world.app.test_client()), None, [], out=io.StringIO()
    )
    assert not report.failed, report.verdicts


def _disagree_in_the_past(world) -> Match:
    """Friday's sync (a pick rated A on Newcastle, locked), then on Saturday morning The Odds
    API says Newcastle kicked off at 8:00 while football-data still says 12:30."""
    world.price(LOCKED, 3.0)
    world.sync(world.friday, world.files)
    match = world.match(LOCKED)
    assert Pick.select().where((Pick.match == match.id) & (Pick.rating == "A")).exists()
    real = world.kickoff(LOCKED)
    world.move(LOCKED, real.replace(hour=8, minute=0))
    world.sync(real.replace(hour=9, minute=0))
    return match


def test_a_kickoff_in_the_past_from_one_source_never_unlocks_a_sealed_match(world):
    """While football-data says Newcastle has not kicked off, The Odds API's kick-off in the
    past opens nothing: the API answer and the prediction page stay locked for anonymous
    callers, until football-data's kick-off."""
    with world.app.app_context():
        match = _disagree_in_the_past(world)
        real = world.kickoff(LOCKED)
        stored = Match.get_by_id(match.id)
        assert (stored.kickoff_at, stored.unlock_at) == (real.replace(hour=8, minute=0), real)
        assert _locked(world, LOCKED)
        world.clock.now = real - timedelta(minutes=1)
        assert _locked(world, LOCKED)
        world.clock.now = real
        assert not _locked(world, LOCKED)


def test_when_the_sources_agree_again_the_match_behaves_as_before(world):
    """The Odds API gives football-data's kick-off again: no disagreement is left, the match
    is locked until that kick-off and public from it, as a match both sources always agreed
    on."""
    with world.app.app_context():
        match = _disagree_in_the_past(world)
        real = world.kickoff(LOCKED)
        world.move(LOCKED, real)
        world.sync(real.replace(hour=10, minute=0))
        stored = Match.get_by_id(match.id)
        assert (stored.kickoff_at, stored.unlock_at, stored.public_since) == (real, None, None)
        assert kickoffs.disagreements([match.id]) == []
        assert _locked(world, LOCKED)
        world.clock.now = real + timedelta(minutes=1)
        assert not _locked(world, LOCKED)
