"""Copy a GGUF with some metadata changed (tests only): replace or remove string keys such as
tokenizer.chat_template (or set token ids), keeping every tensor byte-for-byte.

llama.cpp's own `gguf` package reads and writes the file (as its gguf_new_metadata script
does), so these fixtures do not rest on the parser in app/draftlight/store/gguf_info.py they help test.
It takes a few seconds for a 49k-token vocabulary: the reader makes an object per token.
"""

from __future__ import annotations

from pathlib import Path

import gguf

REMOVE = object()


def rewrite_gguf(source: Path, destination: Path, changes: dict[str, object]) -> Path:
    """Write `destination`: `source` with each key in `changes` set to a string, an int (as
    uint32), or REMOVEd."""
    reader = gguf.GGUFReader(source)
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    writer = gguf.GGUFWriter(destination, arch=arch, endianess=reader.endianess)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue  # the writer writes these itself
        if field.name not in changes:
            kind = field.types[0]
            item_kind = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(field.name, field.contents(), kind, sub_type=item_kind)
    for key, value in changes.items():
        if isinstance(value, int):  # a token id (tokenizer.ggml.fim_pre_token_id, ...)
            writer.add_uint32(key, value)
        elif value is not REMOVE:
            writer.add_string(key, str(value))
    for tensor in reader.tensors:
        writer.add_tensor_info(tensor.name, tensor.data.shape, tensor.data.dtype,
                               tensor.data.nbytes, tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        writer.write_tensor_data(tensor.data, tensor_endianess=reader.endianess)
    writer.close()
    return destination
