"""An export's response: its rows written in its format as they are read, and its headers."""

import csv
import io
import json

from flask import Response, request, stream_with_context

from errors import NotAcceptable
from schemas.common import flat_rows
from schemas.exports import ROWS, ExportJSONSchema

#: Bytes gathered before each write.
CHUNK = 64 * 1024

MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "ndjson": "application/x-ndjson",
}


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


def response(prepared) -> Response:
    """The streamed answer to a prepared export (``services.exports.Prepared``): its snapshot
    closes when the body is written, and also when the body is never read."""

    def body():
        try:
            yield from WRITERS[prepared.record.format](prepared.record, prepared.rows)
        finally:
            prepared.close()

    answer = Response(stream_with_context(body()), headers=headers(prepared.record))
    answer.call_on_close(prepared.close)
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
    names, convert = flat_rows(ROWS[record.resource](), booleans)
    if record.format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="")

        def serialise(values):
            buffer.seek(0)
            buffer.truncate()
            writer.writerow(values)
            return buffer.getvalue()

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
