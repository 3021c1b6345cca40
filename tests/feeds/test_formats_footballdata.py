"""Tests of the football-data.co.uk CSV parser, on the shared real files and on edited copies."""

from datetime import UTC, date, datetime, timedelta

import pytest

from enums import MARKET_SELECTIONS
from services.feeds.formats import footballdata
from tests.data import FOOTBALL_DATA


def _files():
    """The shared files, or a skip when the folder is not there."""
    if not FOOTBALL_DATA.is_dir():
        pytest.skip(f"the shared football-data set is not at {FOOTBALL_DATA}")
    return sorted(FOOTBALL_DATA.glob("*.csv"))


def _read(name: str) -> str:
    """One shared file's text, line endings untouched."""
    _files()
    with open(FOOTBALL_DATA / name, encoding="utf-8", newline="") as handle:
        return handle.read()


def _expected_rows(name: str) -> int:
    """Rows SOURCE.md gives for a file: league size per season, Ligue 1's COVID stop."""
    div = name.split("_")[0]
    if name == "F1_1920.csv":
        return 279
    if div == "E1":
        return 552
    if div == "D1" or name == "F1_2324.csv":
        return 306
    return 380


def _odds(match, bookmaker, market, closing=False):
    """{selection: price} of one bookmaker's market in a parsed match."""
    return {
        odd.selection: odd.price
        for odd in match.odds
        if odd.bookmaker == bookmaker and odd.market == market and odd.is_closing == closing
    }


def _lines(match, bookmaker, market, closing=False):
    """The lines of one bookmaker's market's records in a parsed match."""
    return {
        odd.line
        for odd in match.odds
        if odd.bookmaker == bookmaker and odd.market == market and odd.is_closing == closing
    }


def _find(parsed, home, away):
    """The parsed match between two teams."""
    (match,) = [m for m in parsed.matches if m.home_team == home and m.away_team == away]
    return match


@pytest.mark.slow
def test_every_shared_file_parses_completely():
    """(How fast is measured by ``python -m bench.engine``, not here: a timing is no test.)"""
    files = _files()
    texts = {path.name: _read(path.name) for path in files}
    parsed = {name: footballdata.parse(text) for name, text in texts.items()}
    assert len(parsed) == 30
    for name, result in parsed.items():
        assert result.rejected == [], name
        assert result.rows_read == len(result.matches) == _expected_rows(name), name
        div, season = name.removesuffix(".csv").split("_")
        assert {m.league.code for m in result.matches} == {div}
        assert {m.season for m in result.matches} == {f"20{season[:2]}-{season[2:]}"}
        assert all(m.status == "finished" for m in result.matches)
        assert all(odd.price > 1.0 for m in result.matches for odd in m.odds)
    assert sum(len(result.matches) for result in parsed.values()) == 11_051
    # Only the two known bad cells' sets (2 legs each) are dropped in the whole set.
    assert sum(result.prices_skipped for result in parsed.values()) == 4


