"""Text from outside: the bytes of a data file read in the encodings sources and spreadsheets
write, and the characters no stored name may hold.

A file is read as what its byte-order mark says (UTF-8, UTF-16LE or UTF-16BE), else as UTF-8,
else as Windows-1252 (football-data.co.uk's older files): never with a replacement character,
so two names that differ in a byte never become one. Bytes that none of these read are an
error naming the encoding tried and the offset of the byte.
"""

import codecs
import re
import unicodedata
from dataclasses import dataclass


class UnreadableText(ValueError):
    """The bytes are not text in the encodings read; the message says where they fail."""


@dataclass(frozen=True)
class Decoded:
    """A file's text and the encoding it was read as."""

    text: str  # without its byte-order mark
    encoding: str  # "utf-8", "utf-8-sig", "utf-16-le", "utf-16-be" (both with a BOM), "cp1252"


#: The byte-order marks read, each with its codec and the name a message gives it.
BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16BE"),
)

#: A character of two to four bytes in well-formed UTF-8 (no overlong form, no surrogate).
UTF8_CHARACTER = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]"
    rb"|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]"
    rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)


def decode(data: bytes) -> Decoded:
    """The text of a file's bytes: as its byte-order mark says, else UTF-8, else Windows-1252.

    Raises UnreadableText when a byte-order mark announces an encoding the bytes are not in, or
    one not read (UTF-32); when the file starts as UTF-16 without a byte-order mark does (a NUL
    byte); when a byte is neither UTF-8 nor defined in Windows-1252 (0x81, 0x8D, 0x8F, 0x90 and
    0x9D are not); and when the file mixes UTF-8 characters with bytes UTF-8 does not read, as
    Windows-1252 would turn those characters into others (``é`` into ``Ã©``).
    """
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise UnreadableText(
            "UTF-32 (its byte-order mark says so) is not read: save it as UTF-8 or UTF-16"
        )
    for mark, codec, name in BYTE_ORDER_MARKS:
        if data.startswith(mark):
            body = data[len(mark) :]
            try:
                return Decoded(body.decode(codec.removesuffix("-sig")), codec)
            except UnicodeDecodeError as error:
                raise UnreadableText(
                    f"its byte-order mark says {name}, but {_where(body, error, len(mark))} "
                    f"not {name} ({error.reason})"
                ) from None
    nul = data.find(b"\x00", 0, 2)
    if nul >= 0:
        raise UnreadableText(
            f"byte 0x00 at offset {nul} of the first line: UTF-16 without a byte-order mark? "
            "Files are read as UTF-8, UTF-16 with a byte-order mark, or Windows-1252"
        )
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as error:
        not_utf8, first_error = f"{_where(data, error)} not UTF-8 ({error.reason})", error.start
    mixed = UTF8_CHARACTER.search(data)
    if mixed is not None:
        character = mixed.group()
        raise UnreadableText(
            f"neither UTF-8 nor Windows-1252: {not_utf8}, and the UTF-8 character "
            f"{character.decode()!r} at offset {mixed.start()} "
            f"(line {_line(data[: mixed.start()].decode('latin-1'))}) would read as "
            f"{character.decode('cp1252', errors='backslashreplace')!r} in Windows-1252 "
            "(a file mixing the two)"
        )
    try:
        return Decoded(data.decode("cp1252"), "cp1252")
    except UnicodeDecodeError as error:
        undefined = " and undefined in Windows-1252"
        if error.start != first_error:  # another byte than the one UTF-8 fails at
            undefined = f", and {_where(data, error)} undefined in Windows-1252"
        raise UnreadableText(f"neither UTF-8 nor Windows-1252: {not_utf8}{undefined}") from None


def _where(body: bytes, error: UnicodeDecodeError, skipped: int = 0) -> str:
    """The bytes ``body`` failed to decode at, their offset in the file (after ``skipped``
    bytes of a byte-order mark) and their line, with the verb that fits: "byte 0x81 at offset
    10 (line 2) is"."""
    bad = body[error.start : error.end]
    what = f"byte 0x{bad[0]:02X} at" if len(bad) == 1 else f"bytes {bad.hex(' ').upper()} at"
    # The bytes before the error decode. In UTF-8 and 8-bit text a line break is one byte of
    # its own, so Latin-1 (a character per byte) counts the lines alike.
    codec = error.encoding if error.encoding.startswith("utf-16") else "latin-1"
    line = _line(body[: error.start].decode(codec))
    return f"{what} offset {skipped + error.start} (line {line}) {'is' if len(bad) == 1 else 'are'}"


def _line(prefix: str) -> int:
    """The physical line (1-based) that follows ``prefix``, counting CRLF, LF and CR as one
    break each, as the CSV reader does."""
    return prefix.count("\n") + prefix.count("\r") - prefix.count("\r\n") + 1


#: C0 and C1 control characters (NUL among them, which PostgreSQL's text refuses), DEL, and the
#: line and paragraph separators.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

#: Bidirectional controls: the marks, embeddings, overrides and isolates that reorder how the
#: text around them is shown (``U+202E`` shows ``CF ehT`` for ``The FC``).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

#: What a program puts for a character it could not read: a name holding it has lost one.
REPLACEMENT_CHARACTER = "\ufffd"


def hidden_character(name: str) -> tuple[str, str] | None:
    """The first character of ``name`` no stored name may hold, with what it is; None when it
    holds none.

    Refused: control characters and the line and paragraph separators, lone surrogates,
    bidirectional controls, every other invisible format character (Unicode's category Cf: the
    zero-width space and joiners, the soft hyphen, U+FEFF…), and U+FFFD, the replacement
    character. Two names that differ only in these would look the same, or one would show as
    another.
    """
    control = CONTROL_CHARACTERS.search(name)
    if not name.isascii():  # the rest are beyond ASCII: most names are spared the walk
        for character in name[: control.start() if control else None]:
            kind = _hidden_kind(character)
            if kind is not None:
                return character, kind
    return (control.group(), "a control character") if control else None


def _hidden_kind(character: str) -> str | None:
    """What a non-control character is, when no name may hold it."""
    if character in BIDI_CONTROLS:
        return "a bidirectional control"
    if character == REPLACEMENT_CHARACTER:
        return "the replacement character (one the file had already lost)"
    category = unicodedata.category(character)
    if category == "Cs":
        return "a lone surrogate"
    if category == "Cf":
        return "an invisible format character"
    return None
