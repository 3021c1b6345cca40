"""Hostile text in imported files: the encodings sources and spreadsheets write, bytes no
encoding reads, and names holding characters that hide or reorder what they show."""

import pytest

from models import Match, OddsQuote, Team
from services.feeds import imports
from services.feeds.formats import text
from tests import helpers

HEADER = "Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,FTR,PSH,PSD,PSA"


def _write(tmp_path, rows, encoding="utf-8", bom=b"", newline="\n", name="rows.csv"):
    """A file of HEADER and ``rows`` in ``encoding``, after the byte-order mark ``bom``."""
    path = tmp_path / name
    path.write_bytes(bom + newline.join([HEADER, *rows, ""]).encode(encoding))
    return path


def _import(path):
    """Import ``path`` as ``flask data import`` does, at the tests' fixed instant."""
    return imports.import_file(path, now=helpers.NOW)


def _stored():
    """Everything an import writes: teams, matches and quotes."""
    teams = sorted(Team.select(Team.name, Team.country).tuples())
    matches = sorted(
        Match.select(Match.slug, Match.status, Match.home_goals, Match.away_goals).tuples()
    )
    quotes = sorted(
        OddsQuote.select(OddsQuote.match, OddsQuote.selection, OddsQuote.price).tuples()
    )
    return teams, matches, quotes


def test_a_windows_1252_file_keeps_names_that_differ_in_a_letter_apart(ctx, tmp_path):
    """football-data's older files are Windows-1252: "Café" is read as "Café", never as a
    replacement character that "Cafè" and "Caf? FC" would then share, and the same name from
    a UTF-8 file finds the same team."""
    rows = [
        "E0,17/08/2024,15:00,Café FC,Rovers,1,0,H,2,3,4",
        "E0,17/08/2024,15:00,Cafè FC,United,0,0,D,2,3,4",
        "E0,17/08/2024,15:00,Caf? FC,City,0,1,A,2,3,4",
    ]
    summary = _import(_write(tmp_path, rows, encoding="cp1252"))
    names = {name for (name,) in Team.select(Team.name).tuples()}
    assert names == {"Café FC", "Cafè FC", "Caf? FC", "Rovers", "United", "City"}
    assert (summary.encoding, summary.matches_new, summary.rows_rejected) == ("cp1252", 3, 0)
    # (a new price, not a new score: a finished match's result is never rewritten by a file)
    later = _import(_write(tmp_path, [rows[0].replace(",2,3,4", ",2.1,3,4")], name="utf8.csv"))
    assert (later.encoding, later.matches_new, later.odds_stored) == ("utf-8", 0, 1)
    assert Team.select().count() == 6


#: A name beyond the Basic Multilingual Plane: a surrogate pair in UTF-16.
WIDE = "Beşiktaş 𝔉𝔆"


@pytest.mark.parametrize(
    ("encoding", "bom", "newline", "names", "read_as"),
    [
        ("utf-8", b"", "\n", ("1. FC Köln", WIDE), "utf-8"),
        ("utf-8", b"\xef\xbb\xbf", "\r\n", ("1. FC Köln", WIDE), "utf-8-sig"),
        ("utf-16-le", b"\xff\xfe", "\r\n", ("1. FC Köln", WIDE), "utf-16-le"),
        ("utf-16-be", b"\xfe\xff", "\r\n", ("1. FC Köln", WIDE), "utf-16-be"),
        ("cp1252", b"", "\r\n", ("1. FC Köln", "Bayern München"), "cp1252"),
    ],
    ids=["utf-8", "utf-8 with a BOM", "utf-16 le", "utf-16 be", "windows-1252"],
)
def test_each_encoding_imports_its_names_as_written(
    ctx, tmp_path, encoding, bom, newline, names, read_as
):
    """The import says what it read the file as; a bad row is still reported on its line."""
    home, away = names
    rows = [f"D1,17/08/2024,15:00,{home},{away},2,1,H,2,3,4", "D1,18/08/2024,15:00,,X,1,0,H,2,3,4"]
    path = _write(tmp_path, rows, encoding=encoding, bom=bom, newline=newline)
    summary = _import(path)
    match = Match.get()
    assert (match.home_team.name, match.away_team.name, match.home_goals) == (home, away, 2)
    assert (summary.encoding, summary.rows_read, summary.matches_new) == (read_as, 2, 1)
    assert summary.rejected == [{"file": str(path), "line": 3, "reason": "HomeTeam is missing"}]
    assert OddsQuote.select().count() == 3


UNDEFINED_IN_WINDOWS_1252 = (0x81, 0x8D, 0x8F, 0x90, 0x9D)


