"""The Hugging Face hub through the real huggingface_hub client: search, list, file metadata.

Every huggingface_hub or transport error leaves this module as one StoreError subclass with a
one-line message (see `_hub_errors`); no message ever contains the token.
"""

from __future__ import annotations

import os

# Before huggingface_hub is imported: plain HTTP only (on the Xet path errors are swallowed).
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

import re  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from datetime import datetime  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import huggingface_hub  # noqa: E402
from huggingface_hub import errors as hf_errors  # noqa: E402

from draftlight.store import http_client  # noqa: E402
from draftlight.store.errors import (GatedRepoError, HubError, HubOfflineError,  # noqa: E402
                              InsecureRedirectError, RemoteFileNotFoundError, RepoNotFoundError,
                              register_secret)
from draftlight.store.model_names import (could_draft_for, family_from_name,  # noqa: E402
                                   family_search_term, format_parameters, is_projector,
                                   parameter_size_from_name, quantisation_from_name, split_part)

PUBLIC_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = "DRAFTLIGHT_HF_ENDPOINT"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_REACHABLE_FOR_S = 30.0  # after one successful probe, skip probing for this long
# `models search --sort` and the picker's sort menu -> HfApi.list_models(sort=...); most first
SORTS = {"downloads": "downloads", "likes": "likes", "updated": "last_modified"}
# What a search row shows; `expand` asks the hub for exactly these (and nothing heavier)
SEARCH_FIELDS = ["author", "downloads", "likes", "lastModified", "gated", "tags", "cardData",
                 "gguf"]


def resolve_endpoint(explicit: str | None = None) -> str:
    """--endpoint, else $DRAFTLIGHT_HF_ENDPOINT, else the public hub; without a trailing '/'.

    Raises:
        HubError: the address is not an http(s) URL.
    """
    endpoint = (explicit or os.environ.get(ENDPOINT_ENV) or PUBLIC_ENDPOINT).rstrip("/")
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HubError(f"hub address must be an http(s) URL (got {endpoint!r})")
    return endpoint


@dataclass(frozen=True)
class HubRepo:
    id: str  # "owner/name"
    downloads: int | None = None
    likes: int | None = None
    gated: bool = False
    author: str | None = None
    last_modified: datetime | None = None
    licence: str | None = None  # the model card's `license`, else a "license:" tag
    parameters: int | None = None  # from the hub's GGUF metadata, where it has read one
    architecture: str | None = None  # likewise, e.g. "qwen2"

    @property
    def publisher(self) -> str:
        return self.author or self.id.split("/")[0]

    @property
    def name(self) -> str:
        return self.id.split("/")[-1]

    @property
    def family(self) -> str | None:
        """The tokenizer family the name tells, else the architecture the hub read."""
        return family_from_name(self.id) or self.architecture

    @property
    def parameter_label(self) -> str | None:
        """'7.6B' from the hub's count, else '7B' from the name; None when neither tells."""
        if self.parameters:
            return format_parameters(self.parameters)
        size = parameter_size_from_name(self.id)  # as the name writes it: 0.5B, 270M
        if not size:
            return None
        return f"{size:g}B" if size >= 0.5 else f"{size * 1000:g}M"


@dataclass(frozen=True)
class HubFile:
    repo_id: str
    path: str  # path in the repo
    size: int | None
    sha256: str | None  # the LFS sha256, where the hub gives one
    quant: str | None  # parsed from the name
    split: tuple[int, int] | None = None  # (part, of) for models split across files

    @property
    def is_single_model(self) -> bool:
        return self.split is None and not is_projector(self.path)


@dataclass(frozen=True)
class RemoteFile:
    """What a HEAD on the file's resolve address says: where to GET it, its size and hash."""
    repo_id: str
    filename: str
    revision: str
    url: str  # the address to GET (after the hub's own redirects)
    size: int | None
    etag: str | None
    commit: str | None
    sha256: str | None  # the LFS etag is the sha256 of the content


