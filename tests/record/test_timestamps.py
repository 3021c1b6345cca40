"""RFC 3161 time-stamps from a local authority made with ``openssl ts``."""

import base64

import pytest

from services.record import timestamps
from tests.tsa import authority
from tests.verifier import load_verifier

verifier = load_verifier()


@pytest.fixture
def tsa(tmp_path):
    with authority(tmp_path) as served:
        yield served


def test_a_stamp_verifies_against_the_authoritys_certificate_for_its_message_only(tsa):
    url, ca = tsa
    note = "picks.example/track-record\n3\nAAAA\n\n\u2014 picks.example/track-record AAAA\n"
    token = base64.b64encode(timestamps.stamp(url, note.encode())).decode()
    stamped = verifier.token_time(token, note, ca)
    assert stamped.tzinfo is not None
    with pytest.raises(verifier.Failed, match="does not verify"):
        verifier.token_time(token, note.replace("3", "4"), ca)


def test_a_stamp_from_another_authority_is_refused(tsa, tmp_path):
    url, _ = tsa
    (tmp_path / "other").mkdir()
    with authority(tmp_path / "other") as (_, other_ca):
        token = base64.b64encode(timestamps.stamp(url, b"note\n")).decode()
        with pytest.raises(verifier.Failed):
            verifier.token_time(token, "note\n", other_ca)


def test_an_authority_that_does_not_answer_is_an_error():
    with pytest.raises(timestamps.TimestampError, match="did not answer"):
        timestamps.stamp("http://127.0.0.1:9/", b"note\n", timeout=2)