@pytest.mark.parametrize("byte", UNDEFINED_IN_WINDOWS_1252, ids=hex)
def test_a_byte_no_encoding_reads_refuses_the_file_and_keeps_what_is_stored(ctx, tmp_path, byte):
    """The bytes are neither UTF-8 nor Windows-1252: the file is refused whole, saying where,
    and the matches, teams and prices already stored stay as they were (its result row for a
    stored fixture is not taken either)."""
    _import(_write(tmp_path, ["E0,17/08/2024,15:00,Arsenal,Wolves,,,,1.3,5.5,10"]))
    before = _stored()
    path = tmp_path / "bad.csv"
    good = "E0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.4,5,9\n"
    path.write_bytes(f"{HEADER}\n{good}".encode() + b"E0,18/08/2024,15:00,Caf" + bytes([byte]))
    offset = len(HEADER) + 1 + len(good) + len("E0,18/08/2024,15:00,Caf")
    with pytest.raises(text.UnreadableText) as refused:
        _import(path)
    assert str(refused.value) == (
        f"neither UTF-8 nor Windows-1252: byte 0x{byte:02X} at offset {offset} (line 3) is not "
        "UTF-8 (invalid start byte) and undefined in Windows-1252"
    )
    assert _stored() == before


def test_the_cli_reports_an_unreadable_file_and_imports_the_others(make_app, tmp_path):
    app = make_app(CLOCK=lambda: helpers.NOW)
    good = _write(tmp_path, ["E0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10"])
    bad = tmp_path / "bad.csv"
    data = f"{HEADER}\nE0,18/08/2024,15:00,Café FC,Rov\x9ders,1,0,H,2,3,4\n".encode("latin-1")
    bad.write_bytes(data)
    accent, undefined = data.index("é".encode("latin-1")), data.index(bytes([0x9D]))
    result = app.test_cli_runner().invoke(args=["data", "import", str(good), str(bad)])
    assert result.exit_code == 1
    assert f"{good}: 1 rows read, 1 matches new" in result.output
    assert (
        f"{bad}: not imported: neither UTF-8 nor Windows-1252: byte 0xE9 at offset {accent} "
        "(line 2) is not UTF-8 (invalid continuation byte), and byte 0x9D at offset "
        f"{undefined} (line 2) is undefined in Windows-1252"
    ) in result.stderr
    assert "1 of 2 files could not be imported" in result.output
    with app.app_context():
        assert [team for (team,) in Team.select(Team.name).order_by(Team.name).tuples()] == [
            "Arsenal",
            "Wolves",
        ]


def test_a_file_mixing_utf8_and_windows_1252_is_refused(ctx, tmp_path):
    """Read as Windows-1252, its UTF-8 "Köln" would become "KÃ¶ln", a team of its own."""
    path = tmp_path / "mixed.csv"
    utf8 = f"{HEADER}\nD1,17/08/2024,15:00,1. FC Köln,Bayern,1,0,H,2,3,4\n".encode()
    cp1252 = "D1,24/08/2024,15:00,Bayern,1. FC Köln,1,0,H,2,3,4\n".encode("cp1252")
    path.write_bytes(utf8 + cp1252)
    in_utf8, in_cp1252 = utf8.index("ö".encode()), len(utf8) + cp1252.index("ö".encode("cp1252"))
    with pytest.raises(text.UnreadableText) as refused:
        _import(path)
    assert str(refused.value) == (
        f"neither UTF-8 nor Windows-1252: byte 0xF6 at offset {in_cp1252} (line 3) is not UTF-8 "
        f"(invalid start byte), and the UTF-8 character 'ö' at offset {in_utf8} (line 2) would "
        "read as 'Ã¶' in Windows-1252 (a file mixing the two)"
    )
    assert Team.select().count() == Match.select().count() == 0


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("Div,Date,HomeTeam,AwayTeam\n".encode("utf-16-le"), "UTF-16 without a byte-order mark"),
        ("Div,Date,HomeTeam,AwayTeam\n".encode("utf-16-be"), "UTF-16 without a byte-order mark"),
        (
            b"\xff\xfe" + "Div,Date,HomeTeam,AwayTeam\n".encode("utf-16-le") + b"\x00\xd8A\x00",
            "its byte-order mark says UTF-16LE, but bytes 00 D8 at offset 56 (line 2) are not "
            "UTF-16LE (illegal UTF-16 surrogate)",
        ),
        (
            b"\xfe\xff" + "Div,Date,HomeTeam,AwayTeam\r\nE0".encode("utf-16-be") + b"\x00",
            "its byte-order mark says UTF-16BE, but byte 0x00 at offset 62 (line 2) is not "
            "UTF-16BE (truncated data)",
        ),
        (
            b"\xef\xbb\xbfDiv,Date,HomeTeam,AwayTeam\nE0,17/08/2024,Caf\xe9,X\n",
            "its byte-order mark says UTF-8, but byte 0xE9 at offset 47 (line 2) is not UTF-8",
        ),
        (
            "Div,Date,HomeTeam,AwayTeam\n".encode("utf-32"),
            "UTF-32 (its byte-order mark says so) is not read",
        ),
    ],
    ids=[
        "utf-16 le, no bom",
        "utf-16 be, no bom",
        "bad utf-16 le",
        "odd utf-16 be",
        "bad utf-8",
        "utf-32",
    ],
)
def test_a_file_not_in_the_encoding_it_announces_is_refused_saying_where(ctx, tmp_path, data, says):
    """UTF-16 without a byte-order mark (a NUL byte in the header), bytes its byte-order mark's
    encoding does not read, and UTF-32: each refused with what was tried and the offset."""
    path = tmp_path / "odd.csv"
    path.write_bytes(data)
    with pytest.raises(text.UnreadableText) as refused:
        _import(path)
    assert says in str(refused.value)


