"""RFC 3161 time-stamps: a third party's signed word that a checkpoint existed at a time.

A checkpoint's signed note is sent (as its SHA-256 imprint) to the time-stamping authority named
by ``LEDGER_TSA_URL``; its answer, a DER ``TimeStampResp``, is kept with the checkpoint, and
anyone holding the authority's certificate can check it (``tools/verify_ledger.py --tsa-cert``).
"""

import hashlib
import urllib.error
import urllib.request

import rfc3161_client


class TimestampError(Exception):
    """The authority could not be reached, or its answer does not stamp what was sent."""


def stamp(url: str, message: bytes, timeout: float = 10.0) -> bytes:
    """The authority's DER response stamping ``message``, after checking that it grants the
    request and stamps this message with this request's nonce; TimestampError otherwise."""
    request = (
        rfc3161_client.TimestampRequestBuilder()
        .data(message)
        .hash_algorithm(rfc3161_client.HashAlgorithm.SHA256)
        .build()
    )
    http = urllib.request.Request(
        url,
        data=request.as_bytes(),
        method="POST",
        headers={"Content-Type": "application/timestamp-query"},
    )
    try:
        with urllib.request.urlopen(http, timeout=timeout) as answer:
            body = answer.read()
    except (urllib.error.URLError, OSError) as error:
        raise TimestampError(f"the time-stamping authority did not answer: {error}") from None
    try:
        response = rfc3161_client.decode_timestamp_response(body)
    except ValueError as error:
        raise TimestampError(f"the authority's answer is not a time-stamp: {error}") from None
    if response.status != rfc3161_client.PKIStatus.GRANTED:
        raise TimestampError(f"the authority refused: status {response.status}")
    info = response.tst_info
    if info.message_imprint.message != hashlib.sha256(message).digest():
        raise TimestampError("the authority stamped another message")
    if info.nonce != request.nonce:
        raise TimestampError("the authority's answer is not to this request")
    return body