def test_known_values_of_the_first_row_of_e0_2023_24():
    parsed = footballdata.parse(_read("E0_2324.csv"))
    first = parsed.matches[0]
    assert (first.home_team, first.away_team) == ("Burnley", "Man City")
    assert first.league == footballdata.DIVISIONS["E0"]
    assert first.league.competition_type == "top-flight"
    assert first.season == "2023-24"
    # 20:00 UK summer time is 19:00 UTC.
    assert first.kickoff_at == datetime(2023, 8, 11, 19, 0, tzinfo=UTC)
    assert (first.home_goals, first.away_goals) == (0, 3)
    assert (first.ht_home_goals, first.ht_away_goals) == (0, 2)
    assert (first.shots, first.shots_on_target) == ((6, 17), (1, 8))
    assert first.status == "finished"
    assert first.line == 2
    assert _odds(first, "pinnacle", "1x2") == {"home": 8.58, "draw": 5.51, "away": 1.37}
    assert _odds(first, "pinnacle", "1x2", closing=True) == {
        "home": 9.62,
        "draw": 5.81,
        "away": 1.33,
    }
    assert _odds(first, "pinnacle", "ou25") == {"over": 1.68, "under": 2.29}
    assert _odds(first, "market-average", "1x2") == {"home": 9.02, "draw": 5.35, "away": 1.35}
    assert _odds(first, "bet365", "ou25", closing=True) == {"over": 1.67, "under": 2.2}
    # Burnley at home to Man City: the home side's handicap is +1.5 goals, at both ends.
    assert _odds(first, "pinnacle", "ah") == {"home": 1.86, "away": 2.07}
    assert _odds(first, "pinnacle", "ah", closing=True) == {"home": 1.95, "away": 1.97}
    assert _odds(first, "market-average", "ah", closing=True) == {"home": 1.92, "away": 1.95}
    assert _odds(first, "bet365", "ah") == {"home": 1.86, "away": 2.07}
    assert _lines(first, "pinnacle", "ah") == _lines(first, "pinnacle", "ah", True) == {1.5}
    assert _lines(first, "bet365", "ou25", closing=True) == {2.5}
    assert {odd.line for odd in first.odds if odd.market == "1x2"} == {None}
    # Max (the best of the market, 1x2, O/U and handicap alike) and the like are not loaded.
    assert {odd.bookmaker for odd in first.odds} == {
        "bet365",
        "bwin",
        "interwetten",
        "pinnacle",
        "william-hill",
        "vc-bet",
        "market-average",
    }
    assert {odd.market for odd in first.odds} == {"1x2", "ou25", "ah"}
    # 7 bookmakers' 1x2, 3 bookmakers' O/U and handicap, pre-match and closing.
    assert len(first.odds) == 2 * (7 * 3 + 3 * 2 + 3 * 2)


def test_the_betbrain_handicap_of_e0_2017_18():
    first = footballdata.parse(_read("E0_1718.csv")).matches[0]
    assert (first.home_team, first.away_team) == ("Arsenal", "Leicester")
    # BbAHh -1, BbAvAHH 1.85, BbAvAHA 2.02; BbMxAHH/BbMxAHA (the best) are not read, and
    # the file has no closing handicap.
    ah = [odd for odd in first.odds if odd.market == "ah"]
    assert {(o.bookmaker, o.selection, o.price, o.line, o.is_closing) for o in ah} == {
        ("market-average", "home", 1.85, -1.0, False),
        ("market-average", "away", 2.02, -1.0, False),
    }


def test_both_date_formats_and_the_default_kickoff():
    short = footballdata.parse(_read("D1_1718.csv")).matches[0]
    long = footballdata.parse(_read("E0_1718.csv")).matches[0]
    # No Time column before 2019/20: 15:00 UK, which is 14:00 UTC in August.
    assert short.kickoff_at == datetime(2017, 8, 18, 14, 0, tzinfo=UTC)
    assert long.kickoff_at == datetime(2017, 8, 11, 14, 0, tzinfo=UTC)
    assert short.season == long.season == "2017-18"
    # Before 2019/20 the market average is Betbrain's BbAv and only Pinnacle has closing odds.
    assert _odds(long, "market-average", "1x2") == {"home": 1.51, "draw": 4.43, "away": 6.44}
    assert _odds(long, "market-average", "ou25") == {"over": 1.61, "under": 2.32}
    assert _odds(long, "ladbrokes", "1x2") == {"home": 1.44, "draw": 4.4, "away": 6.5}
    assert {odd.bookmaker for odd in long.odds if odd.is_closing} == {"pinnacle"}


def test_winter_kickoffs_are_gmt():
    parsed = footballdata.parse(_read("E0_2122.csv"))
    match = _find(parsed, "Newcastle", "Man City")
    assert match.kickoff_at == datetime(2021, 12, 19, 14, 0, tzinfo=UTC)


