"""Other apps' model stores, built for real in a test's folder (store/found_models.py reads
them): a model as `ollama pull` leaves it, a manifest naming a sha256 blob."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.support.hub_server import synthetic_gguf

OLLAMA_MODEL = "application/vnd.ollama.image.model"


def ollama_pull(root: Path, name: str, tag: str, *, namespace: str = "library",
                data: bytes | None = None, size: int = 1 << 12, vocab: int = 1000,
                projector: bool = False) -> Path:
    """Ollama's layout under `root` for model `name:tag`: the GGUF blob (`data`, else a
    synthetic GGUF of `size` bytes and `vocab` tokens, one blob per model) and its manifest,
    whose other layer (the template) has no blob, as Ollama's do. The blob's path."""
    if data is None:
        data = synthetic_gguf(size, vocab=vocab) + f"{namespace}/{name}:{tag}".encode()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    blob = root / "blobs" / digest.replace(":", "-")
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    layers = [{"mediaType": "application/vnd.ollama.image.projector" if projector
               else OLLAMA_MODEL, "digest": digest, "size": len(data)},
              {"mediaType": "application/vnd.ollama.image.template",
               "digest": "sha256:" + "1" * 64, "size": 10}]
    manifest = root / "manifests" / "registry.ollama.ai" / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "config": {
        "mediaType": "application/vnd.docker.container.image.v1+json",
        "digest": "sha256:" + "0" * 64}, "layers": layers}))
    return blob
