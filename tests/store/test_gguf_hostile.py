"""Hostile GGUF headers (tests/support/hostile_gguf.py) through every reader of headers in the
store: each is one GGUFError that names the file and a byte offset, found without reading more
than the header; a header cut short anywhere is one too."""

from __future__ import annotations

import re
import struct
import tracemalloc

import pytest

from draftlight.store.errors import GGUFError
from draftlight.store.gguf_info import (header_values, has_mtp, read_gguf_info, vocabulary_of,
                                        weight_type_of)
from draftlight.store.memory import MemoryInfo, check_models_fit
from tests.support.hostile_gguf import (ARRAY, PAST_THE_KEYS, STRING, U8, assert_names_an_offset_in,
                                        good_kvs, gguf_bytes, header_end, hostile_files, kv,
                                        nested_arrays, string, write_hostile)

GiB = 1 << 30
READERS = {
    "read_gguf_info": read_gguf_info,
    "header_values": lambda path: header_values(path, {"general.file_type"}),
    "vocabulary_of": vocabulary_of,
    "has_mtp": has_mtp,
    "weight_type_of": weight_type_of,
    "check_models_fit": lambda path: check_models_fit(path, memory=MemoryInfo(64 * GiB, 64 * GiB)),
}
# These read the whole header; the others stop at the keys they want.
WHOLE_HEADER = {"read_gguf_info", "check_models_fit"}
CASES = [(reader, name) for reader in READERS for name in sorted(hostile_files())
         if reader in WHOLE_HEADER or name not in PAST_THE_KEYS]


@pytest.mark.parametrize("reader, name", CASES)
def test_every_reader_gives_one_gguf_error_with_the_offset(tmp_path, reader, name):
    path = write_hostile(tmp_path, name)
    with pytest.raises(GGUFError, match=rf"^{name}\.gguf: ") as raised:
        READERS[reader](path)
    assert_names_an_offset_in(str(raised.value), hostile_files()[name])



@pytest.mark.parametrize("reader", READERS)
def test_the_corpus_is_hostile_only_where_it_says(tmp_path, reader):
    """Negative control: the same header without the hostile part, and arrays nested three
    deep (within the bound), read without error."""
    for name, kvs in {"good": good_kvs(),
                      "three-deep": [kv("x.nested", ARRAY, nested_arrays(3))] + good_kvs()}.items():
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(gguf_bytes(kvs))
        READERS[reader](path)
    assert read_gguf_info(path).context_length == 2048


def test_an_oversized_scalar_array_is_skipped_not_read(tmp_path):
    """An array claiming one byte more than the file holds, in a 256 MiB (sparse) file: refused
    from its length, with the file left unread (the reader's memory stays small)."""
    size = 256 << 20
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + string("x.ids") + struct.pack("<I", ARRAY)
    array_start = len(head) + 12  # after the item type and the length
    path = tmp_path / "big.gguf"
    with open(path, "wb") as stream:
        stream.write(head + struct.pack("<IQ", U8, size - array_start + 1))
        stream.truncate(size)
    tracemalloc.start()
    try:
        with pytest.raises(GGUFError) as raised:
            read_gguf_info(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak:,} bytes allocated to refuse a {size:,}-byte file"
    assert f"at byte {array_start - 12:,}" in str(raised.value)




def assert_cut_is_refused(path, data: bytes, cut: int) -> None:
    path.write_bytes(data[:cut])
    with pytest.raises(GGUFError) as raised:
        read_gguf_info(path)
    text = str(raised.value)
    if cut < 4:
        assert "not a GGUF file" in text, (cut, text)
        return
    found = re.search(r"truncated or corrupt at byte ([\d,]+): .* past the end of the file "
                      r"\(byte ([\d,]+)\)$", text)
    assert found, (cut, text)
    at, ends = (int(g.replace(",", "")) for g in found.groups())
    assert at <= cut == ends, (cut, text)


def test_a_synthetic_header_cut_at_every_byte(tmp_path):
    data = gguf_bytes(good_kvs())
    for cut in range(header_end(data)):
        assert_cut_is_refused(tmp_path / "cut.gguf", data, cut)


def test_the_bundled_header_cut_at_many_points(tmp_path, bundled_model):
    with open(bundled_model, "rb") as stream:
        data = stream.read(16 << 20)  # its header is about 1.7 MB
    end = header_end(data)
    # every byte of the fixed part and the first keys, then 41 points through the vocabulary
    points = sorted(set(range(1024)) | set(range(0, end, end // 41)) | {end - 1})
    for cut in points:
        assert_cut_is_refused(tmp_path / "cut.gguf", data, cut)


def test_strings_past_the_visit_bound_are_refused(tmp_path, monkeypatch):
    """A file of many empty strings fits its size bound; the visit bound stops it (lowered
    here from 16M, so that the file is small)."""
    from draftlight.store import gguf_reader
    monkeypatch.setattr(gguf_reader, "MAX_VISITS", 1000)
    # 995 strings, with the 8 pairs, 1 tensor and 10 tokens the rest of the header holds
    words = kv("x.words", ARRAY, struct.pack("<IQ", STRING, 995) + string("") * 995)
    path = tmp_path / "words.gguf"
    path.write_bytes(gguf_bytes([words] + good_kvs()))
    with pytest.raises(GGUFError, match=r"at byte 43: 995 strings or arrays in one array: more "
                                        r"than this reader visits \(1,000 in all\)"):
        read_gguf_info(path)
    path.write_bytes(gguf_bytes([kv("x.words", ARRAY, struct.pack("<IQ", STRING, 900)
                                    + string("") * 900)] + good_kvs()))
    assert read_gguf_info(path).vocab_size == 10  # within the bound: read


def distinct_keys(count: int) -> list[bytes]:
    return [kv(f"x.key{i}", U8, b"\1") for i in range(count)] + good_kvs()


def test_a_header_of_many_distinct_keys_is_refused_at_its_count(tmp_path):
    """Each key is real and distinct, so only a bound on their number stops the walk (a file of
    millions cost `models list` 36 s and 498 MB on every run); the bound (65,536 pairs) is
    named, and a header just within it still reads."""
    path = tmp_path / "keys.gguf"
    path.write_bytes(gguf_bytes(distinct_keys(100_000)))
    with pytest.raises(GGUFError, match=r"^keys\.gguf: corrupt GGUF header at byte 16: 100,008 "
                                        r"key/value pairs: more than 65,536"):
        read_gguf_info(path)
    path.write_bytes(gguf_bytes(distinct_keys(65_536 - len(good_kvs()))))
    assert read_gguf_info(path).context_length == 2048