def test_the_known_bad_odds_cells_drop_their_sets_only():
    e0 = footballdata.parse(_read("E0_2122.csv"))
    newcastle = _find(e0, "Newcastle", "Man City")
    assert _odds(newcastle, "bet365", "ou25", closing=True) == {}
    # Bet365's pre-match O/U is simply blank on this row (not counted as skipped).
    assert _odds(newcastle, "bet365", "ou25") == {}
    assert len(_odds(newcastle, "pinnacle", "ou25")) == 2
    assert len(_odds(newcastle, "pinnacle", "ou25", closing=True)) == 2
    assert len(_odds(newcastle, "bet365", "1x2", closing=True)) == 3
    assert e0.prices_skipped == 2 and e0.rejected == []

    d1 = footballdata.parse(_read("D1_1920.csv"))
    koln = _find(d1, "FC Koln", "RB Leipzig")
    assert koln.kickoff_at == datetime(2020, 6, 1, 18, 30, tzinfo=UTC)
    assert _odds(koln, "market-average", "ou25", closing=True) == {}
    assert len(_odds(koln, "market-average", "ou25")) == 2
    assert d1.prices_skipped == 2
    # The COVID season ran into summer 2020 and stays one season.
    assert {m.season for m in d1.matches} == {"2019-20"}


HEADER = (
    "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,HTHG,HTAG,HTR,Referee,HS,AS,"
    "B365H,B365D,B365A,BFDH,BFDD,BFDA,BMGMH,BMGMD,BMGMA,BVH,BVD,BVA,CLH,CLD,CLA,1XBH,1XBD,1XBA,"
    "PSH,PSD,PSA,MaxH,MaxD,MaxA,AvgH,AvgD,AvgA,BFEH,BFED,BFEA,"
    "B365>2.5,B365<2.5,P>2.5,P<2.5,BFE>2.5,BFE<2.5,AHh,PAHH,PAHA,"
    "B365CH,B365CD,B365CA,BFDCH,BFDCD,BFDCA,PSCH,PSCD,PSCA,AvgCH,AvgCD,AvgCA,"
    "PC>2.5,PC<2.5,AvgC>2.5,AvgC<2.5,NewThing"
)


def _row(**cells):
    """A 2024/25-style row: every column blank unless given (names as in HEADER)."""
    columns = HEADER.split(",")
    unknown = set(cells) - set(columns)
    assert not unknown, unknown
    return ",".join(str(cells.get(column, "")) for column in columns)


def _sample(rows):
    """A BOM-prefixed, LF file of HEADER and rows."""
    return "\ufeff" + HEADER + "\n" + "\n".join(rows) + "\n"


BASE = {
    "Div": "E0",
    "Date": "16/08/2024",
    "Time": "20:00",
    "HomeTeam": "Man United",
    "AwayTeam": "Fulham",
    "FTHG": 1,
    "FTAG": 0,
    "FTR": "H",
    "HTHG": 0,
    "HTAG": 0,
    "HTR": "D",
}


