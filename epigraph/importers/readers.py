"""Read dataset files as a stream of raw records. The only module here that touches files.

Formats (by suffix; ``.gz`` is decompressed on the fly):

- ``.jsonl`` / ``.ndjson``: one JSON value per line, read line by line: memory stays flat at any size.
- ``.json``: a top-level **array** is streamed element by element with an incremental decoder (memory is
  bounded by the largest element, at most ``max_element_chars``); a top-level **object** is loaded whole
  and is one record (LoCoMo files are; fan it out with a mapping's ``records`` path); a ``.json`` file
  that is really JSON Lines is read as such.
- ``.csv`` / ``.tsv``: rows with a header line, as objects of strings, streamed.
- ``.txt`` / ``.md`` / ``.markdown`` / ``.rst`` and folders of them (recursively, sorted, hidden files
  skipped): one record per file ``{"path", "name", "text", "modified"}``.

Each record carries where it came from (file, 1-based line) and a stable ``key`` (``L<line>``, ``#<n>``
or the file's relative path) that identifies it when the mapping gives no original id. Input that cannot
be read is yielded as an :class:`InvalidRecord` in the stream rather than raised, so one bad line does
not stop a million good ones (the caller decides: ``skip_invalid``).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import IO, Any, Literal, cast

from epigraph.errors import InputError

Format = Literal["jsonl", "json", "csv", "tsv", "text", "textdir"]
TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")
_SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    **{s: "text" for s in TEXT_SUFFIXES},
}
_CHUNK = 1 << 20
MAX_ELEMENT_CHARS = 256 << 20
_CSV_FIELD_LIMIT = 64 << 20
_NUMBER_CHARS = frozenset("0123456789.eE+-")


@dataclass(frozen=True, slots=True)
class RawRecord:
    value: Any
    file: str
    line: int | None
    key: str


@dataclass(frozen=True, slots=True)
class InvalidRecord:
    """A record that yields no episode: where it is, which path failed, and why."""

    file: str | None
    line: int | None
    path: str | None
    reason: str

    def error(self) -> InputError:
        return InputError(self.reason, file=self.file, line=self.line, field=self.path)

    def __str__(self) -> str:
        return str(self.error())


def sniff_format(path: Path) -> Format:
    if path.is_dir():
        return "textdir"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    fmt = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise InputError(
            "unknown file type; expected .jsonl, .json, .csv, .tsv, .txt, .md (optionally .gz) or a folder",
            file=str(path),
        )
    return fmt


def read_records(path: str | Path, fmt: Format | None = None) -> Iterator[RawRecord | InvalidRecord]:
    """Stream the records of a file or folder."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder", file=str(p))
    fmt = fmt or sniff_format(p)
    if fmt == "textdir":
        return _read_text_dir(p)
    if fmt == "text":
        return iter([_text_record(p, p.parent)])
    if fmt in ("csv", "tsv"):
        return _read_csv(p, "\t" if fmt == "tsv" else ",")
    if fmt == "jsonl":
        return _read_jsonl(p)
    return _read_json(p)


def sample_records(path: str | Path, n: int = 5, fmt: Format | None = None) -> list[Any]:
    """The values of the first ``n`` readable records (for detection, proposals and validation)."""
    good = (r.value for r in read_records(path, fmt) if isinstance(r, RawRecord))
    return list(islice(good, n))


def _open_text(path: Path) -> IO[str]:
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8-sig", newline="")


def _open_binary(path: Path) -> IO[bytes]:
    if path.suffix.lower() == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


def _read_jsonl(path: Path) -> Iterator[RawRecord | InvalidRecord]:
    name = str(path)
    with _open_binary(path) as fp:
        for lineno, line in enumerate(fp, 1):
            if not line.strip():
                continue
            if lineno == 1 and line.startswith(codecs.BOM_UTF8):
                line = line[len(codecs.BOM_UTF8) :]
            try:
                yield RawRecord(json.loads(line.decode("utf-8")), name, lineno, f"L{lineno}")
            except json.JSONDecodeError as exc:
                yield InvalidRecord(name, lineno, None, f"not valid JSON: {exc.msg} (column {exc.colno})")
            except UnicodeDecodeError:
                yield InvalidRecord(name, lineno, None, "not valid UTF-8")


