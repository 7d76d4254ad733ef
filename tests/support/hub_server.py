"""A loopback Hugging Face hub: just enough of the real API for huggingface_hub and our downloads.

    hub = FakeHub(); hub.add_repo("org/Model-GGUF", {"model-Q4_K_M.gguf": data}); hub.start()
    ... HfApi(endpoint=hub.url) ...
    hub.stop()

Serves HEAD|GET /{repo}/resolve/{rev}/{file} (X-Repo-Commit, ETag = sha256 as the hub does for
LFS files, Content-Length, Range -> 206 + Content-Range, never X-Xet-Hash), GET /api/models,
/api/models/{repo}, /api/models/{repo}/tree/{rev}; errors with X-Error-Code as the hub sends them.
GET /api/models takes what HfApi.list_models sends: search, filter (a tag), sort (downloads,
likes, lastModified, createdAt; most first), limit and expand (only the fields asked for, as the
hub answers: author, downloads, likes, lastModified, gated, tags, cardData with the licence, gguf
with the parameter count).
Test knobs: `requests` (what was asked, Range and bytes sent), `drop_after` (close the connection
after N body bytes, once), `wrong_sha` (advertise a sha256 that does not match), `gated`,
`redirects`, `delay_per_chunk`.

`python -m tests.support.hub_server [PORT [SECONDS_PER_64KB]]` serves a demo repo by hand.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

CHUNK = 64 * 1024


def deterministic_bytes(size: int, *, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)


def synthetic_gguf(size: int, *, seed: int = 0, arch: str = "llama", vocab: int = 1000,
                   file_type: int = 15, token_prefix: str = "t") -> bytes:
    """A valid GGUF v3 of about `size` bytes: a real header (tokens `token_prefix` + number),
    one F32 tensor of random bytes."""
    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    def kv(key: str, value_type: int, payload: bytes) -> bytes:
        return string(key) + struct.pack("<I", value_type) + payload

    tokens = b"".join(string(f"{token_prefix}{i}") for i in range(vocab))
    kvs = [kv("general.architecture", 8, string(arch)), kv("general.name", 8, string("Synthetic")),
           kv("general.file_type", 4, struct.pack("<I", file_type)),
           kv(f"{arch}.context_length", 4, struct.pack("<I", 2048)),
           kv(f"{arch}.block_count", 4, struct.pack("<I", 4)),
           kv(f"{arch}.embedding_length", 4, struct.pack("<I", 64)),
           kv(f"{arch}.attention.head_count", 4, struct.pack("<I", 4)),
           kv("tokenizer.ggml.model", 8, string("gpt2")),
           kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, vocab) + tokens),
           kv("tokenizer.chat_template", 8, string("{{ messages }}"))]
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs)) + b"".join(kvs)
    tensor_info_len = len(string("blob")) + struct.calcsize("<IQIQ")
    start = len(header) + tensor_info_len
    start += -start % 32  # tensor data is aligned to 32 bytes
    data_len = max(size - start, 4)  # exactly `size` bytes when size allows
    header += string("blob") + struct.pack("<IQIQ", 1, data_len // 4, 0, 0)
    header += b"\0" * (start - len(header))
    return header + deterministic_bytes(data_len, seed=seed)


@dataclass
class FakeRepo:
    repo_id: str
    files: dict[str, bytes]
    gated: bool = False
    commit: str = ""
    downloads: int = 0
    likes: int = 0
    last_modified: str = "2026-01-01T00:00:00.000Z"
    licence: str | None = None
    parameters: int | None = None  # the hub's gguf.total
    architecture: str | None = None
    tags: list[str] = field(default_factory=lambda: ["gguf"])
    sizes: dict[str, int] = field(default_factory=dict)  # listed sizes of files kept short here

    def __post_init__(self) -> None:
        if not self.commit:
            self.commit = hashlib.sha1(self.repo_id.encode()).hexdigest()

    def listed_size(self, name: str) -> int:
        return self.sizes.get(name, len(self.files[name]))

    def search_row(self) -> dict:
        """Every field a search can expand, as the hub names them."""
        row = {"id": self.repo_id, "modelId": self.repo_id, "author": self.repo_id.split("/")[0],
               "downloads": self.downloads, "likes": self.likes,
               "lastModified": self.last_modified, "createdAt": self.last_modified,
               "gated": "auto" if self.gated else False,
               "tags": self.tags + ([f"license:{self.licence}"] if self.licence else [])}
        if self.licence:
            row["cardData"] = {"license": self.licence}
        if self.parameters:
            row["gguf"] = {"total": self.parameters, "architecture": self.architecture}
        return row


@dataclass
class RequestRecord:
    method: str
    path: str
    range_start: int | None = None
    body_bytes: int = 0  # bytes of body actually written to the socket
    authorization: str | None = None
    query: dict = field(default_factory=dict)  # the query string, each key -> list of values


@dataclass
class FakeHub:
    repos: dict[str, FakeRepo] = field(default_factory=dict)
    requests: list[RequestRecord] = field(default_factory=list)
    drop_after: dict[str, int] = field(default_factory=dict)  # file name -> bytes, then drop once
    wrong_sha: set[str] = field(default_factory=set)  # file names advertised with a wrong sha256
    redirects: dict[str, str] = field(default_factory=dict)  # file name -> Location for GET
    valid_tokens: set[str] = field(default_factory=set)  # tokens that may read gated repos
    delay_per_chunk: float = 0.0

    def add_repo(self, repo_id: str, files: dict[str, bytes], **kwargs) -> FakeRepo:
        repo = FakeRepo(repo_id, files, **kwargs)
        self.repos[repo_id] = repo
        return repo

    def start(self, port: int = 0) -> "FakeHub":
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def file_requests(self, file_name: str, method: str = "GET") -> list[RequestRecord]:
        return [r for r in self.requests if r.method == method and r.path.endswith("/" + file_name)]

    def search_requests(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.method == "GET" and r.path == "/api/models"]

    def bytes_sent(self, file_name: str) -> int:
        return sum(r.body_bytes for r in self.file_requests(file_name))

    def sha256_for(self, file_name: str, data: bytes) -> str:
        if file_name in self.wrong_sha:
            return hashlib.sha256(data + b"tampered").hexdigest()
        return hashlib.sha256(data).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    fake: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_HEAD(self) -> None:
        self._route(head=True)

    def do_GET(self) -> None:
        self._route(head=False)

    def _route(self, *, head: bool) -> None:
        url = urlsplit(self.path)
        path, query = unquote(url.path), parse_qs(url.query)
        record = RequestRecord(self.command, path, authorization=self.headers.get("Authorization"),
                               query=query)
        self.fake.requests.append(record)
        if path == "/":
            return self._send(200, b"", head=head)
        if path == "/api/models":
            return self._search(query, head)
        match = re.fullmatch(r"/api/models/([^/]+/[^/]+?)(?:/revision/([^/]+))?", path)
        if match:
            return self._model_info(match.group(1), head)
        match = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)(?:/.*)?", path)
        if match:
            return self._tree(match.group(1), match.group(2), head)
        match = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if match:
            return self._resolve(*match.groups(), head=head, record=record)
        self._error(404, "EntryNotFound", "no such route", head)

    def _repo_or_error(self, repo_id: str, head: bool) -> FakeRepo | None:
        repo = self.fake.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found", head)
            return None
        if repo.gated:
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            if not token:
                self._error(401, "GatedRepo", "Access to this model is restricted", head)
                return None
            if token not in self.fake.valid_tokens:
                self._error(403, "GatedRepo", "Access to this model is restricted", head)
                return None
        return repo

    def _search(self, query: dict, head: bool) -> None:
        words = (query.get("search", [""])[0]).lower()
        limit = int(query.get("limit", ["1000"])[0])
        tags = set(query.get("filter", []))
        found = [r for r in self.fake.repos.values()
                 if words in r.repo_id.lower() and tags <= set(r.tags)]
        sort = query.get("sort", ["downloads"])[0]
        keys = {"downloads": lambda r: r.downloads, "likes": lambda r: r.likes,
                "lastModified": lambda r: r.last_modified, "createdAt": lambda r: r.last_modified}
        if sort not in keys:
            return self._error(400, "BadRequest", f"unknown sort {sort}", head)
        found.sort(key=keys[sort], reverse=True)
        expand = query.get("expand")
        rows = [r.search_row() for r in found[:limit]]
        if expand:  # the hub answers with the id and exactly the fields asked for
            rows = [{k: v for k, v in row.items() if k in ("id", "modelId") or k in expand}
                    for row in rows]
        self._json(rows, head)

    def _model_info(self, repo_id: str, head: bool) -> None:
        repo = self._repo_or_error(repo_id, head)
        if repo is not None:
            self._json({"id": repo.repo_id, "sha": repo.commit, "tags": ["gguf"],
                        "siblings": [{"rfilename": name} for name in repo.files]}, head)

    def _tree(self, repo_id: str, revision: str, head: bool) -> None:
        repo = self._repo_or_error(repo_id, head)
        if repo is None:
            return
        if revision not in ("main", repo.commit):
            return self._error(404, "RevisionNotFound", "Invalid rev id", head)
        entries = [{"type": "file", "path": name, "size": repo.listed_size(name),
                    "oid": hashlib.sha1(data).hexdigest(),
                    "lfs": {"oid": self.fake.sha256_for(name, data),
                            "size": repo.listed_size(name), "pointerSize": 134}}
                   for name, data in repo.files.items()]
        self._json(entries, head)

    def _resolve(self, repo_id: str, revision: str, name: str, *, head: bool,
                 record: RequestRecord) -> None:
        repo = self._repo_or_error(repo_id, head)
        if repo is None:
            return
        if revision not in ("main", repo.commit):
            return self._error(404, "RevisionNotFound", "Invalid rev id", head)
        if name not in repo.files:
            return self._error(404, "EntryNotFound", "Entry not found", head)
        if not head and name in self.fake.redirects:
            return self._send(302, b"", head=False, headers={"Location": self.fake.redirects[name]})
        data = repo.files[name]
        headers = {"X-Repo-Commit": repo.commit, "Accept-Ranges": "bytes",
                   "ETag": f'"{self.fake.sha256_for(name, data)}"'}
        start = _range_start(self.headers.get("Range"))
        record.range_start = start
        if start is not None and start >= len(data):
            headers["Content-Range"] = f"bytes */{len(data)}"
            return self._send(416, b"", head=head, headers=headers)
        status = 200
        if start is not None:
            status = 206
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        self._send(status, data[start or 0:], head=head, headers=headers, record=record, name=name)

    def _json(self, obj, head: bool) -> None:
        self._send(200, json.dumps(obj).encode(), head=head,
                   headers={"Content-Type": "application/json"})

    def _error(self, status: int, code: str, message: str, head: bool) -> None:
        body = json.dumps({"error": message}).encode()
        self._send(status, body, head=head, headers={"X-Error-Code": code,
                                                     "X-Error-Message": message,
                                                     "Content-Type": "application/json"})

    def _send(self, status: int, body: bytes, *, head: bool, headers: dict | None = None,
              record: RequestRecord | None = None, name: str | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if head or not body:
            return
        drop_at = self.fake.drop_after.pop(name, None) if name else None
        sent = 0
        try:
            while sent < len(body):
                piece = body[sent:sent + CHUNK]
                dropping = drop_at is not None and sent + len(piece) > drop_at
                if dropping:
                    piece = piece[:drop_at - sent]
                # Count a piece before writing it: once written, the client may finish and
                # the test read the record before this thread runs another line.
                if record is not None:
                    record.body_bytes = sent + len(piece)
                self.wfile.write(piece)
                sent += len(piece)
                if dropping:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)  # the connection drops midway
                    return
                if self.fake.delay_per_chunk:
                    time.sleep(self.fake.delay_per_chunk)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            if record is not None:
                record.body_bytes = sent


def _range_start(header: str | None) -> int | None:
    match = re.fullmatch(r"bytes=(\d+)-(\d*)", header or "")
    return int(match.group(1)) if match else None


def main() -> None:
    import sys
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.02  # seconds per 64 KB: ~3 MB/s
    hub = FakeHub()
    hub.add_repo("demo/Tiny-GGUF", {"tiny-Q4_K_M.gguf": synthetic_gguf(8 << 20),
                                    "tiny-Q8_0.gguf": synthetic_gguf(12 << 20, seed=1)},
                 downloads=10)
    hub.delay_per_chunk = delay
    hub.start(port)
    print(f"fake hub at {hub.url} (repo demo/Tiny-GGUF); Ctrl-C stops", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        hub.stop()


if __name__ == "__main__":
    main()
