"""Hardening, fourth round (issue 42): settled results kept by ``data import``, one match per
meeting, team names in one spelling, the lock against an observer with a memory."""

import itertools
import threading
import time
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from config import ConfigError, check_sources
from models import Match, Team
from services.feeds import imports, names
from services.feeds.sources import http
from tests import helpers

HEADER = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"


def _file(tmp_path, *rows, name="rows.csv"):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


# Settled results the same on every path: a file is refused what a sync is refused.


def test_an_import_never_rewrites_a_finished_result(ctx, tmp_path):
    """1-2 stored and finished; a file saying 3-0 for the same match is refused with its reason,
    and the stored result stays (the sync refuses the same, as a contradiction)."""
    played = "E0,17/08/2024,15:00,Arsenal,Wolves,1,2,A,1.3,5.5,10"
    imports.import_file(_file(tmp_path, played, name="first.csv"))
    rewritten = played.replace(",1,2,A,", ",3,0,H,")
    summary = imports.import_file(_file(tmp_path, rewritten, name="second.csv"))
    assert (summary.matches_updated, summary.rows_rejected) == (0, 1)
    assert "the file says 3-0, the stored result is 1-2" in summary.rejected[0]["reason"]
    ((_, _, status, score, _),) = helpers.meetings("Arsenal", "Wolves")
    assert (status, score) == ("finished", "1-2")


def test_an_import_still_adds_a_result_to_a_fixture_and_repeats_the_same(ctx, tmp_path):
    """What stays allowed: a fixture's result, and the same result again (nothing changes)."""
    fixture = "E0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10"
    imports.import_file(_file(tmp_path, fixture, name="fixture.csv"))
    played = _file(tmp_path, "E0,17/08/2024,15:00,Arsenal,Wolves,1,2,A,1.3,5.5,10")
    assert imports.import_file(played).matches_updated == 1
    again = imports.import_file(played)
    assert (again.matches_updated, again.rows_rejected) == (0, 0)


# One match per meeting.


def test_a_fixture_row_repeated_two_days_later_is_no_second_match(ctx, tmp_path):
    """The same fixture on the 17th and, again, on the 19th (no result between) is one
    meeting: the repeat is refused with its reason, never stored as a phantom match a pick
    could be published on."""
    path = _file(
        tmp_path,
        "E0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10",
        "E0,19/08/2024,20:00,Arsenal,Wolves,,,,1.3,5.5,10",
    )
    summary = imports.import_file(path)
    assert (summary.matches_new, summary.rows_rejected) == (1, 1)
    assert "a second meeting of the pair within 5 days" in summary.rejected[0]["reason"]
    assert [meeting[1] for meeting in helpers.meetings("Arsenal", "Wolves")] == ["2024-08-17 14:00"]


def test_a_repeated_row_beside_its_stored_fixture_is_refused_a_lone_one_moves_it(ctx, tmp_path):
    """Stored on the 17th: a file holding the 17th and the 19th adds nothing; a file holding the
    19th alone moves the one match there."""
    first = "E0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10"
    later = "E0,19/08/2024,20:00,Arsenal,Wolves,,,,1.3,5.5,10"
    imports.import_file(_file(tmp_path, first, name="fixtures.csv"))
    ((match_id, *_),) = helpers.meetings("Arsenal", "Wolves")
    both = imports.import_file(_file(tmp_path, first, later, name="both.csv"))
    assert (both.matches_new, both.rows_rejected) == (0, 1)
    moved = imports.import_file(_file(tmp_path, later, name="moved.csv"))
    assert (moved.matches_new, moved.matches_updated) == (0, 1)
    assert [meeting[:2] for meeting in helpers.meetings("Arsenal", "Wolves")] == [
        (match_id, "2024-08-19 19:00")
    ]


def test_a_pair_meeting_again_a_week_later_is_still_two_matches(ctx, tmp_path):
    """The rule's edge: a cup-tie replay or a second league meeting more than five days on."""
    path = _file(
        tmp_path,
        "SC0,17/08/2024,15:00,Celtic,Rangers,,,,1.3,5.5,10",
        "SC0,24/08/2024,15:00,Celtic,Rangers,,,,1.3,5.5,10",
    )
    assert imports.import_file(path).matches_new == 2