def _read_json(path: Path) -> Iterator[RawRecord | InvalidRecord]:
    name = str(path)
    try:
        with _open_text(path) as fp:
            head = fp.read(4096)
        if head.lstrip()[:1] == "[":
            with _open_text(path) as fp:
                yield from _stream_array(fp, name)
            return
        with _open_text(path) as fp:
            text = fp.read()
    except UnicodeDecodeError:
        yield InvalidRecord(name, None, None, "not valid UTF-8")
        return
    try:
        yield RawRecord(json.loads(text), name, 1, "L1")
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            yield from _read_jsonl(path)
        else:
            yield InvalidRecord(name, exc.lineno, None, f"not valid JSON: {exc.msg} (column {exc.colno})")


def _stream_array(
    fp: IO[str], name: str, max_chars: int = MAX_ELEMENT_CHARS
) -> Iterator[RawRecord | InvalidRecord]:
    """Yield the elements of a top-level JSON array, decoding incrementally (bounded memory)."""
    decoder = json.JSONDecoder()
    reader = _Buffer(fp)
    reader.skip_ws()
    reader.expect("[")
    index = 0
    while True:
        reader.skip_ws()
        if reader.peek() == "]":
            return
        if index and not reader.expect(","):
            yield InvalidRecord(name, reader.line, None, "not valid JSON: expected ',' or ']' in the array")
            return
        reader.skip_ws()
        line = reader.line
        try:
            value = reader.decode(decoder, max_chars)
        except ValueError as exc:
            yield InvalidRecord(name, line, None, f"not valid JSON: {exc}")
            return
        yield RawRecord(value, name, line, f"#{index}")
        index += 1


class _Buffer:
    """A sliding text window over a file, tracking the line number of its read position."""

    def __init__(self, fp: IO[str]) -> None:
        self.fp, self.buf, self.pos, self.line, self.eof = fp, "", 0, 1, False

    def _fill(self, size: int = _CHUNK) -> bool:
        if self.eof:
            return False
        chunk = self.fp.read(size)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        while self.pos >= len(self.buf):
            if not self._fill():
                return ""
        return self.buf[self.pos]

    def skip_ws(self) -> None:
        while (ch := self.peek()) and ch in " \t\r\n":
            self.line += ch == "\n"
            self.pos += 1

    def expect(self, ch: str) -> bool:
        if self.peek() != ch:
            return False
        self.pos += 1
        return True

    def decode(self, decoder: json.JSONDecoder, max_chars: int) -> Any:
        size = _CHUNK
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
                # a number may continue in the next chunk ("12" of "123", "-6" of "-6.5e10")
                cut = end == len(self.buf) or self.buf[end] in _NUMBER_CHARS
                if self.eof or not (cut and _is_number(value)):
                    self.line += self.buf.count("\n", self.pos, end)
                    self.pos = end
                    return value
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise ValueError(f"{exc.msg} (line {self.line + exc.lineno - 1})") from None
            if len(self.buf) - self.pos > max_chars:
                raise ValueError(f"an array element is larger than {max_chars} characters")
            self._fill(size)
            size = min(size * 2, 64 << 20)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _read_csv(path: Path, delimiter: str) -> Iterator[RawRecord | InvalidRecord]:
    name = str(path)
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)  # the default 128 KiB rejects long documents
    with _open_text(path) as fp:
        rows = csv.DictReader(fp, delimiter=delimiter)
        start = 2
        while True:
            try:
                row = next(rows)
            except StopIteration:
                return
            except csv.Error as exc:
                yield InvalidRecord(name, rows.line_num, None, f"not valid CSV: {exc}")
                return
            yield RawRecord({k: v for k, v in row.items() if k is not None}, name, start, f"L{start}")
            start = rows.line_num + 1


def _read_text_dir(root: Path) -> Iterator[RawRecord | InvalidRecord]:
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in TEXT_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    for file in files:
        yield _text_record(file, root)


def _text_record(file: Path, root: Path) -> RawRecord | InvalidRecord:
    rel = file.relative_to(root).as_posix()
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        return InvalidRecord(str(file), None, None, "not valid UTF-8 text")
    except OSError as exc:
        return InvalidRecord(str(file), None, None, f"cannot read: {exc.strerror}")
    modified = datetime.fromtimestamp(file.stat().st_mtime, UTC).isoformat()
    value = {"path": rel, "name": file.stem, "text": text, "modified": modified}
    return RawRecord(value, str(file), 1, rel)
