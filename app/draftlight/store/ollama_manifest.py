"""An Ollama manifest, read from another app's folder: each field the scan uses is checked for
type and range before it is trusted, so a manifest that lies is skipped with one line saying
why, and the others are still listed.

Ollama writes manifests/<registry>/<namespace>/<model>/<tag> as JSON: {"schemaVersion": 2,
"config": {…}, "layers": [{"mediaType": …, "digest": "sha256:<64 hex>", "size": N}, …]}; the
layer of media type OLLAMA_MODEL_LAYER is the GGUF, kept as blobs/sha256-<hex>. Its digest
becomes a file name, so it must be exactly that: a NUL in it ended `models list` in a
traceback (ValueError from stat), a "/" would name a path outside the blobs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from draftlight import bounded_json

OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
MAX_MANIFEST_BYTES = 1 << 20  # Ollama's are a few hundred bytes
# Ollama's own digests: "sha256:" and 64 lowercase hex digits, nothing else (fullmatch: no
# trailing newline; [0-9a-f], not \d: no other script's digits)
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
MAX_BLOB_BYTES = 1 << 50  # 1 PiB: any larger "size" is not a model's


@dataclass(frozen=True)
class ModelLayer:
    digest: str  # "sha256:<64 hex>", checked
    size: int | None  # the blob's bytes as the manifest says them; None when it does not

    @property
    def blob_name(self) -> str:
        return self.digest.replace(":", "-")


class BadManifest(ValueError):
    """A manifest that cannot be used; its message says why, for the skipped entry's line."""


def read_model_layer(manifest: Path) -> ModelLayer | None:
    """The model layer of the manifest at `manifest`; None for a manifest without one (Ollama
    keeps other artefacts too).

    Raises:
        BadManifest: not a regular file, over MAX_MANIFEST_BYTES, nested too deep, not JSON, or
            a field of the wrong type or out of range."""
    try:
        data = bounded_json.read(manifest, MAX_MANIFEST_BYTES)
    except bounded_json.BoundsError as exc:
        raise BadManifest(str(exc)) from None
    except UnicodeDecodeError:
        raise BadManifest("not text") from None
    except ValueError:
        raise BadManifest("not JSON") from None
    except OSError as exc:
        raise BadManifest(exc.strerror or "cannot be read") from None
    return model_layer(data)


def model_layer(data: object) -> ModelLayer | None:
    """The model layer of a manifest's parsed JSON (see read_model_layer)."""
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, list):
        raise BadManifest("not an Ollama manifest")
    found = None
    for number, layer in enumerate(layers, 1):
        if not isinstance(layer, dict):
            raise BadManifest(f"layer {number} is not an object")
        media_type = layer.get("mediaType")
        if not isinstance(media_type, str):
            raise BadManifest(f"the mediaType of layer {number} is not text")
        if media_type == OLLAMA_MODEL_LAYER and found is None:
            found = _checked(layer)
    return found


def _checked(layer: dict) -> ModelLayer:
    digest, size = layer.get("digest"), layer.get("size")
    if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
        raise BadManifest("its model layer's digest is not a sha256 "
                          "(sha256: and 64 lowercase hex digits)")
    if size is not None and (type(size) is not int or not 0 <= size <= MAX_BLOB_BYTES):
        raise BadManifest("its model layer's size is not a byte count")
    return ModelLayer(digest, size)
