"""An export's response: its rows written in its format as they are read, and its headers;
how many streams a caller and a process may have open, and the cut of a reader that stalls
or drips.

A process counts its own streams. When the rate limits are counted on Redis (several processes
serve), each account's streams are counted there too (:class:`SharedStreams`), so
``EXPORT_STREAMS_PER_USER`` holds across every process; ``EXPORT_STREAMS_PER_PROCESS`` stays
each process's own.
"""

import contextlib
import csv
import hashlib
import io
import json
import logging
import socket
import threading
import time
import uuid
import weakref
from collections import Counter

from flask import Response, current_app, request, stream_with_context
from limits.storage import RedisStorage
from marshmallow import fields
from redis.exceptions import RedisError

from errors import NotAcceptable, TooManyExports
from schemas.exports import ROWS, ExportJSONSchema
from schemas.rows import flat_rows
from web.versions import database_name

#: Bytes gathered before each write.
CHUNK = 64 * 1024

#: What a spreadsheet reads as the start of a formula in a cell (OWASP, "CSV Injection"): a cell
#: of text that starts with one of them is written with a ``'`` before it, so it shows as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "ndjson": "application/x-ndjson",
}


log = logging.getLogger("picks.exports")

#: How long a stream's place counted on Redis outlives the process that holds it (one killed
#: mid-stream, say): renewed every third of it while the stream is open.
LEASE_SECONDS = 30.0

#: KEYS: an account's places (a sorted set: a stream's token, scored by when its lease runs out
#: in ms by Redis's clock, so the processes' clocks need not agree); ARGV: the token, the
#: account's bound, the lease (ms). 1: the stream has its place; 0: the account's are taken.
CLAIM = """
if redis.replicate_commands then redis.replicate_commands() end  -- before TIME on Redis < 5
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[2]) then
    return 0
end
redis.call('zadd', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[3])
return 1
"""

#: KEYS as CLAIM's; ARGV: the token, the lease (ms). The lease runs again from now, unless the
#: place is gone (given back meanwhile, or run out): a place given back stays given back.
RENEW = """
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if not redis.call('zscore', KEYS[1], ARGV[1]) then
    return 0
end
redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
"""


class SharedStreams:
    """Each account's open export streams counted on the rate limits' Redis, for every process
    of the deployment: a stream holds a place (its token in the account's sorted set) under a
    lease of ``LEASE_SECONDS``, renewed by its process while it is open and given back when it
    ends; a process killed mid-stream leaves its places to run out. The keys carry the
    database's name (as the data version's copy does), so deployments sharing a Redis never
    count each other's accounts.

    While Redis does not answer (the rate limits' ``fallback`` says so, or a call fails and
    tells it), streams are counted in their process only."""

    def __init__(self, storage, database: str, prefix: str, fallback):
        tag = hashlib.sha256(database.encode()).hexdigest()[:16]
        self.base = storage.prefixed_key(f"{prefix}/export-streams/{tag}")
        self.client = storage.get_connection()
        self.claim_script = self.client.register_script(CLAIM)
        self.renew_script = self.client.register_script(RENEW)
        self.fallback = fallback
        self.lease_ms = int(LEASE_SECONDS * 1000)

    def key(self, user_id) -> str:
        """The sorted set of ``user_id``'s places."""
        return f"{self.base}/{user_id}"

    def claim(self, user_id, token: str, limit: int) -> bool | None:
        """Take a place for the stream ``token`` of ``user_id`` if the account holds fewer than
        ``limit``: True when taken, False when not, None when Redis does not answer."""
        taken = self._call(self.claim_script, [self.key(user_id)], [token, limit, self.lease_ms])
        return None if taken is None else bool(taken)

    def renew(self, user_id, token: str) -> None:
        """Run the lease of a place still held again from now."""
        self._call(self.renew_script, [self.key(user_id)], [token, self.lease_ms])

    def release(self, user_id, token: str) -> None:
        """Give a place back (one Redis cannot be told of runs out with its lease)."""
        self._call(self.client.zrem, self.key(user_id), token)

    def _call(self, call, *arguments):
        """``call(*arguments)`` on Redis; None while it does not answer."""
        if self.fallback.active():
            return None
        try:
            return call(*arguments)
        except RedisError as error:
            self.fallback.fail(error)
            return None