class HubClient:
    """One hub address and an optional token (from settings, else HF_TOKEN / `hf auth login`)."""

    def __init__(self, endpoint: str | None = None, *, token: str | None = None) -> None:
        self.endpoint = resolve_endpoint(endpoint)
        self._token = token or huggingface_hub.get_token() or None
        register_secret(self._token)
        self._api = huggingface_hub.HfApi(endpoint=self.endpoint, token=self._token or False)
        self._reachable_until = 0.0

    def __repr__(self) -> str:
        return f"HubClient({self.endpoint!r}, token={'***' if self._token else None})"

    @property
    def auth_header(self) -> str | None:
        return f"Bearer {self._token}" if self._token else None

    def search(self, query: str, *, sort: str = "downloads", limit: int = 30) -> list[HubRepo]:
        """GGUF repositories matching `query`, by `sort` (a key of SORTS), most first.

        Raises:
            HubOfflineError, HubError; ValueError for an unknown sort.
        """
        if sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)} (got {sort!r})")
        with _hub_errors(self, None):
            self.check_reachable()
            found = self._api.list_models(search=query or None, filter="gguf", sort=SORTS[sort],
                                          limit=limit, expand=SEARCH_FIELDS)
            return [_repo_from(m) for m in found]

    def list_files(self, repo_id: str, *, revision: str = "main") -> list[HubFile]:
        """The .gguf files of a repository with size, sha256 and quantisation.

        Raises:
            HubOfflineError, RepoNotFoundError, GatedRepoError, RemoteFileNotFoundError, HubError.
        """
        with _hub_errors(self, repo_id, revision=revision):
            self.check_reachable()
            entries = self._api.list_repo_tree(repo_id, recursive=True, revision=revision)
            files = []
            for entry in entries:
                if not isinstance(entry, huggingface_hub.hf_api.RepoFile):
                    continue
                if not entry.path.lower().endswith(".gguf"):
                    continue
                sha = entry.lfs.sha256 if entry.lfs is not None else None
                files.append(HubFile(repo_id, entry.path, entry.size, sha,
                                     quantisation_from_name(entry.path), split_part(entry.path)))
            return sorted(files, key=lambda f: (f.size or 0, f.path))

    def file_metadata(self, repo_id: str, filename: str, *, revision: str = "main") -> RemoteFile:
        """HEAD the file: its final address, size, etag and commit.

        Raises:
            HubOfflineError, RepoNotFoundError, GatedRepoError, RemoteFileNotFoundError,
            InsecureRedirectError (the hub sent an https address to http), HubError.
        """
        with _hub_errors(self, repo_id, filename=filename, revision=revision):
            url = huggingface_hub.hf_hub_url(repo_id, filename, revision=revision,
                                             endpoint=self.endpoint)
            meta = huggingface_hub.get_hf_file_metadata(url, token=self._token or False,
                                                        endpoint=self.endpoint)
        location = meta.location or url
        http_client.check_redirect(url, location)
        etag = (meta.etag or "").strip('"').lower() or None
        return RemoteFile(repo_id, filename, revision, location, meta.size, etag,
                          meta.commit_hash, etag if etag and _SHA256.match(etag) else None)

    def drafts_for(self, target_name: str, *, limit: int = 40) -> list[HubRepo]:
        """Hub repositories that look like smaller models of the target's family (a name guess).

        Raises:
            HubOfflineError, HubError.
        """
        term = family_search_term(target_name)
        if term is None:
            return []
        return [repo for repo in self.search(term, limit=limit)
                if could_draft_for(target_name, repo.id)]

    def check_reachable(self) -> None:
        """Fail fast with one message when the hub cannot be reached.

        huggingface_hub retries connection errors with back-off (about 20 s); one quick HEAD
        first turns "offline" into an immediate answer.

        Raises:
            HubOfflineError.
        """
        if time.monotonic() < self._reachable_until:
            return
        try:
            http_client.client().head(self.endpoint + "/", timeout=5.0)
        except http_client.TRANSPORT_ERRORS as exc:
            raise _offline(self, exc) from None
        self._reachable_until = time.monotonic() + _REACHABLE_FOR_S


def _repo_from(info) -> HubRepo:
    """A search row from huggingface_hub's ModelInfo (None where the hub leaves a field out)."""
    card = info.card_data.to_dict() if info.card_data is not None else {}
    licence = card.get("license") or next(
        (t.removeprefix("license:") for t in info.tags or () if t.startswith("license:")), None)
    gguf = info.gguf if isinstance(info.gguf, dict) else {}
    total = gguf.get("total")
    return HubRepo(info.id, info.downloads, info.likes, bool(info.gated), info.author,
                   info.last_modified, licence if isinstance(licence, str) else None,
                   total if isinstance(total, int) and total > 0 else None,
                   gguf.get("architecture") if isinstance(gguf.get("architecture"), str) else None)


def _offline(hub: HubClient, exc: BaseException) -> HubOfflineError:
    host = urlsplit(hub.endpoint).netloc
    reason = type(exc).__name__
    return HubOfflineError(f"cannot reach the hub at {host} ({reason}); you may be offline. "
                           f"Bundled and local models still work")


@contextmanager
def _hub_errors(hub: HubClient, repo_id: str | None, *, filename: str | None = None,
                revision: str = "main"):
    """Turn huggingface_hub and transport errors into one-line StoreErrors."""
    try:
        yield
    except (InsecureRedirectError, HubError):
        raise
    except hf_errors.GatedRepoError:
        raise GatedRepoError(
            f"{repo_id} is gated: accept its terms at {hub.endpoint}/{repo_id}, then set a token "
            f"(HF_TOKEN or the token in settings)") from None
    except hf_errors.RepositoryNotFoundError:
        hint = "" if hub.auth_header else "; if it is private, set a token (HF_TOKEN)"
        raise RepoNotFoundError(f"no repository {repo_id} on {hub.endpoint}{hint}") from None
    except hf_errors.RevisionNotFoundError:
        raise RemoteFileNotFoundError(f"{repo_id} has no revision {revision!r}") from None
    except hf_errors.EntryNotFoundError:
        raise RemoteFileNotFoundError(f"{repo_id} has no file {filename!r}") from None
    except hf_errors.HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        where = f" for {repo_id}" if repo_id else ""
        raise HubError(f"the hub answered HTTP {status}{where}") from None
    except (hf_errors.OfflineModeIsEnabled, *http_client.TRANSPORT_ERRORS) as exc:
        raise _offline(hub, exc) from None