def test_a_2024_25_style_file_with_bom_new_columns_and_empty_rows():
    odds = {
        "B365H": 1.6,
        "B365D": 4.2,
        "B365A": 5.25,
        "BFDH": 1.62,
        "BFDD": 4.1,
        "BFDA": 5.0,
        "BMGMH": 1.57,
        "BMGMD": 4.2,
        "BMGMA": 5.5,
        "BVH": 1.6,
        "BVD": 4.0,
        "BVA": 5.25,
        "CLH": 1.6,
        "CLD": 4.2,
        "CLA": 5.0,
        "1XBH": 1.64,
        "1XBD": 4.3,
        "1XBA": 5.4,
        "PSH": 1.63,
        "PSD": 4.26,
        "PSA": 5.46,
        "MaxH": 1.7,
        "MaxD": 4.5,
        "MaxA": 5.9,
        "AvgH": 1.6,
        "AvgD": 4.2,
        "AvgA": 5.2,
        "BFEH": 1.66,
        "BFED": 4.5,
        "BFEA": 6.0,
        "B365>2.5": 1.8,
        "B365<2.5": 2.0,
        "P>2.5": 1.84,
        "P<2.5": 2.07,
        "BFE>2.5": 1.9,
        "BFE<2.5": 2.1,
        "AHh": -0.75,
        "PAHH": 1.9,
        "PAHA": 2.0,
        "B365CH": 1.6,
        "B365CD": 4.33,
        "B365CA": 5.25,
        "BFDCH": 1.6,
        "BFDCD": 4.0,
        "BFDCA": 5.0,
        "PSCH": 1.59,
        "PSCD": 4.5,
        "PSCA": 5.7,
        "AvgCH": 1.58,
        "AvgCD": 4.3,
        "AvgCA": 5.3,
        "PC>2.5": 1.88,
        "PC<2.5": 2.02,
        "AvgC>2.5": 1.85,
        "AvgC<2.5": 1.98,
        "NewThing": "whatever",
    }
    empty = "," * (len(HEADER.split(",")) - 1)
    second = {**BASE, "Date": "17/08/2024", "Time": "12:30", "HomeTeam": "Ipswich"}
    second.update({"AwayTeam": "Liverpool", "FTHG": 0, "FTAG": 2, "FTR": "A"})
    text = _sample([_row(**BASE, **odds), empty, _row(**second), empty, empty])
    parsed = footballdata.parse(text)
    assert parsed.rows_read == 2 and parsed.rejected == [] and parsed.prices_skipped == 0
    first, after_gap = parsed.matches
    assert first.season == "2024-25"
    assert first.kickoff_at == datetime(2024, 8, 16, 19, 0, tzinfo=UTC)
    assert (after_gap.line, after_gap.odds) == (4, [])
    books = {(o.bookmaker, o.market, o.is_closing) for o in first.odds}
    assert books == {
        ("bet365", "1x2", False),
        ("betfred", "1x2", False),
        ("betmgm", "1x2", False),
        ("betvictor", "1x2", False),
        ("coral", "1x2", False),
        ("1xbet", "1x2", False),
        ("pinnacle", "1x2", False),
        ("market-average", "1x2", False),
        ("bet365", "ou25", False),
        ("pinnacle", "ou25", False),
        ("pinnacle", "ah", False),
        ("bet365", "1x2", True),
        ("betfred", "1x2", True),
        ("pinnacle", "1x2", True),
        ("market-average", "1x2", True),
        ("pinnacle", "ou25", True),
        ("market-average", "ou25", True),
    }
    assert _odds(first, "betfred", "1x2") == {"home": 1.62, "draw": 4.1, "away": 5.0}
    assert _odds(first, "1xbet", "1x2") == {"home": 1.64, "draw": 4.3, "away": 5.4}
    assert _odds(first, "pinnacle", "ou25", closing=True) == {"over": 1.88, "under": 2.02}
    assert _odds(first, "pinnacle", "ah") == {"home": 1.9, "away": 2.0}
    assert _lines(first, "pinnacle", "ah") == {-0.75}
    for odd in first.odds:
        assert odd.selection in MARKET_SELECTIONS[odd.market]


def test_crlf_and_lf_give_the_same_records():
    lf = footballdata.parse(_sample([_row(**BASE, PSH=1.6, PSD=4.2, PSA=5.5)]))
    crlf = footballdata.parse(
        _sample([_row(**BASE, PSH=1.6, PSD=4.2, PSA=5.5)]).replace("\n", "\r\n")
    )
    assert lf == crlf
    assert len(lf.matches) == 1 and len(lf.matches[0].odds) == 3