HIDDEN = {
    **{f"U+{ord(c):04X}": (c, "a bidirectional control") for c in sorted(text.BIDI_CONTROLS)},
    "zero-width space": ("\u200b", "an invisible format character"),
    "zero-width non-joiner": ("\u200c", "an invisible format character"),
    "zero-width joiner": ("\u200d", "an invisible format character"),
    "word joiner": ("\u2060", "an invisible format character"),
    "soft hyphen": ("\u00ad", "an invisible format character"),
    "BOM inside a name": ("\ufeff", "an invisible format character"),
    "tag letter": ("\U000e0041", "an invisible format character"),
    "replacement character": ("\ufffd", "the replacement character"),
}


@pytest.mark.parametrize("column", ["HomeTeam", "AwayTeam", "Div"])
@pytest.mark.parametrize(("character", "kind"), list(HIDDEN.values()), ids=list(HIDDEN))
def test_a_name_holding_a_hidden_character_rejects_its_row(ctx, tmp_path, column, character, kind):
    """Such a name would show as another (a zero-width space or a joiner is not seen; U+202E
    shows what follows it reversed), or has lost a character: its row is reported with its
    file and line, and the rest of the file loads."""
    cells = {"Div": "E0", "HomeTeam": "Alpha FC", "AwayTeam": "Beta FC"}
    cells[column] = cells[column][:2] + character + cells[column][2:]
    bad = f"{cells['Div']},18/08/2024,15:00,{cells['HomeTeam']},{cells['AwayTeam']},1,0,H,2,3,4"
    rows = [bad, "E0,17/08/2024,15:00,Arsenal,Wolves,2,0,H,1.3,5.5,10"]
    path = _write(tmp_path, rows)
    summary = _import(path)
    assert (summary.rows_read, summary.matches_new, summary.rows_rejected) == (2, 1, 1)
    (rejected,) = summary.rejected
    assert (rejected["file"], rejected["line"]) == (str(path), 2)
    assert rejected["reason"].startswith(f"{column} {cells[column]!r} holds ")
    assert f"holds U+{ord(character):04X}, {kind}" in rejected["reason"]
    assert {name for (name,) in Team.select(Team.name).tuples()} == {"Arsenal", "Wolves"}


def test_a_name_that_lost_a_character_never_merges_with_the_one_that_kept_it(ctx, tmp_path):
    """A UTF-8 file holding U+FFFD (EF BF BD) in a name: that row is refused, so neither
    "Café FC" nor "Cafè FC" is ever stored as, or found by, the name that lost its letter."""
    path = _write(
        tmp_path,
        [
            "E0,17/08/2024,15:00,Café FC,Rovers,1,0,H,2,3,4",
            "E0,24/08/2024,15:00,Caf\ufffd FC,Rovers,1,0,H,2,3,4",
        ],
    )
    assert b"Caf\xef\xbf\xbd FC" in path.read_bytes()
    summary = _import(path)
    assert (summary.matches_new, summary.rows_rejected) == (1, 1)
    assert summary.rejected[0]["line"] == 3
    assert "holds U+FFFD, the replacement character" in summary.rejected[0]["reason"]
    assert {name for (name,) in Team.select(Team.name).tuples()} == {"Café FC", "Rovers"}
