"""An export's response: its rows written in its format as they are read, and its headers;
how many streams a caller and a process may have open, and the cut of a reader that stalls."""

import contextlib
import csv
import io
import json
import logging
import socket
import threading
import time
import weakref
from collections import Counter

from flask import Response, current_app, request, stream_with_context
from marshmallow import fields

from errors import NotAcceptable, TooManyExports
from schemas.common import flat_rows
from schemas.exports import ROWS, ExportJSONSchema

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


class Slot:
    """One open export stream: whose it is, its client's socket (when the server gives it) and
    the time by which the chunk being sent must have gone."""

    def __init__(self, streams, user_id, sock):
        self.streams = streams
        self.user_id = user_id
        self.sock = sock
        self.deadline = None
        self.cut = False
        self.released = False

    def sending(self) -> None:
        """A chunk is handed to the server: it must be sent within the send timeout."""
        if self.sock is not None:
            self.deadline = time.monotonic() + self.streams.send_timeout
            self.streams.watch()

    def sent(self) -> None:
        """The chunk has gone (the server asked for the next one)."""
        self.deadline = None

    def release(self) -> None:
        """Give the stream's place back (safe to call again)."""
        self.streams.release(self)


class ExportStreams:
    """The export streams one process has open, bounded per caller and in all, so exports can
    never hold every serving thread: probes and other requests keep the rest. A stream whose
    reader leaves a chunk unsent for ``send_timeout`` seconds is cut (its socket shut down, so
    the thread blocked writing to it is freed and its snapshot closed) by one watcher thread."""

    def __init__(self, per_user: int, per_process: int, send_timeout: float):
        self.per_user = per_user
        self.per_process = per_process
        self.send_timeout = send_timeout
        self.lock = threading.Lock()
        self.by_user = Counter()
        self.open = set()
        self.watcher = None

    def claim(self, user_id, sock=None) -> Slot:
        """A place for one more stream of ``user_id``, or TooManyExports (a 429)."""
        with self.lock:
            if self.by_user[user_id] >= self.per_user:
                raise TooManyExports("The account", self.per_user)
            if len(self.open) >= self.per_process:
                raise TooManyExports("The server", self.per_process)
            slot = Slot(self, user_id, sock)
            self.by_user[user_id] += 1
            self.open.add(slot)
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
        while True:
            time.sleep(tick)
            now = time.monotonic()
            with self.lock:
                stalled = [
                    slot
                    for slot in self.open
                    if slot.deadline is not None and slot.deadline <= now and not slot.cut
                ]
                for slot in stalled:
                    slot.cut = True
            for slot in stalled:
                log.warning(
                    "export stream cut: its reader left a chunk unread for %s s (user=%s)",
                    self.send_timeout,
                    slot.user_id,
                )
                # The thread blocked sending to it gets EPIPE, and the server closes the
                # response (and with it the snapshot) as for a client gone; a socket closed
                # meanwhile has nothing left to cut.
                with contextlib.suppress(OSError):
                    slot.sock.shutdown(socket.SHUT_RDWR)


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
    slot = streams.claim(user.id, request.environ.get("gunicorn.socket"))
    try:
        prepared = prepare()
    except BaseException:
        slot.release()
        raise
    return response(prepared, slot)


def response(prepared, slot: Slot | None = None) -> Response:
    """The streamed answer to a prepared export (``services.exports.Prepared``): its snapshot
    closes and its place is given back when the body is written, when the body is never read,
    and when the response is dropped unsent."""

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
                    slot.sent()
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