@pytest.mark.parametrize(
    ("cells", "skipped"),
    [
        ({"PSH": 1.6, "PSD": 4.2, "PSA": 0}, 3),
        ({"PSH": 1.6, "PSD": 1.0, "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "n/a", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "", "PSA": 5.5}, 2),
        ({"PSH": 1.6, "PSD": "inf", "PSA": 5.5}, 3),
        ({"PSH": " 1.6", "PSD": "4.2 ", "PSA": 5.5}, 0),
        # What float() reads but is no price as written, and prices no one quotes.
        ({"PSH": 1.6, "PSD": "nan", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "1e400", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "1e300", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "4.2e0", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "-4.2", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "1_5", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "\u0664.\u0662", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "1000.01", "PSA": 5.5}, 3),
        ({"PSH": 1.6, "PSD": "1000", "PSA": 5.5}, 0),
    ],
)
def test_a_bad_price_drops_its_whole_set_but_not_the_row(cells, skipped):
    parsed = footballdata.parse(_sample([_row(**BASE, **cells, **{"P>2.5": 1.9, "P<2.5": 1.95})]))
    (match,) = parsed.matches
    assert parsed.prices_skipped == skipped
    assert _odds(match, "pinnacle", "ou25") == {"over": 1.9, "under": 1.95}
    assert len(_odds(match, "pinnacle", "1x2")) == (0 if skipped else 3)


@pytest.mark.parametrize(
    ("line", "taken"),
    [
        ("-0.75", -0.75),
        ("0", 0.0),
        ("-0", 0.0),
        ("+1.25", 1.25),
        ("10", 10.0),
        ("-10", -10.0),
        ("2.50", 2.5),
        # Not a whole, half or quarter goal, beyond ±10, or no number as written.
        ("0.3", None),
        ("-0.1", None),
        ("10.25", None),
        ("-11", None),
        ("", None),
        ("1e0", None),
        ("nan", None),
        ("½", None),
        ("\u0661", None),
    ],
)
def test_a_bad_handicap_line_drops_its_set_only(line, taken):
    cells = {"AHh": line, "PAHH": 1.9, "PAHA": 2.0, "P>2.5": 1.9, "P<2.5": 1.95}
    parsed = footballdata.parse(_sample([_row(**BASE, **cells)]))
    (match,) = parsed.matches
    assert parsed.prices_skipped == (0 if taken is not None else 2)
    assert _odds(match, "pinnacle", "ou25") == {"over": 1.9, "under": 1.95}
    if taken is None:
        assert _odds(match, "pinnacle", "ah") == {}
    else:
        assert _odds(match, "pinnacle", "ah") == {"home": 1.9, "away": 2.0}
        (got,) = _lines(match, "pinnacle", "ah")
        assert str(got) == str(taken)  # "-0" is the line 0.0, not -0.0


def test_a_bad_handicap_price_drops_the_set_and_a_blank_one_counts_nothing():
    cells = {"AHh": "-0.25", "PAHH": 1.9, "PAHA": "0.9"}
    parsed = footballdata.parse(_sample([_row(**BASE, **cells)]))
    assert parsed.prices_skipped == 2
    assert _odds(parsed.matches[0], "pinnacle", "ah") == {}
    # A line with no prices beside it is no set: nothing is dropped.
    parsed = footballdata.parse(_sample([_row(**BASE, AHh="-0.25")]))
    assert parsed.prices_skipped == 0 and parsed.matches[0].odds == []


def test_a_handicap_set_without_its_line_column_is_not_read():
    header = "Div,Date,HomeTeam,AwayTeam,PAHH,PAHA,AHCh,PCAHH,PCAHA"
    text = f"{header}\nE0,16/08/2024,Man United,Fulham,1.9,2.0,0.5,1.8,2.1\n"
    (match,) = footballdata.parse(text).matches
    assert {(o.is_closing, o.line) for o in match.odds} == {(True, 0.5)}


def test_fixture_rows_without_results_are_scheduled():
    fixture = {**BASE, "FTHG": "", "FTAG": "", "FTR": "", "HTHG": "", "HTAG": "", "HTR": ""}
    (match,) = footballdata.parse(_sample([_row(**fixture)])).matches
    assert match.status == "scheduled"
    assert (match.home_goals, match.away_goals, match.ht_home_goals) == (None, None, None)

    minimal = (
        "Div,Date,Time,HomeTeam,AwayTeam,B365H,B365D,B365A\n"
        "SC0,03/08/2024,12:30,Celtic,Kilmarnock,1.1,10,26\n"
    )
    parsed = footballdata.parse(minimal)
    (match,) = parsed.matches
    assert match.status == "scheduled" and match.league.country == "Scotland"
    assert len(match.odds) == 3


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        ({"Date": "32/08/2024"}, "Date"),
        ({"Date": "2024-08-16"}, "Date"),
        ({"Date": ""}, "Date is missing"),
        ({"Time": "8pm"}, "Time"),
        ({"HomeTeam": ""}, "HomeTeam is missing"),
        ({"AwayTeam": ""}, "AwayTeam is missing"),
        ({"Div": ""}, "Div is missing"),
        ({"Div": "XX9"}, "XX9"),
        ({"FTHG": "one"}, "FTHG"),
        ({"FTAG": -1}, "FTAG"),
        ({"FTHG": 1.5}, "FTHG"),
        ({"FTAG": "", "FTR": ""}, "one side"),
        ({"FTR": "A"}, "FTR"),
        ({"FTR": "X"}, "FTR"),
        ({"AwayTeam": "Man United"}, "both"),
        ({"HTHG": 2, "HTR": "H"}, "half-time"),
        # Goals are ASCII digits, 0 to 99 (int() and float() read far more).
        ({"FTHG": "1e19"}, "FTHG '1e19' is not a number of goals"),
        ({"FTHG": "1e10"}, "FTHG '1e10' is not a number of goals"),
        ({"FTHG": "10000000000"}, "FTHG '10000000000' is more goals than 99"),
        ({"FTHG": "100"}, "FTHG '100' is more goals than 99"),
        ({"FTHG": "1_0"}, "FTHG '1_0' is not a number of goals"),
        ({"FTHG": "\u0661"}, "is not a number of goals"),
        ({"FTHG": "2.0e0"}, "FTHG '2.0e0' is not a number of goals"),
        ({"FTHG": "+1"}, "FTHG '+1' is not a number of goals"),
        ({"FTHG": "nan"}, "FTHG 'nan' is not a number of goals"),
        ({"HTHG": "1e3", "HTR": "H"}, "HTHG '1e3' is not a number of goals"),
        ({"HTAG": "100", "HTR": "A"}, "HTAG '100' is more goals than 99"),
        # Names hold no control character or lone surrogate (PostgreSQL's text takes no NUL).
        ({"HomeTeam": "Nul\x00Team"}, "HomeTeam 'Nul\\x00Team' holds U+0000, a control"),
        ({"AwayTeam": "Tab\tTeam"}, "AwayTeam 'Tab\\tTeam' holds U+0009, a control"),
        ({"AwayTeam": "Del\x7f"}, "holds U+007F, a control character"),
        ({"HomeTeam": "Next\x85Line"}, "holds U+0085, a control character"),
        ({"HomeTeam": "Line\u2028Break"}, "holds U+2028, a control character"),
        ({"HomeTeam": "Half\ud800"}, "holds U+D800, a lone surrogate"),
        ({"Div": "E0\x00"}, "Div 'E0\\x00' holds U+0000"),
        # Dates and times are ASCII digits, within the dates a file may hold.
        ({"Date": "\u0661\u0666/08/2024"}, "is not dd/mm/yy or dd/mm/yyyy"),
        ({"Time": "\u0662\u0660:00"}, "is not HH:MM"),
        ({"Date": "01/01/0001"}, "Date '01/01/0001' is outside the dates taken"),
        ({"Date": "31/12/9999"}, "Date '31/12/9999' is outside the dates taken"),
        ({"Date": "31/12/1899"}, "(01/01/1900 to 31/12/2099)"),
    ],
)
def test_each_kind_of_bad_row_is_rejected_with_a_reason(cells, reason):
    parsed = footballdata.parse(_sample([_row(**BASE), _row(**{**BASE, **cells})]))
    assert parsed.rows_read == 2
    assert len(parsed.matches) == 1
    (rejected,) = parsed.rejected
    assert rejected.line == 3
    assert reason in rejected.reason