def shared_streams(app) -> SharedStreams | None:
    """Where ``app`` counts each account's streams with the other processes': on the Redis of
    its rate limits, made at its first export; None for the rate limits' in-process memory (or
    none), and for an in-memory SQLite database (each process its own)."""
    if "shared_export_streams" not in app.extensions:
        storage = app.extensions["rate_limits"].storage
        name = database_name(app.config["DATABASE_URL"])
        shared = None
        if isinstance(storage, RedisStorage) and name is not None:
            shared = SharedStreams(
                storage, name, app.config["RATELIMIT_KEY_PREFIX"], app.extensions["rate_fallback"]
            )
        app.extensions["shared_export_streams"] = shared
    return app.extensions["shared_export_streams"]


class Slot:
    """One open export stream: whose it is, its client's socket (when the server gives it),
    the time by which the chunk being sent must have gone, and its place counted on Redis
    (``shared`` and its ``token``) when it holds one."""

    def __init__(self, streams, user_id, sock):
        self.streams = streams
        self.user_id = user_id
        self.sock = sock
        self.deadline = None
        self.sending_since = None  # when the chunk being sent was handed to the server
        self.waited = 0.0  # seconds the chunks sent before it waited on the reader
        self.sent_bytes = 0  # their bytes
        self.cut = False
        self.released = False
        self.shared = None
        self.token = uuid.uuid4().hex

    def sending(self) -> None:
        """A chunk is handed to the server: it must be sent within the send timeout."""
        if self.sock is not None:
            self.sending_since = self.streams.clock()
            self.deadline = self.sending_since + self.streams.send_timeout
            self.streams.watch()

    def sent(self, size: int = 0) -> None:
        """The chunk of ``size`` bytes has gone (the server asked for the next one)."""
        if self.sending_since is not None:
            self.waited += self.streams.clock() - self.sending_since
            self.sent_bytes += size
        self.deadline = self.sending_since = None

    def too_slow(self, now: float) -> str | None:
        """Why the stream is cut at ``now``, or None: a chunk left unsent for the send timeout,
        or a reader that took less than the minimum rate on average over the time the stream
        has waited on it, once that time is past the send timeout (a reader taking a few bytes
        a second never lets one chunk wait that long, and would hold its place for hours)."""
        streams = self.streams
        if self.deadline is not None and self.deadline <= now:
            return f"its reader left a chunk unread for {streams.send_timeout} s"
        waited = self.waited + (0.0 if self.sending_since is None else now - self.sending_since)
        if waited <= streams.send_timeout or self.sent_bytes >= streams.min_rate * waited:
            return None
        rate = self.sent_bytes / waited
        return f"its reader took {rate:.0f} bytes a second, under {streams.min_rate}"

    def release(self) -> None:
        """Give the stream's place back (safe to call again)."""
        self.streams.release(self)


