"""Whether the track record tells each rating from the next one down: by the difference of their
mean fair closing EVs against its standard error, in the JSON answer and in a sentence on the
page."""

from datetime import timedelta

import pytest

from services.reads import track_record
from tests import factories

TRACK_RECORD = "/api/v1/data/track-record"
HTML = {"Accept": "text/html"}


def figures(rating, mean, error):
    """The two figures of a rating's row that the comparison reads."""
    return {"rating": rating, "avg_closing_ev": mean, "avg_closing_ev_std_error": error}


@pytest.mark.parametrize(
    ("a", "b", "told"),
    [
        ((0.10, 0.01), (0.02, 0.01), True),  # 0.08 apart, error 0.014: told apart
        ((0.04, 0.01), (0.03, 0.01), False),  # 0.01 apart, within one error
        ((0.05, 0.02), (0.01, 0.01), False),  # 0.04 apart, error 0.022: under two
        ((0.01, 0.001), (0.05, 0.001), False),  # B above A by far: A is not the better
        ((0.05, None), (0.01, 0.01), False),  # one pick of A: no error, nothing told
    ],
)
def test_a_rating_is_told_from_the_next_by_two_standard_errors(a, b, told):
    pairs = track_record.ratings_told([figures("A", *a), figures("B", *b), figures("C", 0.0, 0.01)])
    first = pairs[0]
    assert (first["higher"], first["lower"], first["told_apart"]) == ("A", "B", told)
    assert first["difference"] == pytest.approx(a[0] - b[0])
    if a[1] is None:
        assert first["standard_error"] is None
    else:
        assert first["standard_error"] == pytest.approx((a[1] ** 2 + b[1] ** 2) ** 0.5)
    assert [(p["higher"], p["lower"]) for p in pairs] == [("A", "B"), ("B", "C")]


def test_ratings_without_closing_prices_are_not_told_apart():
    pairs = track_record.ratings_told([figures(r, None, None) for r in "ABC"])
    assert [p["told_apart"] for p in pairs] == [False, False]
    assert pairs[0]["difference"] is None and pairs[0]["standard_error"] is None


#: Closing probabilities of five settled picks at 2.0: fair closing EVs 2p − 1.
AROUND = {
    "high": (0.56, 0.55, 0.54, 0.56, 0.54),  # +0.10 ± 0.009
    "even": (0.51, 0.50, 0.49, 0.51, 0.49),  # 0.00 ± 0.009
}


def settled_picks(ratings: dict[str, str]):
    """Five settled live picks at 2.0 per rating, each on a match of its own, with the
    closing probabilities ``AROUND[ratings[rating]]``."""
    kickoff = factories.now() - timedelta(days=3)
    for rating, level in ratings.items():
        for i, closing in enumerate(AROUND[level]):
            played = factories.match(
                f"{rating}home{i}", f"{rating}away{i}", kickoff=kickoff + timedelta(hours=i)
            )
            won = i % 2 == 0
            factories.pick(
                played,
                rating=rating,
                is_live=True,
                created_at=kickoff - timedelta(days=1),
                status="won" if won else "lost",
                profit=1.0 if won else -1.0,
                closing_probability=closing,
                closing_odds=1.0 / closing,
                clv=2.0 * closing - 1.0,
            )


def told(client, headers) -> dict:
    """``(higher, lower) → toldApart`` of the live record, from the Data API's answer."""
    response = client.get(TRACK_RECORD, headers=headers)
    assert response.status_code == 200
    return {
        (pair["higher"], pair["lower"]): pair for pair in response.get_json()["live"]["ratingsTold"]
    }


def test_a_track_record_where_a_is_b_says_so(client):
    with client.application.app_context():
        settled_picks({"A": "high", "B": "high", "C": "even"})
        headers = factories.people()["pro"][1]
    pairs = told(client, headers)
    assert pairs[("A", "B")]["toldApart"] is False
    assert pairs[("A", "B")]["difference"] == pytest.approx(0.0, abs=1e-9)
    assert pairs[("B", "C")]["toldApart"] is True
    assert pairs[("B", "C")]["difference"] == pytest.approx(0.10, abs=1e-9)
    text = client.get("/track-record", headers=HTML).get_data(as_text=True)
    live = text.split("<h2>Live record</h2>")[1].split("<h2>Backfilled record")[0]
    assert "A's record cannot be told from B's within its standard error" in live
    assert "B's record cannot be told from C's" not in live


def test_a_track_record_where_a_is_far_above_b_does_not(client):
    with client.application.app_context():
        settled_picks({"A": "high", "B": "even", "C": "even"})
        headers = factories.people()["pro"][1]
    pairs = told(client, headers)
    assert pairs[("A", "B")]["toldApart"] is True
    assert pairs[("A", "B")]["standardError"] == pytest.approx(0.0126, abs=0.0005)
    assert pairs[("B", "C")]["toldApart"] is False
    text = client.get("/track-record", headers=HTML).get_data(as_text=True)
    live = text.split("<h2>Live record</h2>")[1].split("<h2>Backfilled record")[0]
    assert "A's record cannot be told from B's" not in live
    assert "B's record cannot be told from C's within its standard error" in live