def test_goals_written_as_whole_floats_are_accepted():
    (match,) = footballdata.parse(_sample([_row(**{**BASE, "FTHG": "1.0", "FTAG": "0.0"})])).matches
    assert (match.home_goals, match.away_goals) == (1, 0)


def test_goals_up_to_99_are_accepted():
    cells = {**BASE, "FTHG": "99", "FTAG": "007", "HTHG": "50", "HTAG": "0"}
    (match,) = footballdata.parse(_sample([_row(**cells)])).matches
    assert (match.home_goals, match.away_goals, match.ht_home_goals) == (99, 7, 50)


SHOTS_FILE = "Div,Date,HomeTeam,AwayTeam,FTHG,FTAG,HS,AS,HST,AST\n"


@pytest.mark.parametrize(
    ("cells", "shots", "on_target"),
    [
        ("2,1,14,9,6,3", (14, 9), (6, 3)),
        ("0,0,12.0,07,4,0", (12, 7), (4, 0)),
        ("2,1,14,9,,3", None, None),  # one cell blank: none of the four is kept
        ("2,1,14,9,15,3", None, None),  # more on target than in all
        ("2,1,14,x,6,3", None, None),
        ("2,1,14,9," + "9" * 5000 + ",3", None, None),  # no int() of an absurd cell
        (",,14,9,6,3", None, None),  # no result: shots of a match not played are not read
    ],
)
def test_shots_are_read_only_when_all_four_counts_fit(cells, shots, on_target):
    (match,) = footballdata.parse(SHOTS_FILE + f"E0,16/08/2024,Arsenal,Fulham,{cells}\n").matches
    assert (match.shots, match.shots_on_target) == (shots, on_target)