class ExportStreams:
    """The export streams one process has open, bounded per caller and in all, so exports can
    never hold every serving thread: probes and other requests keep the rest. A stream whose
    reader leaves a chunk unsent for ``send_timeout`` seconds, or takes less than ``min_rate``
    bytes a second on average once it has kept the stream waiting that long, is cut (its socket
    shut down, so the thread blocked writing to it is freed and its snapshot closed) by one
    watcher thread,
    which also renews the leases of the streams' places on Redis (:class:`SharedStreams`)."""

    def __init__(
        self,
        per_user: int,
        per_process: int,
        send_timeout: float,
        min_rate: float = 0,
        clock=time.monotonic,
    ):
        self.per_user = per_user
        self.per_process = per_process
        self.send_timeout = send_timeout
        self.min_rate = min_rate
        self.clock = clock
        self.lock = threading.Lock()
        self.by_user = Counter()
        self.open = set()
        self.watcher = None

    def claim(self, user_id, sock=None, shared: SharedStreams | None = None) -> Slot:
        """A place for one more stream of ``user_id``, or TooManyExports (a 429): among this
        process's streams and, given ``shared``, among the account's in every process."""
        with self.lock:
            if self.by_user[user_id] >= self.per_user:
                raise TooManyExports("The account", self.per_user)
            if len(self.open) >= self.per_process:
                raise TooManyExports("The server", self.per_process)
            slot = Slot(self, user_id, sock)
            self.by_user[user_id] += 1
            self.open.add(slot)
        if shared is not None:
            # Asked outside the lock: the other streams' places are not held up by Redis.
            try:
                taken = shared.claim(user_id, slot.token, self.per_user)
            except BaseException:
                self.release(slot)
                raise
            if taken is False:
                self.release(slot)
                raise TooManyExports("The account", self.per_user)
            if taken:
                slot.shared = shared
                self.watch()  # renews its lease while it is open
        return slot

    def release(self, slot: Slot) -> None:
        with self.lock:
            if slot.released:
                return
            slot.released = True
            self.open.discard(slot)
            self.by_user[slot.user_id] -= 1
            if self.by_user[slot.user_id] <= 0:
                del self.by_user[slot.user_id]
        if slot.shared is not None:
            slot.shared.release(slot.user_id, slot.token)

    def renew(self) -> None:
        """Renew the leases of this process's places on Redis (the watcher's, every third of
        ``LEASE_SECONDS``)."""
        with self.lock:
            held = [slot for slot in self.open if slot.shared is not None]
        for slot in held:
            slot.shared.renew(slot.user_id, slot.token)

    def watch(self) -> None:
        """Start the watcher thread, once per process (it runs as long as the process)."""
        with self.lock:
            if self.watcher is None or not self.watcher.is_alive():
                self.watcher = threading.Thread(
                    target=self._watch, name="export-send-timeout", daemon=True
                )
                self.watcher.start()

    def _watch(self) -> None:
        tick = min(1.0, self.send_timeout / 4)
        renew_at = self.clock() + LEASE_SECONDS / 3
        while True:
            time.sleep(tick)
            now = self.clock()
            if now >= renew_at:
                renew_at = now + LEASE_SECONDS / 3
                self.renew()
            self.cut_slow(now)

    def cut_slow(self, now: float) -> list[Slot]:
        """Cut the streams too slow at ``now`` (:meth:`Slot.too_slow`); returns them."""
        with self.lock:
            slow = [(slot, slot.too_slow(now)) for slot in self.open if not slot.cut]
            slow = [(slot, why) for slot, why in slow if why is not None]
            for slot, _ in slow:
                slot.cut = True
        for slot, why in slow:
            log.warning("export stream cut: %s (user=%s)", why, slot.user_id)
            # The thread blocked sending to it gets EPIPE, and the server closes the response
            # (and with it the snapshot) as for a client gone; a socket closed meanwhile has
            # nothing left to cut.
            with contextlib.suppress(OSError):
                slot.sock.shutdown(socket.SHUT_RDWR)
        return [slot for slot, _ in slow]


def check_accept(export_format: str) -> None:
    """A 406 ``not-acceptable`` when the request's ``Accept`` admits no media type of the
    format asked for, before anything is counted or charged (no ``Accept`` admits any)."""
    media_type = MEDIA_TYPES[export_format].split(";")[0]
    accept = request.accept_mimetypes
    if accept.provided and accept.quality(media_type) <= 0:
        raise NotAcceptable(
            f"A {export_format} export is {media_type}; the request's Accept header admits "
            f"only {accept.to_header()}."
        )


def stream(user, prepare) -> Response:
    """The streamed answer of the export ``prepare()`` counts, charges and records for
    ``user``, once it has a place among the caller's and the process's open streams (else a
    429 before anything is charged)."""
    streams = current_app.extensions["export_streams"]
    slot = streams.claim(
        user.id, request.environ.get("gunicorn.socket"), shared_streams(current_app)
    )
    try:
        prepared = prepare()
    except BaseException:
        slot.release()
        raise
    return response(prepared, slot)


