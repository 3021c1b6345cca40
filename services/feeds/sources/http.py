"""The live sources' one way to fetch: conditional GETs with timeouts, retries with backoff and
jitter, and ``Retry-After`` obeyed, all within one total deadline (``SOURCE_DEADLINE``: a read
timeout alone lets an upstream dripping a byte at a time hold a sync for as long as it drips);
a local folder (``file://`` or a plain path) for tests and offline use.

No database here: the caller hands in the validators it stored for the URL (``ETag``,
``Last-Modified``) and stores the new ones it gets back, outside any transaction.
"""

import email.utils
import http.client
import logging
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

log = logging.getLogger("picks.sources")

#: Statuses worth another try: the source is busy or briefly down.
RETRIED = frozenset({429, 500, 502, 503, 504})

#: The most a source's body may weigh: the largest football-data file is well under 1 MiB.
MAX_BODY_BYTES = 32 * 1024 * 1024

#: The longest a ``Retry-After`` is taken to ask for (a day): a source asking for longer (or a
#: date years away) pauses for this long, then is asked again.
RETRY_AFTER_MAX = 24 * 3600.0

#: How much of a body one read takes at most: the deadline is checked between reads.
CHUNK_BYTES = 64 * 1024

#: How the sync names itself to a source (as the webhooks do to a receiver).
USER_AGENT = "sports-pick-service-sync/1"


