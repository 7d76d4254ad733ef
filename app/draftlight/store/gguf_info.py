"""What a GGUF file says about itself, read from its header without loading any weights.

The header is read by draftlight.store.gguf_reader, which trusts no length, count or nesting
in it (its docstring lists the bounds): a hostile or broken header is one GGUFError that
names the byte offset, whichever of these functions reads it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from math import prod
from pathlib import Path

from draftlight.regular_files import open_regular
from draftlight.store import header_cache
from draftlight.store.errors import GGUFError
from draftlight.store.gguf_reader import GGUF_MAGIC, ArrayValue, HeaderReader

__all__ = ["GGUF_MAGIC", "ArrayValue", "GGUFInfo", "file_type_name", "has_mtp", "header_values",
           "read_gguf_info", "vocabulary_of", "weight_type_of"]


@dataclass(frozen=True)
class GGUFInfo:
    path: Path
    file_size: int
    version: int
    architecture: str  # general.architecture, e.g. "llama", "qwen2", "gemma3"
    name: str | None  # general.name
    parameter_count: int  # from general.parameter_count, else summed tensor shapes
    quantisation: str | None  # from general.file_type, e.g. "Q4_K_M"
    context_length: int | None  # the context the model was trained for
    vocab_size: int | None
    vocab_type: str | None  # tokenizer.ggml.model: "gpt2" (BPE), "llama" (SentencePiece), …
    chat_template: str | None  # untrusted text: render only in a sandbox
    block_count: int | None  # layers
    embedding_length: int | None
    head_count: int | None
    head_count_kv: int | None
    key_length: int | None  # per-head size of K; llama.cpp defaults it to embedding/heads
    value_length: int | None
    mtp_layers: int = 0  # {arch}.nextn_predict_layers: multi-token-prediction blocks (has_mtp)

    def kv_cache_bytes(self, n_ctx: int, *, key_bytes: float = 34 / 32,
                       value_bytes: float = 2) -> int | None:
        """Bytes of K and V for `n_ctx` tokens; None if the header lacks sizes.

        The defaults are the engine's cache types (load_options.LoadOptions): q8_0 keys (34
        bytes per block of 32 values) and f16 values."""
        if not (self.block_count and self.head_count and self.embedding_length):
            return None
        head_kv = self.head_count_kv or self.head_count
        k_len = self.key_length or self.embedding_length // self.head_count
        v_len = self.value_length or k_len
        return int(self.block_count * n_ctx * head_kv * (k_len * key_bytes + v_len * value_bytes))


def read_gguf_info(path: str | Path) -> GGUFInfo:
    """Read the metadata of the GGUF file at `path`, or recall it (header_cache.py: a file
    read before and unchanged since is not read again).

    Raises:
        FileNotFoundError / PermissionError: the file cannot be opened. IsADirectoryError,
            NotRegularFile (regular_files): a folder, a FIFO, a device or a socket.
        GGUFError: not a GGUF file, an unsupported version, or a truncated or corrupt header.
    """
    path = Path(path)
    key = header_cache.identity(path)
    info = _recent.get(key)
    if info is None:
        kept = header_cache.known(key)
        names = [f.name for f in dataclasses.fields(GGUFInfo)]
        if kept is not None and list(kept) == names:  # else another version's fields
            info = GGUFInfo(**{**kept, "path": path})
        else:
            info = _read_header(path)
            header_cache.remember(key, {**dataclasses.asdict(info), "path": str(path)})
        _recent[key] = info
    return info


_recent: dict[str, GGUFInfo] = {}  # read_gguf_info's, by header_cache.identity


def _read_header(path: Path) -> GGUFInfo:
    with open_regular(path, buffering=1 << 20) as stream:  # a FIFO is refused, not waited on
        reader = HeaderReader(stream, path)
        version, n_tensors, n_kv = reader.start()
        meta = {}
        for _ in range(n_kv):
            key, value_type = reader.key()
            meta[key] = reader.value(value_type, key=key)
        tensor_params = sum(prod(reader.tensor_dims()) for _ in range(n_tensors))
        header_size = reader.offset
    return _info_from(path, version, meta, tensor_params, header_size)


def weight_type_of(path: str | Path) -> str | None:
    """The file's weight type ("Q4_0", …); None if the header does not say.

    Reads only up to general.file_type, which comes before the tokenizer's large arrays: cheap
    enough for the window's model lists on the GUI thread. Same errors as header_values."""
    file_type = header_values(path, {"general.file_type"}).get("general.file_type")
    return file_type_name(file_type) if isinstance(file_type, int) else None


