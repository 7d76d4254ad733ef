"""What the model lists need from each GGUF header — its weight type, tokenizer, vocabulary size
and a digest of its first tokens — read once per file and kept by path, size and modification
time: in memory, and in the cache folder (model-facts.json), so that a list of hundreds of
models (yours and other apps', store.found_models) opens without reading their headers again.

    facts = shared_facts()
    facts.get(path)               # reads the header if this file is new or changed since
    facts.get(path, read=False)   # only what is known: None for a file not read yet (GUI thread)
    facts.save()                  # after a scan: what was read is kept for the next start

Headers are read by draftlight.store.gguf_reader, within its bounds: a hostile or broken one is
remembered as its one-line reason. Safe to share between threads (one lock around the table).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from draftlight.regular_files import open_regular
from draftlight.store.errors import describe_error
from draftlight.store.gguf_info import file_type_name
from draftlight.store.gguf_reader import ARRAY, STRING, HeaderReader

FILE_NAME = "model-facts.json"
VERSION = 1
DIGEST_TOKENS = 32_768  # tokens hashed: the first ones, which models of one family share even
# where the larger ones pad their vocabulary with extra tokens at the end
WANTED = ("general.file_type", "tokenizer.ggml.model", "tokenizer.ggml.tokens")


@dataclass(frozen=True)
class ModelFacts:
    weight_type: str | None = None  # "Q4_K_M"; None when the header does not say
    tokenizer: str | None = None  # tokenizer.ggml.model: "gpt2", "llama", …
    vocab_size: int | None = None  # tokens in its list
    vocab_digest: str | None = None  # SHA-256 of the first DIGEST_TOKENS tokens' bytes
    error: str = ""  # why the header cannot be read; the rest is then None

    @property
    def readable(self) -> bool:
        return not self.error


def read_facts(path: Path) -> ModelFacts:
    """The facts of one file, reading its header up to the token list and hashing the start of
    that list (a few MB at most). Never raises for a bad file: its reason is in `error`."""
    try:
        return _read(Path(path))
    except (OSError, ValueError) as exc:  # GGUFError (with its offset), PermissionError, …
        return ModelFacts(error=describe_error(exc))


def _read(path: Path) -> ModelFacts:
    found: dict = {}
    with open_regular(path, buffering=1 << 16) as stream:  # a FIFO is refused, not waited on
        reader = HeaderReader(stream, path)
        _, _, n_kv = reader.start()
        for _ in range(n_kv):
            key, value_type = reader.key()
            if key == "tokenizer.ggml.tokens" and value_type == ARRAY:
                found[key] = _token_digest(reader, stream)
            else:
                value = reader.value(value_type, key=key)
                if key in WANTED:
                    found[key] = value
            if found.keys() >= set(WANTED):
                break
    file_type = found.get("general.file_type")
    tokenizer = found.get("tokenizer.ggml.model")
    size, digest = found.get("tokenizer.ggml.tokens", (None, None))
    return ModelFacts(file_type_name(file_type) if isinstance(file_type, int) else None,
                      tokenizer if isinstance(tokenizer, str) else None, size, digest)


def _token_digest(reader: HeaderReader, stream) -> tuple[int, str | None]:
    """(token count, digest of the first DIGEST_TOKENS tokens), the reader left after the
    list: the bounded reader skips those tokens (checking every length), the bytes it skipped
    are read back and hashed, then it skips the rest."""
    at = reader.offset
    item_type, length = reader.scalar("<I"), reader.scalar("<Q")
    if item_type != STRING:  # not a list of strings: no digest
        reader.offset = at
        reader.stream.seek(at)
        reader.array(depth=1)
        return length, None
    reader.within(at, length * 8, f"an array of {length:,} strings")
    reader.visit(at, length, "strings in one array")
    start = reader.offset
    hashed = min(length, DIGEST_TOKENS)
    reader.skip_strings(hashed)  # bounded, as every read of a header is
    end = reader.offset
    stream.seek(start)
    digest = hashlib.sha256()
    left = end - start
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        digest.update(chunk)
        left -= len(chunk)
    stream.seek(end)
    reader.skip_strings(length - hashed)
    return length, digest.hexdigest()


class FactsCache:
    """ModelFacts by file, valid while the file's size and modification time stay the same."""

    def __init__(self, file: Path | None = None) -> None:
        self.file = file
        self._lock = threading.Lock()
        self._table: dict[str, dict] = {}
        self._dirty = False
        if file is not None:
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("version") == VERSION and isinstance(
                        data.get("files"), dict):
                    self._table = data["files"]
            except (OSError, ValueError):  # none yet, or damaged: read the headers again
                pass

    def get(self, path: str | Path, *, read: bool = True) -> ModelFacts | None:
        """The facts of `path`; None when it cannot be stat()ed, or when `read` is False and
        they are not known for the file as it is now."""
        key = str(path)
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = [stat.st_size, stat.st_mtime_ns]
        with self._lock:
            entry = self._table.get(key)
        if entry is not None and entry.get("stamp") == stamp:
            try:
                return ModelFacts(**entry["facts"])
            except (TypeError, KeyError):
                pass  # written by another version: read it again
        if not read:
            return None
        facts = read_facts(Path(path))
        with self._lock:
            self._table[key] = {"stamp": stamp, "facts": asdict(facts)}
            self._dirty = True
        return facts

    def forget_missing(self, keep: set[str]) -> None:
        """Drop the files not in `keep` (deleted or no longer found)."""
        with self._lock:
            gone = [key for key in self._table if key not in keep]
            for key in gone:
                del self._table[key]
            self._dirty = self._dirty or bool(gone)

    def save(self) -> None:
        """Write what changed to the cache file (atomically); a failure only costs a re-read."""
        with self._lock:
            if self.file is None or not self._dirty:
                return
            data = json.dumps({"version": VERSION, "files": self._table})
            self._dirty = False
        temp = None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.file.parent, prefix=".model-facts-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(temp, self.file)
        except OSError:
            if temp is not None:
                Path(temp).unlink(missing_ok=True)


_shared: FactsCache | None = None
_shared_lock = threading.Lock()


def shared_facts() -> FactsCache:
    """This process's cache, over the cache folder's file (another file for another
    DRAFTLIGHT_HOME, as each test has)."""
    global _shared
    from draftlight.paths import cache_dir
    file = cache_dir() / FILE_NAME
    with _shared_lock:
        if _shared is None or _shared.file != file:
            _shared = FactsCache(file)
        return _shared
