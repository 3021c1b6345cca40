"""What every adapter fetches with: the record of one source's sync before anything is stored
(``Collected``), and one conditional GET against the validators kept for its URL, its credits
counted from what the answer's headers say."""

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from engine.records import MatchRecord
from models import SourceFetch
from services.feeds.sources import http

#: The digest a season file's ``source_fetch`` row keeps while the source does not serve it.
NOT_SERVED = "not-served"

#: The largest credit count a header is taken to say: The Odds API's largest plan has some
#: millions a month, so a larger number is no count (and would overflow the column).
CREDITS_MAX = 10**9


@dataclass
class Collected:
    """What one source's sync fetched, before anything is stored."""

    source: str
    records: list[MatchRecord] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)  # the URL of each record, as stored
    rejected: list[dict] = field(default_factory=list)  # {"url", "line", "reason"}
    fetched: list[dict] = field(default_factory=list)  # validators to keep, per URL
    calls: int = 0
    unchanged: int = 0  # answers with nothing new (304, or the body stored last time)
    credits_spent: int = 0
    credits_remaining: int | None = None
    credits_used: int | None = None
    skipped: list[str] = field(default_factory=list)  # calls not made, and why
    errors: list[str] = field(default_factory=list)  # what failed (the rest still counts)
    backoff_until: datetime | None = None


def validators(urls) -> dict[str, SourceFetch]:
    """The validators kept for each of ``urls`` (its last answer's ``source_fetch`` row)."""
    return {row.url: row for row in SourceFetch.select().where(SourceFetch.url.in_(list(urls)))}


def fetch(collected, url, key, known, policy, now, cost=0) -> bytes | None:
    """One conditional GET: the new body, or None (unchanged, or failed: recorded either way).
    ``key`` is the URL as stored (without the API key); ``cost`` the credits an answer costs
    when it does not say (``x-requests-last``)."""
    before = known.get(key)
    collected.calls += 1
    try:
        answer = http.get(
            url,
            policy,
            etag=before.etag if before else None,
            last_modified=before.last_modified if before else None,
        )
    except http.FetchError as error:
        for headers in error.answered:  # answers whose body failed: charged all the same
            _charge(collected, headers, cost)
        if error.status == 404 and "/mmz4281/" in key:
            collected.skipped.append(f"{key}: not served (404); asked again in a day")
            collected.fetched.append(
                {"url": key, "etag": None, "last_modified": None, "digest": NOT_SERVED}
            )
            return None
        collected.errors.append(f"{key}: {error}")
        if error.retry_after is not None:
            wait = min(max(error.retry_after, 0.0), http.RETRY_AFTER_MAX)
            collected.backoff_until = now + timedelta(seconds=wait)
        return None
    for headers in [*answer.earlier, answer.headers]:
        _charge(collected, headers, cost)
    if answer.status == 304:
        collected.unchanged += 1
        return None
    digest = hashlib.sha256(answer.body).hexdigest()
    if before is not None and before.digest == digest:
        collected.unchanged += 1
        return None
    collected.fetched.append(
        {"url": key, "etag": answer.etag, "last_modified": answer.last_modified, "digest": digest}
    )
    return answer.body


def _charge(collected, headers, cost) -> None:
    """Count what one answer cost: what its headers say, else ``cost``."""
    if not _credits(collected, headers):
        collected.credits_spent += cost


def _credits(collected, headers) -> bool:
    """Read the credit headers; whether the answer said what it cost."""
    for name, attribute in (
        ("x-requests-remaining", "credits_remaining"),
        ("x-requests-used", "credits_used"),
    ):
        value = _whole(headers.get(name))
        if value is not None:
            setattr(collected, attribute, value)
    last = _whole(headers.get("x-requests-last"))
    if last is None:
        return False
    collected.credits_spent += last
    return True


def _whole(value: str | None) -> int | None:
    """A header's whole number (``12`` or ``12.0``) up to CREDITS_MAX, or None."""
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    if number is None or not 0 <= number <= CREDITS_MAX or not number.is_integer():
        return None  # NaN fails the range too
    return int(number)


def forget(collected, key) -> None:
    """Keep no validators for ``key``: its body was not stored, so the next sync fetches it
    again in full rather than hearing 304 for what it never took."""
    collected.fetched = [entry for entry in collected.fetched if entry["url"] != key]