def header_values(path: str | Path, wanted: set[str]) -> dict:
    """The values of the `wanted` keys that the header has, reading no further than the last
    of them: arrays come back as ArrayValue (type and length), their items unread when nothing
    wanted follows. Cheap for keys ahead of the tokenizer's arrays, and for those arrays' lengths.

    Raises:
        FileNotFoundError / PermissionError: the file cannot be opened.
        GGUFError: not a GGUF file, or a truncated or corrupt header (up to the last key read)."""
    path = Path(path)
    found: dict = {}
    with open_regular(path, buffering=1 << 16) as stream:
        reader = HeaderReader(stream, path)
        _, _, n_kv = reader.start()
        for _ in range(n_kv):
            key, value_type = reader.key()
            last = key in wanted and found.keys() | {key} >= wanted
            value = reader.value(value_type, key=key, skip_items=not last)
            if key in wanted:
                found[key] = value
            if last:
                break
    return found


def vocabulary_of(path: str | Path) -> tuple[str | None, int | None]:
    """(tokenizer model, vocabulary size) from the header, without reading the tokens
    themselves: cheap enough for the GUI thread. Same errors as header_values."""
    meta = header_values(path, {"tokenizer.ggml.model", "tokenizer.ggml.tokens"})
    model, tokens = meta.get("tokenizer.ggml.model"), meta.get("tokenizer.ggml.tokens")
    return (model if isinstance(model, str) else None,
            tokens.length if isinstance(tokens, ArrayValue) else None)


def has_mtp(path: str | Path) -> int:
    """How many multi-token-prediction ("NextN") blocks the model carries for llama-server's
    --spec-type draft-mtp: its {arch}.nextn_predict_layers, 0 if the header has none. From
    read_gguf_info, which a load has usually read already. Same errors as read_gguf_info."""
    return read_gguf_info(path).mtp_layers


def file_type_name(file_type: int) -> str | None:
    """The weight type a general.file_type value stands for ("Q4_K_M"); None if unknown."""
    return _file_type_names().get(file_type)


@functools.cache
def _file_type_names() -> dict[int, str]:
    """llama.cpp's LLAMA_FTYPE values -> the names llama-quantize takes: gguf.LlamaFileType's
    without its MOSTLY_/ALL_ prefix (MOSTLY_Q4_K_M -> Q4_K_M, ALL_F32 -> F32). GUESSED means
    the file does not say. Imported on first use: the gguf package brings numpy and yaml,
    which the window's model lists do not otherwise need."""
    from gguf import LlamaFileType
    return {int(t): t.name.removeprefix("MOSTLY_").removeprefix("ALL_")
            for t in LlamaFileType if t is not LlamaFileType.GUESSED}


def _info_from(path: Path, version: int, meta: dict, tensor_params: int,
               header_size: int) -> GGUFInfo:
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        raise GGUFError(f"{path.name}: the header (bytes 0 to {header_size:,}) has no "
                        f"general.architecture")

    def number(key: str) -> int | None:
        value = meta.get(key)  # the reader let only counts (ints >= 0) and arrays through
        return value if isinstance(value, int) else None  # per-layer arrays are left out

    tokens = meta.get("tokenizer.ggml.tokens")
    vocab = tokens.length if isinstance(tokens, ArrayValue) else number(f"{arch}.vocab_size")
    template = meta.get("tokenizer.chat_template")
    file_type = number("general.file_type")
    return GGUFInfo(
        path=path, file_size=path.stat().st_size, version=version, architecture=arch,
        name=meta.get("general.name") if isinstance(meta.get("general.name"), str) else None,
        parameter_count=number("general.parameter_count") or tensor_params,
        quantisation=file_type_name(file_type) if file_type is not None else None,
        context_length=number(f"{arch}.context_length"),
        vocab_size=vocab,
        vocab_type=meta.get("tokenizer.ggml.model") if isinstance(
            meta.get("tokenizer.ggml.model"), str) else None,
        chat_template=template if isinstance(template, str) else None,
        block_count=number(f"{arch}.block_count"),
        embedding_length=number(f"{arch}.embedding_length"),
        head_count=number(f"{arch}.attention.head_count"),
        head_count_kv=number(f"{arch}.attention.head_count_kv"),
        key_length=number(f"{arch}.attention.key_length"),
        value_length=number(f"{arch}.attention.value_length"),
        mtp_layers=number(f"{arch}.nextn_predict_layers") or 0,
    )