def test_a_file_without_shot_columns_reads_none():
    (match,) = footballdata.parse(_sample([_row(**BASE)])).matches
    assert (match.shots, match.shots_on_target) == (None, None)


def test_a_reason_clips_the_cell_it_quotes():
    parsed = footballdata.parse(_sample([_row(**{**BASE, "Date": "x" * 5000})]))
    (rejected,) = parsed.rejected
    assert rejected.reason == f"Date {'x' * 40!r}… is not dd/mm/yy or dd/mm/yyyy"


def test_a_corrupted_real_file_rejects_exactly_the_broken_lines():
    lines = _read("E0_2324.csv").split("\r\n")
    header = lines[0].split(",")

    def corrupt(line_number, column, value):
        cells = lines[line_number - 1].split(",")
        cells[header.index(column)] = value
        lines[line_number - 1] = ",".join(cells)

    corrupt(5, "Date", "31/02/2024")
    corrupt(17, "HomeTeam", "")
    corrupt(42, "FTHG", "x")
    corrupt(100, "FTR", "D" if lines[99].split(",")[header.index("FTR")] != "D" else "H")
    corrupt(381, "Div", "E9")
    parsed = footballdata.parse("\r\n".join(lines))
    assert [row.line for row in parsed.rejected] == [5, 17, 42, 100, 381]
    assert "E9" in parsed.rejected[-1].reason
    assert parsed.rows_read == 380
    assert len(parsed.matches) == 375
    assert parsed.matches[0].line == 2 and parsed.matches[-1].line == 380


def test_files_that_are_not_football_data_are_refused():
    with pytest.raises(footballdata.FootballDataError):
        footballdata.parse("")
    with pytest.raises(footballdata.FootballDataError, match="HomeTeam"):
        footballdata.parse("Div,Date,Home,Away\nE0,16/08/2024,A,B\n")
    # A header cell beyond the csv module's field limit is not CSV any more.
    with pytest.raises(footballdata.FootballDataError, match="Line 1"):
        footballdata.parse("Div,Date,HomeTeam,AwayTeam," + "x" * 200_000 + "\n")


def test_a_line_that_is_not_csv_rejects_that_line_only():
    """A cell beyond the csv module's field limit, or a quote left open, costs its own line:
    an open quote no longer swallows the lines after it."""
    second = {**BASE, "Date": "17/08/2024", "HomeTeam": "Ipswich", "AwayTeam": "Liverpool"}
    second.update({"FTHG": 0, "FTAG": 2, "FTR": "A", "HTR": ""})
    third = {**second, "Date": "18/08/2024", "HomeTeam": "Arsenal", "AwayTeam": "Wolves"}
    parsed = footballdata.parse(
        _sample(
            [
                _row(**{**BASE, "Referee": "x" * 200_000}),
                _row(**{**BASE, "HomeTeam": '"Man United'}),
                _row(**second),
                _row(**third),
            ]
        )
    )
    assert parsed.rows_read == 4
    assert [(row.line, row.reason) for row in parsed.rejected] == [
        (2, "the line is not valid CSV: field larger than field limit (131072)"),
        (3, "AwayTeam is missing"),
    ]
    assert [(m.line, m.home_team) for m in parsed.matches] == [(4, "Ipswich"), (5, "Arsenal")]


@pytest.mark.parametrize(
    ("first_day", "season"),
    [
        (datetime(2019, 8, 9), "2019-20"),
        (datetime(2020, 7, 26), "2020-21"),
        (datetime(2021, 1, 2), "2020-21"),
        (datetime(1999, 12, 31), "1999-00"),
    ],
)
def test_season_label(first_day, season):
    assert footballdata.season_label(first_day.date()) == season


