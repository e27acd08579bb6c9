"""Reading JSON, JSONL, CSV and text files as streams of raw records."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from epigraph.errors import InputError
from epigraph.importers.readers import (
    InvalidRecord,
    RawRecord,
    _stream_array,
    read_records,
    sample_records,
    sniff_format,
)

FIXTURES = Path(__file__).parent / "fixtures"


def good(records: Any) -> list[Any]:
    return [r.value for r in records if isinstance(r, RawRecord)]


class TrickleReader(io.StringIO):
    """A file that hands out at most ``n`` characters per read: every value spans many chunks."""

    def __init__(self, text: str, n: int) -> None:
        super().__init__(text)
        self.n = n

    def read(self, size: int | None = -1) -> str:
        return super().read(self.n if size is None or size < 0 else min(size, self.n))


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.jsonl", "jsonl"),
        ("a.ndjson", "jsonl"),
        ("a.json", "json"),
        ("a.CSV", "csv"),
        ("a.tsv", "tsv"),
        ("a.txt", "text"),
        ("a.md", "text"),
        ("a.jsonl.gz", "jsonl"),
        ("a.json.gz", "json"),
    ],
)
def test_sniff_format(tmp_path: Path, name: str, fmt: str) -> None:
    (tmp_path / name).write_bytes(b"")
    assert sniff_format(tmp_path / name) == fmt


def test_sniff_unknown_and_missing(tmp_path: Path) -> None:
    (tmp_path / "a.parquet").write_bytes(b"")
    with pytest.raises(InputError, match="unknown file type"):
        sniff_format(tmp_path / "a.parquet")
    with pytest.raises(InputError, match="no such file"):
        read_records(tmp_path / "nope.jsonl")
    assert sniff_format(tmp_path) == "textdir"


def test_jsonl_lines_keys_and_bad_lines() -> None:
    records = list(read_records(FIXTURES / "broken.jsonl"))
    assert [type(r).__name__ for r in records] == ["RawRecord", "InvalidRecord", "RawRecord", "RawRecord"]
    first, bad, _third, last = records
    assert isinstance(first, RawRecord) and (first.line, first.key) == (1, "L1")
    assert isinstance(bad, InvalidRecord) and bad.line == 2 and "not valid JSON" in bad.reason
    assert isinstance(last, RawRecord) and last.line == 5  # the blank line 4 is skipped, lines still count
    assert "broken.jsonl:2" in str(bad)


def test_jsonl_invalid_utf8_is_one_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"a": "\xff"}\n{"a": 3}\n')
    records = list(read_records(path))
    assert [r.value if isinstance(r, RawRecord) else "bad" for r in records] == [{"a": 1}, "bad", {"a": 3}]


def test_json_array_streams_elements(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[\n {"a": 1},\n {"a": 2},\n "s", 3, [4], null\n]\n')
    records = [r for r in read_records(path) if isinstance(r, RawRecord)]
    assert [r.value for r in records] == [{"a": 1}, {"a": 2}, "s", 3, [4], None]
    assert [r.line for r in records[:3]] == [2, 3, 4]
    assert [r.key for r in records[:2]] == ["#0", "#1"]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64])
def test_array_decoder_across_tiny_chunks(n: int) -> None:
    items: list[Any] = [12345, -6.5e10, True, None, "x" * 50, {"k": [1, 2, {"z": "ü🙂"}]}, [], {}, 0]
    text = "  [" + ", \n".join(json.dumps(i, ensure_ascii=False) for i in items) + "]  "
    got = good(_stream_array(TrickleReader(text, n), "mem"))
    assert got == items


def test_array_decoder_numbers_at_chunk_ends_are_not_cut() -> None:
    assert good(_stream_array(TrickleReader("[1234567,89]", 3), "mem")) == [1234567, 89]


@pytest.mark.parametrize("text", ['[{"a": 1} {"b": 2}]', '[{"a": 1}, {"b": ]', '[{"a": 1},', "[1, 2"])
def test_array_decoder_reports_broken_arrays_after_the_good_part(text: str) -> None:
    records = list(_stream_array(TrickleReader(text, 4), "mem"))
    assert isinstance(records[0], RawRecord) and records[0].value in ({"a": 1}, 1)
    assert isinstance(records[-1], InvalidRecord)


def test_array_decoder_bounds_element_size() -> None:
    text = '[{"big": "' + "x" * 5000
    records = list(_stream_array(TrickleReader(text, 100), "mem", max_chars=1000))
    assert isinstance(records[-1], InvalidRecord) and "larger than" in records[-1].reason


def test_json_object_is_one_record_and_jsonl_in_disguise(tmp_path: Path) -> None:
    assert good(read_records(FIXTURES / "locomo_mini.json"))[0]["speaker_a"] == "Ana"
    path = tmp_path / "lines.json"
    path.write_text('{"a": 1}\n{"a": 2}\n')
    assert good(read_records(path)) == [{"a": 1}, {"a": 2}]
    broken = tmp_path / "broken.json"
    broken.write_text('{"a": \n\n  }')
    (bad,) = list(read_records(broken))
    assert isinstance(bad, InvalidRecord) and bad.line == 3


def test_gzip(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    with gzip.open(path, "wt") as fp:
        fp.write('{"a": 1}\n{"a": 2}\n')
    assert good(read_records(path)) == [{"a": 1}, {"a": 2}]
    arr = tmp_path / "b.json.gz"
    with gzip.open(arr, "wt") as fp:
        fp.write('[{"a": 1}, {"a": 2}]')
    assert good(read_records(arr)) == [{"a": 1}, {"a": 2}]


def test_csv_rows_and_start_lines() -> None:
    records = [r for r in read_records(FIXTURES / "chat.csv") if isinstance(r, RawRecord)]
    assert [r.value["speaker"] for r in records] == ["Kim", "Lee", "Kim"]
    assert records[1].value["text"] == "Line one\nline two"
    assert [r.line for r in records] == [2, 3, 5]  # the quoted newline makes row 2 two lines long


def test_tsv_and_ragged_rows(tmp_path: Path) -> None:
    path = tmp_path / "a.tsv"
    path.write_text("who\tsaid\nA\thi\textra\nB\n")
    assert good(read_records(path)) == [{"who": "A", "said": "hi"}, {"who": "B", "said": None}]


def test_text_folder_is_sorted_and_skips_hidden_and_other_files() -> None:
    records = [r for r in read_records(FIXTURES / "docs") if isinstance(r, RawRecord)]
    assert [r.key for r in records] == ["alpha.txt", "beta.md", "sub/gamma.txt"]
    assert records[0].value["text"].startswith("Alpha is a cat.")
    assert records[0].value["name"] == "alpha"
    single = list(read_records(FIXTURES / "docs" / "alpha.txt"))
    assert isinstance(single[0], RawRecord) and single[0].key == "alpha.txt"


def test_text_file_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\x00")
    (rec,) = list(read_records(tmp_path))
    assert isinstance(rec, InvalidRecord) and "UTF-8" in rec.reason


def test_sample_records_skips_bad_records_and_stops_early() -> None:
    assert [s["text"] for s in sample_records(FIXTURES / "broken.jsonl", 2)] == ["first", None]


def test_reading_is_lazy(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w") as fp:
        for i in range(50_000):
            fp.write(json.dumps({"i": i}) + "\n")
    stream = read_records(path)
    first = next(iter(stream))
    assert isinstance(first, RawRecord) and first.value == {"i": 0}
