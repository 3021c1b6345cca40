"""The live sources' one way to fetch: conditional GETs with timeouts, retries with backoff and
jitter, and ``Retry-After`` obeyed; a local folder (``file://`` or a plain path) for tests and
offline use.

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

#: How the sync names itself to a source (as the webhooks do to a receiver).
USER_AGENT = "sports-pick-service-sync/1"


class FetchError(Exception):
    """A fetch that gave nothing usable: ``status`` (None without an answer) and, for a 429 or
    503 whose ``Retry-After`` is longer than the caller may wait, ``retry_after`` seconds."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass
class Answer:
    """A source's answer: 200 with its body, or 304 (nothing new since the validators)."""

    status: int
    body: bytes | None
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class Policy:
    """How hard to try: from the ``SOURCE_*`` settings; ``sleep`` and ``jitter`` are the test's
    to replace (a frozen clock never waits)."""

    timeout: float = 20.0
    retries: int = 3
    backoff: float = 1.0
    max_wait: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random

    @classmethod
    def from_settings(cls, settings, **overrides) -> "Policy":
        """The policy the settings give."""
        return cls(
            timeout=settings["SOURCE_TIMEOUT"],
            retries=settings["SOURCE_RETRIES"],
            backoff=settings["SOURCE_BACKOFF"],
            max_wait=settings["SOURCE_MAX_WAIT"],
            **overrides,
        )


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` asks for (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


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
    after the policy's tries. A local path is read as a file."""
    if is_local(url):
        return _read_local(url)
    wanted = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **(headers or {})}
    if etag:
        wanted["If-None-Match"] = etag
    if last_modified:
        wanted["If-Modified-Since"] = last_modified
    attempt = 0
    while True:
        attempt += 1
        try:
            return _once(url, wanted, policy.timeout)
        except FetchError as error:
            if attempt > policy.retries or not _worth_retrying(error):
                raise
            wait = error.retry_after
            if wait is None:
                wait = policy.backoff * 2 ** (attempt - 1) * (1 + policy.jitter())
            elif wait > policy.max_wait:
                raise
            log.info("fetch %s: %s; try %d in %.1f s", _shown(url), error, attempt + 1, wait)
            policy.sleep(wait)


def _worth_retrying(error: FetchError) -> bool:
    return error.status is None or error.status in RETRIED


def _once(url: str, headers: dict, timeout: float) -> Answer:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_BODY_BYTES + 1)
            found = {name.lower(): value for name, value in response.headers.items()}
            status = response.status
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
        raise FetchError(f"the answer is larger than {MAX_BODY_BYTES} bytes", status=status)
    return Answer(status, body, found, found.get("etag"), found.get("last-modified"))


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