def response(prepared, slot: Slot | None = None) -> Response:
    """The streamed answer to a prepared export (``services.data_api.exports.Prepared``): its
    snapshot closes and its place is given back when the body is written, when the body is never
    read, and when the response is dropped unsent."""

    def close():
        prepared.close()
        if slot is not None:
            slot.release()

    def body():
        try:
            for chunk in WRITERS[prepared.record.format](prepared.record, prepared.rows):
                if slot is not None:
                    slot.sending()
                yield chunk
                if slot is not None:
                    slot.sent(len(chunk))
        finally:
            close()

    rows = body()
    # Also when the body is dropped unread and the response never closed (a response thrown
    # away for an error): its place and its snapshot must not wait for ever.
    weakref.finalize(rows, close)
    answer = Response(stream_with_context(rows), headers=headers(prepared.record))
    answer.call_on_close(close)
    return answer


def headers(record) -> dict[str, str]:
    """An export's response headers: its type, a file name, its id and row count."""
    return {
        "Content-Type": MEDIA_TYPES[record.format],
        "Content-Disposition": (
            f'attachment; filename="{record.resource}-{record.id}.{record.format}"'
        ),
        "X-Export-Id": str(record.id),
        "X-Row-Count": str(record.row_count),
        "Cache-Control": "no-store",
    }


def _chunks(record, rows, separator: str, booleans=(True, False)):
    """The rows serialised one by one (CSV lines or JSON objects), gathered into chunks of
    about ``CHUNK`` characters joined by ``separator``."""
    schema = ROWS[record.resource]()
    names, convert = flat_rows(schema, booleans)
    if record.format == "csv":
        buffer = io.StringIO()
        # Line ends as the terminator, so a cell holding one (CR or LF) is quoted: with an empty
        # terminator the writer would leave it bare and split the row.
        writer = csv.writer(buffer, lineterminator="\r\n")
        texts = [
            index
            for index, field in enumerate(schema.fields.values())
            if isinstance(field, fields.String)
        ]

        def serialise(values):
            for index in texts:
                values[index] = neutralised(values[index])
            buffer.seek(0)
            buffer.truncate()
            writer.writerow(values)
            return buffer.getvalue()[:-2]

    else:
        encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

        def serialise(values):
            return encode(dict(zip(names, values, strict=True)))

    parts, size = [], 0
    for row in rows:
        part = serialise(convert(row))
        parts.append(part)
        size += len(part)
        if size >= CHUNK:
            yield separator.join(parts)
            parts, size = [], 0
    if parts:
        yield separator.join(parts)


def neutralised(value):
    """A CSV cell of text that a spreadsheet would run as a formula (``=HYPERLINK(…)``, ``+1``,
    ``-2+3``, ``@SUM(…)``, or a tab or carriage return first), prefixed with ``'`` as OWASP
    advises; any other value as it is. Only text columns pass here: numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _csv(record, rows):
    """A header row, then one line per row (booleans as true/false, nulls empty)."""
    names, _ = flat_rows(ROWS[record.resource]())
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(names)
    yield buffer.getvalue().encode()
    for chunk in _chunks(record, rows, "\n", ("true", "false")):
        yield (chunk + "\n").encode()


def _ndjson(record, rows):
    """One JSON object per line."""
    for chunk in _chunks(record, rows, "\n"):
        yield (chunk + "\n").encode()


def _json(record, rows):
    """``{id, resource, format, rowCount, generatedAt, items}``, the items written as they
    come."""
    head = ExportJSONSchema().dump(
        {
            "id": record.id,
            "resource": record.resource,
            "format": record.format,
            "row_count": record.row_count,
            "generated_at": record.created_at,
            "items": [],
        }
    )
    opening = json.dumps(head, separators=(",", ":"))
    yield opening[: -len("[]}")].encode() + b"["
    first = True
    for chunk in _chunks(record, rows, ","):
        yield (chunk if first else "," + chunk).encode()
        first = False
    yield b"]}"


WRITERS = {"csv": _csv, "ndjson": _ndjson, "json": _json}
