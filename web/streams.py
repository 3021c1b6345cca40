"""An export's response: its rows written in its format as they are read, and its headers."""

import csv
import io
import json

from flask import Response, stream_with_context
from marshmallow import fields

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
