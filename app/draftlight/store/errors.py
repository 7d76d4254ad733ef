"""Errors the model store raises. Each message is one line a user can act on.

They subclass OSError so `draftlight` prints them as one line and exits with status 2; none of
them ever carries a hub token (see `redact`).
"""

from __future__ import annotations

import os


class StoreError(OSError):
    """Base class: anything the store reports as one clear line."""

    def __str__(self) -> str:  # OSError's str() would show "[Errno …]" for two-argument forms
        return redact(" ".join(str(a) for a in self.args))


class CatalogError(StoreError):
    """models.toml is missing or invalid."""


class GGUFError(StoreError):
    """A file is not a GGUF, or its header is truncated or corrupt (the message says at which
    byte)."""


class NotGGUFError(GGUFError):
    """The file does not start with 'GGUF' at all (a web page, a safetensors file, …)."""


class ModelNotFoundError(StoreError):
    """No installed model has that name."""


class HubError(StoreError):
    """The hub answered with an error we could not act on."""


class HubOfflineError(HubError):
    """The hub cannot be reached (no network, DNS failure, refused connection, timeout)."""


class RepoNotFoundError(HubError):
    """The repository does not exist, or is private and the token does not give access."""


class GatedRepoError(HubError):
    """The repository is gated: its terms must be accepted on the hub and a token given."""


class RemoteFileNotFoundError(HubError):
    """The repository exists but has no such file or revision."""


class DownloadError(StoreError):
    """A download failed; nothing was installed."""


class DownloadCancelledError(DownloadError):
    """The download was cancelled; the partial file is kept so it can be resumed."""


class DownloadInterruptedError(DownloadError):
    """The connection dropped; the partial file is kept so it can be resumed."""


class ChecksumMismatchError(DownloadError):
    """The downloaded bytes do not match the published sha256; the file was deleted."""


class InsufficientSpaceError(DownloadError):
    """Not enough free disk space for the download (checked first, or ENOSPC while writing)."""


class UnsafeFileNameError(DownloadError):
    """A repository id or file name tries to escape the models folder (path traversal)."""


class InsecureRedirectError(DownloadError):
    """An https address redirected to plain http; refused rather than downgraded."""


class InsufficientMemoryError(StoreError):
    """The models would not fit in this machine's memory; refused before loading."""


_secrets: set[str] = set()


def register_secret(secret: str | None) -> None:
    """Remember a token so that `redact` removes it from every message the store produces."""
    if secret and len(secret) >= 4:
        _secrets.add(secret)


def redact(text: str) -> str:
    """`text` with every registered token (and HF_TOKEN) replaced by '***'."""
    secrets = set(_secrets)
    env_token = os.environ.get("HF_TOKEN")
    if env_token and len(env_token) >= 4:
        secrets.add(env_token)
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def describe_error(exc: BaseException) -> str:
    """A failed store call as one line for the window: the store's own message, written for
    the user, or the type and text of anything unexpected (so it can be reported)."""
    return str(exc) if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
