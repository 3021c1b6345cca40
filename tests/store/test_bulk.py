"""Bulk writes (``store.bulk``): rows given column by column come back exactly as given, on
SQLite and on PostgreSQL (each column of a page shipped there as one text parameter); records
are written as Peewee's ``insert_many`` writes them."""

from datetime import UTC, datetime

import numpy as np
import pytest

from models import LedgerEntry, LedgerNode, MatchIntelligence, Operation, Pick
from store.bulk import fetch_rows, insert_columns, insert_records, json_documents
from store.database import db
from tests import factories

AT = datetime(2026, 3, 1, 18, 0, 7, tzinfo=UTC)
#: Text that quoting, escaping or splitting could get wrong; none holds a newline.
AWKWARD = [
    "",
    "plain",
    '{"a":"b\\"c","d":[1,2]}',
    "it's",
    "back\\slash\\",
    "\\n is two characters",
    "\\N",
    "NULL",
    "null",
    "tab\there",
    "carriage\rreturn",
    "{braces,commas}",
    '"quoted"',
    "é ☃ 𝄞 中文",
    "%s %(name)s %%",
    " spaces around ",
    "",
]


def _entries():
    return list(
        LedgerEntry.select(
            LedgerEntry.position,
            LedgerEntry.kind,
            LedgerEntry.pick_id,
            LedgerEntry.body,
            LedgerEntry.created_at,
        )
        .order_by(LedgerEntry.position)
        .tuples()
    )


@pytest.mark.parametrize("page_size", [10_000, 3, 1, 16])  # 16: a last page of one row
def test_columns_come_back_as_given(app, page_size):
    count = len(AWKWARD)
    positions = [5, *range(2**40, 2**40 + count - 2), 2**62]
    pick_ids = np.arange(count, dtype=np.int64) * -7  # NumPy's integers, negative ones
    with app.app_context(), db.atomic():
        insert_columns(
            LedgerEntry,
            {
                "position": positions,
                "kind": ["pick.settled"] * count,
                "pick_id": pick_ids,
                "body": AWKWARD,
            },
            constants={"created_at": AT},
            page_size=page_size,
        )
        assert _entries() == [
            (position, "pick.settled", int(pick_id), body, AT)
            for position, pick_id, body in zip(positions, pick_ids, AWKWARD, strict=True)
        ]


def test_one_row_and_no_rows(app):
    with app.app_context(), db.atomic():
        insert_columns(LedgerNode, {"address": [], "level": [], "position": [], "hash": []})
        insert_columns(LedgerNode, {"address": [67], "level": [3], "position": [1], "hash": [""]})
        assert list(LedgerNode.select().tuples()) == [(67, 3, 1, "")]


@pytest.mark.parametrize(
    ("columns", "error"),
    [
        ({"address": [1, 2], "level": [3], "position": [1, 2], "hash": ["a", "b"]}, ValueError),
        ({"address": [1, 2], "level": [3, 3], "position": [1, 2], "hash": ["a", None]}, ValueError),
        (
            {"address": [1, 2], "level": [3, 3], "position": [1, 2], "hash": ["a", "b\nc"]},
            ValueError,
        ),
        ({"address": [1, 2], "level": [3, 3.5], "position": [1, 2], "hash": ["a", "b"]}, TypeError),
        ({"address": [1, 2], "level": [3, 3], "position": [1, 2], "hash": ["a", b"b"]}, TypeError),
    ],
    ids=["lengths", "none", "newline", "float", "bytes"],
)
def test_what_cannot_be_shipped_is_refused_and_nothing_written(app, columns, error):
    with app.app_context():
        with pytest.raises(error), db.atomic():
            insert_columns(LedgerNode, columns)
        assert LedgerNode.select().count() == 0


def test_only_integer_and_text_fields_are_columns(app):
    with app.app_context(), pytest.raises(TypeError), db.atomic():
        insert_columns(
            LedgerEntry,
            {"position": [1], "kind": ["k"], "pick_id": [1], "body": ["{}"], "created_at": [AT]},
        )


def test_stored_json_read_in_bulk_is_what_peewee_reads(app):
    """``json_documents`` decodes ``fetch_rows``'s JSON texts as the field would, None kept."""
    documents = [{"home": 0.5, "note": text} for text in AWKWARD] + [None, {"a": [1, {"b": None}]}]
    with app.app_context():
        for document in documents:
            Operation.create(kind="settlement-run", params={}, result=document)
        query = Operation.select(Operation.result).order_by(Operation.id)
        (texts,) = zip(*fetch_rows(query), strict=True)
        assert json_documents(texts) == [row.result for row in query] == documents
    assert json_documents([]) == []


def test_records_take_the_models_defaults_and_keep_or_replace_a_row_on_its_key(app):
    with app.app_context():
        first, second = factories.match("Alpha", "Beta"), factories.match("Gamma", "Delta")
        pick = {
            "match": first.id,
            "market": "1x2",
            "line": -1.0,
            "selection": "home",
            "bookmaker": "bet365",
            "odds": 2.1,
            "probability": 0.55,
            "edge": 0.1,
            "rating": "B",
            "data_quality": 0.9,
            "created_at": AT,
        }
        with db.atomic():
            insert_records(Pick, [pick], skip_taken=True)
            insert_records(
                Pick, [{**pick, "odds": 9.0}, {**pick, "match": second.id}], skip_taken=True
            )
        stored = list(Pick.select().order_by(Pick.match))
        assert [(row.match_id, row.odds) for row in stored] == [(first.id, 2.1), (second.id, 2.1)]
        assert {(row.stake, row.status, row.is_live, row.created_at) for row in stored} == {
            (1.0, "pending", False, AT)
        }  # the defaults of the fields the records leave out

        payloads = [{"note": text} for text in AWKWARD[:3]]
        with db.atomic():
            insert_records(MatchIntelligence, [{"match": first.id, "payload": payloads[0]}])
            insert_records(
                MatchIntelligence,
                [
                    {"match": first.id, "payload": payloads[1]},
                    {"match": second.id, "payload": payloads[2]},
                ],
                replace_on=("match",),
            )
        stored = MatchIntelligence.select().order_by(MatchIntelligence.match)
        assert [(row.match_id, row.payload) for row in stored] == [
            (first.id, payloads[1]),
            (second.id, payloads[2]),
        ]
        # A replaced row keeps what the records leave out (the defaults fill new rows only).
        Pick.update(status="won").where(Pick.match == first.id).execute()
        with db.atomic():
            insert_records(Pick, [{**pick, "odds": 3.3}], replace_on=("match", "market"))
        replaced = Pick.get(Pick.match == first.id)
        assert (replaced.odds, replaced.status) == (3.3, "won")
        assert insert_records(Pick, []) is None and Pick.select().count() == 2