# Team names in one spelling.

MUNSTER_NFC = unicodedata.normalize("NFC", "Münster")
MUNSTER_NFD = unicodedata.normalize("NFD", "Münster")


def test_nfd_and_nfc_spellings_and_a_variation_selector_are_one_team(ctx, tmp_path):
    """A decomposed "Münster" and "Arsenal" with a variation selector find the teams the
    composed and plain spellings made: no second team, no second match."""
    assert MUNSTER_NFC != MUNSTER_NFD
    imports.import_file(_file(tmp_path, f"D2,17/08/2024,15:00,{MUNSTER_NFC},Arsenal,,,,2,3,4"))
    again = _file(
        tmp_path, f"D2,17/08/2024,15:00,{MUNSTER_NFD},Arsenal\ufe0f,1,0,H,2,3,4", name="b.csv"
    )
    summary = imports.import_file(again)
    assert (summary.matches_new, summary.matches_updated, summary.rows_rejected) == (0, 1, 0)
    assert sorted(team.name for team in Team.select()) == ["Arsenal", MUNSTER_NFC]
    assert Match.select().count() == 1


def test_a_cyrillic_look_alike_name_is_refused_with_its_reason(ctx, tmp_path):
    """ "Аrsenal" with a Cyrillic А is refused, naming the scripts it mixes; the rest loads."""
    look_alike = "\u0410rsenal"
    path = _file(
        tmp_path,
        f"E0,17/08/2024,15:00,{look_alike},Wolves,,,,1.3,5.5,10",
        "E0,17/08/2024,15:00,Chelsea,Fulham,,,,1.3,5.5,10",
    )
    summary = imports.import_file(path)
    assert (summary.matches_new, summary.rows_rejected) == (1, 1)
    assert summary.rejected[0]["line"] == 2
    assert "mixes scripts (Cyrillic, Latin)" in summary.rejected[0]["reason"]
    assert Team.select().where(Team.name == look_alike).count() == 0


@pytest.mark.parametrize(
    "name", ["Atlético Madrid", "Ølstykke", "ЦСКА Москва", "Hawaiʻi FC", "Ποσειδών", "FC 1. Köln"]
)
def test_one_script_names_are_not_refused(name):
    assert names.mixed_scripts(names.normal(name)) is None


# Every upstream fetch has a total deadline.


class _Dripping(BaseHTTPRequestHandler):
    """Answers 200 with a 600-byte body sent a byte every 50 ms (30 s in all): each read of the
    socket gets something well within any read timeout."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "600")
        self.end_headers()
        try:
            for _ in range(600):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the client gave up: the point of the test
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def dripping():
    """A local server whose answers drip (see :class:`_Dripping`); its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Dripping)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, args=(helpers.SHUTDOWN_POLL,), daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_source_that_drips_its_answer_is_cut_at_the_deadline(dripping):
    """A read timeout never fires on a drip; the deadline does, and no retry is made past it.
    The policy's clock moves a second each time it is read, so the deadline of 5 s passes after
    a few reads, whatever the machine's speed."""
    ticks = itertools.count()
    waits = []
    policy = http.Policy(
        timeout=20.0,
        deadline=5.0,
        sleep=waits.append,
        jitter=lambda: 0.0,
        clock=lambda: next(ticks),
    )
    started = time.monotonic()
    with pytest.raises(http.FetchError, match="SOURCE_DEADLINE") as caught:
        http.get(f"{dripping}/E0.csv", policy)
    assert "no time left for another try within 5 s" in str(caught.value)
    assert waits == []  # no retry started past the deadline
    assert time.monotonic() - started < 10  # the drip alone lasts 30 s


def test_the_deadline_is_a_setting_in_the_table(app):
    """SOURCE_DEADLINE reaches the policy, and a deadline that is not positive is refused."""
    assert http.Policy.from_settings(app.config).deadline == app.config["SOURCE_DEADLINE"] == 45
    with pytest.raises(ConfigError, match="SOURCE_DEADLINE must be positive"):
        check_sources({**app.config, "SOURCE_DEADLINE": 0.0})