class FetchError(Exception):
    """A fetch that gave nothing usable: ``status`` (None without an answer) and, for a 429 or
    503 whose ``Retry-After`` is longer than the caller may wait, ``retry_after`` seconds.
    ``answered``: the headers of every try that got an answer whose body then failed (cut
    short, too slow, too large): an API charges for those, and says so in them."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        retry_after: float | None = None,
        headers: dict | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.answered = [headers] if headers is not None else []


@dataclass
class Answer:
    """A source's answer: 200 with its body, or 304 (nothing new since the validators)."""

    status: int
    body: bytes | None
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    etag: str | None = None
    last_modified: str | None = None
    #: The headers of earlier tries that got an answer whose body failed (see FetchError).
    earlier: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Policy:
    """How hard to try: from the ``SOURCE_*`` settings; ``sleep``, ``jitter`` and ``clock`` (a
    monotonic one, which the deadline is kept by) are the test's to replace (a frozen clock
    never waits). ``timeout`` bounds each wait for the source, ``deadline`` a whole fetch, its
    tries and the waits between them included."""

    timeout: float = 20.0
    retries: int = 3
    backoff: float = 1.0
    max_wait: float = 60.0
    deadline: float = 45.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_settings(cls, settings, **overrides) -> "Policy":
        """The policy the settings give."""
        return cls(
            timeout=settings["SOURCE_TIMEOUT"],
            retries=settings["SOURCE_RETRIES"],
            backoff=settings["SOURCE_BACKOFF"],
            max_wait=settings["SOURCE_MAX_WAIT"],
            deadline=settings["SOURCE_DEADLINE"],
            **overrides,
        )


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` asks for (delta-seconds in ASCII digits, or an HTTP date), at
    most ``RETRY_AFTER_MAX`` and at least 0; None for anything else (garbage, a negative
    number, a date that is no date)."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        # 400 digits are a float's infinity: capped, never a timedelta's overflow
        return min(float(value), RETRY_AFTER_MAX)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = (moment - (now or datetime.now(UTC))).total_seconds()
    return min(max(0.0, seconds), RETRY_AFTER_MAX)


def is_local(location: str) -> bool:
    """Whether a base URL names a local folder (``file://`` or a plain path)."""
    return urlsplit(location).scheme in ("", "file")


def get(
    url: str,
    policy: Policy,
    etag: str | None = None,
    last_modified: str | None = None,
    headers: dict | None = None,
) -> Answer:
    """GET ``url`` (conditionally, given validators); FetchError when no usable answer came
    after the policy's tries, or none within its deadline. A local path is read as a file."""
    if is_local(url):
        return _read_local(url)
    wanted = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **(headers or {})}
    if etag:
        wanted["If-None-Match"] = etag
    if last_modified:
        wanted["If-Modified-Since"] = last_modified
    attempt = 0
    deadline = policy.clock() + policy.deadline
    answered = []  # the headers of the tries whose body failed, each perhaps charged
    while True:
        attempt += 1
        try:
            answer = _once(url, wanted, policy, deadline)
        except FetchError as error:
            answered += error.answered
            error.answered = answered
            if attempt > policy.retries or not _worth_retrying(error):
                raise
            wait = error.retry_after
            if wait is None:
                wait = policy.backoff * 2 ** (attempt - 1) * (1 + policy.jitter())
            elif wait > policy.max_wait:
                raise
            if policy.clock() + wait >= deadline:
                final = FetchError(
                    f"{error}; no time left for another try within {policy.deadline:g} s",
                    status=error.status,
                    retry_after=error.retry_after,
                )
                final.answered = answered
                raise final from None
            log.info("fetch %s: %s; try %d in %.1f s", _shown(url), error, attempt + 1, wait)
            policy.sleep(wait)
        else:
            answer.earlier = answered
            return answer


def _worth_retrying(error: FetchError) -> bool:
    return error.status is None or error.status in RETRIED


def _once(url: str, headers: dict, policy: Policy, deadline: float) -> Answer:
    request = urllib.request.Request(url, headers=headers)
    timeout = max(0.001, min(policy.timeout, deadline - policy.clock()))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            found = {name.lower(): value for name, value in response.headers.items()}
            status = response.status
            body = _answered_body(response, policy, deadline, found)
    except urllib.error.HTTPError as error:
        found = {name.lower(): value for name, value in (error.headers or {}).items()}
        if error.code == 304:
            return Answer(304, None, found, found.get("etag"), found.get("last-modified"))
        wait = retry_after(found.get("retry-after")) if error.code in (429, 503) else None
        raise FetchError(
            f"HTTP {error.code} {error.reason}", status=error.code, retry_after=wait
        ) from None
    except http.client.IncompleteRead as error:
        raise FetchError(f"the answer was cut short after {len(error.partial)} bytes") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        reason = getattr(error, "reason", error)
        raise FetchError(f"no answer: {reason}") from None
    if len(body) > MAX_BODY_BYTES:
        raise FetchError(
            f"the answer is larger than {MAX_BODY_BYTES} bytes", status=status, headers=found
        )
    return Answer(status, body, found, found.get("etag"), found.get("last-modified"))


def _answered_body(response, policy: Policy, deadline: float, headers: dict) -> bytes:
    """:func:`_body`, a failure carrying the answer's ``headers`` (what the try cost); a body
    shorter than its ``Content-Length`` is one (the connection closed early)."""
    try:
        body = _body(response, policy, deadline)
        missing = getattr(response, "length", None)
        if missing and len(body) <= MAX_BODY_BYTES:
            raise http.client.IncompleteRead(body, missing)
        return body
    except FetchError as error:
        error.answered = [headers]
        raise
    except http.client.IncompleteRead as error:
        raise FetchError(
            f"the answer was cut short after {len(error.partial)} bytes", headers=headers
        ) from None
    except (OSError, http.client.HTTPException) as error:
        raise FetchError(f"the answer broke off: {error}", headers=headers) from None


def _body(response, policy: Policy, deadline: float) -> bytes:
    """The body of ``response``, read a chunk at a time (one read of the socket each, however
    little it brings) up to one byte past ``MAX_BODY_BYTES``; FetchError once ``deadline``
    passes."""
    parts, size = [], 0
    while size <= MAX_BODY_BYTES:
        if policy.clock() >= deadline:
            raise FetchError(
                f"the answer took longer than {policy.deadline:g} s (SOURCE_DEADLINE) after "
                f"{size} bytes"
            )
        chunk = response.read1(min(CHUNK_BYTES, MAX_BODY_BYTES + 1 - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def _read_local(location: str) -> Answer:
    path = Path(urlsplit(location).path if location.startswith("file:") else location)
    try:
        return Answer(200, path.read_bytes())
    except OSError as error:
        raise FetchError(f"cannot read {path}: {error.strerror}") from None


def _shown(url: str) -> str:
    """A URL as a log shows it: without its query (where an API key travels)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}" if parts.scheme else url