def test_a_late_finish_in_july_stays_in_the_season_it_ends():
    """A row in July 2020 belongs to 2019-20 when the file's other rows do (the COVID season
    ran on into the summer), not to the calendar's 2020-21."""
    early = {**BASE, "Date": "26/07/2020"}
    late = {**BASE, "Date": "01/03/2020", "HomeTeam": "Leeds"}
    parsed = footballdata.parse(_sample([_row(**early), _row(**late)]))
    assert {m.season for m in parsed.matches} == {"2019-20"}
    assert parsed.rejected == []


def _dated(*days):
    """A file of one match per date in ``days``, each between teams of its own."""
    return _sample(
        [
            _row(**{**BASE, "Date": day, "HomeTeam": f"Home {n}", "AwayTeam": f"Away {n}"})
            for n, day in enumerate(days)
        ]
    )


def test_a_mistyped_year_rejects_its_row_and_leaves_the_season_of_the_others():
    parsed = footballdata.parse(_dated("16/08/2024", "19/08/04", "24/08/2024", "15/05/2025"))
    assert {m.season for m in parsed.matches} == {"2024-25"}
    assert [m.line for m in parsed.matches] == [2, 4, 5]
    (rejected,) = parsed.rejected
    assert rejected.line == 3
    assert rejected.reason == (
        "Date '19/08/04' is outside the file's season 2024-25 (01/07/2024 to 31/08/2025)"
    )


def test_a_file_of_two_dates_seasons_apart_keeps_the_later():
    parsed = footballdata.parse(_dated("19/08/04", "18/08/2024"))
    assert [(m.line, m.season) for m in parsed.matches] == [(3, "2024-25")]
    assert [row.line for row in parsed.rejected] == [2]


def test_the_season_spans_july_to_the_august_after_next():
    parsed = footballdata.parse(
        _dated("30/06/2024", "01/07/2024", "16/08/2024", "31/08/2025", "01/09/2025")
    )
    assert [m.line for m in parsed.matches] == [3, 4, 5]
    assert [row.line for row in parsed.rejected] == [2, 6]


def test_a_rejected_rows_prices_are_not_counted_as_skipped():
    bad_set = {"PSH": 1.6, "PSD": "x", "PSA": 5.5}
    parsed = footballdata.parse(
        _sample([_row(**BASE), _row(**{**BASE, "Date": "16/08/2004", **bad_set})])
    )
    assert (len(parsed.matches), len(parsed.rejected), parsed.prices_skipped) == (1, 1, 0)


def test_a_fixture_more_than_a_year_ahead_is_rejected():
    today = date(2024, 8, 1)
    ahead = footballdata.FIXTURES_AHEAD
    last = (today + ahead).strftime("%d/%m/%Y")
    beyond = (today + ahead + timedelta(days=1)).strftime("%d/%m/%Y")
    fixture = {**BASE, "FTHG": "", "FTAG": "", "FTR": "", "HTHG": "", "HTAG": "", "HTR": ""}
    for day, loaded in ((last, 1), (beyond, 0)):
        parsed = footballdata.parse(_sample([_row(**{**fixture, "Date": day})]), today=today)
        assert len(parsed.matches) == loaded
    (rejected,) = parsed.rejected
    assert rejected.reason == f"Date '{beyond}' is outside the dates taken (01/01/1900 to {last})"


def test_two_digit_years():
    assert footballdata.parse_date("18/08/17").isoformat() == "2017-08-18"
    assert footballdata.parse_date("13/08/93").isoformat() == "1993-08-13"
    assert footballdata.parse_date("18/08/2017").isoformat() == "2017-08-18"
    with pytest.raises(ValueError):
        footballdata.parse_date("18/08/017")


def test_every_division_is_well_formed():
    types = {"top-flight", "lower-league", "cup", "international"}
    assert len(footballdata.DIVISIONS) == 22
    for code, league in footballdata.DIVISIONS.items():
        assert league.code == code and league.competition_type in types
    assert footballdata.DIVISIONS["SP2"].name == "Segunda División"
    assert footballdata.DIVISIONS["T1"].country == "Turkey"
