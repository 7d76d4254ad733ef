"""A scripted model for exact, fast tests of the speculative logic (no llama.cpp)."""

from __future__ import annotations

import hashlib
from typing import Callable, Sequence

import numpy as np

LogitsFn = Callable[[tuple[int, ...]], np.ndarray]


def stable_seed(*parts: int | str) -> int:
    """A 32-bit seed from ints and strings that is the same in every process. Python's own
    hash() of a str is salted per process (PYTHONHASHSEED), so seeding from it made each
    scripted model a different model from one run of the suite to the next."""
    text = repr(tuple(p if isinstance(p, str) else int(p) for p in parts))  # np.int64 -> int
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little")


class FakeBackend:
    """Logits are a pure function of the prefix; the 'KV cache' is the token list.

    `evaluated` counts every token evaluated, to check that nothing is recomputed.
    """

    def __init__(self, n_vocab: int, logits_fn: LogitsFn) -> None:
        self.n_vocab = n_vocab
        self.logits_fn = logits_fn
        self._tokens: list[int] = []
        self.evaluated = 0
        self.passes = 0

    @property
    def tokens(self) -> list[int]:
        return list(self._tokens)

    @property
    def token_view(self) -> Sequence[int]:
        return self._tokens

    def eval(self, tokens: Sequence[int], n_logits: int = 1) -> np.ndarray:
        rows = []
        self.passes += 1
        for i, token in enumerate(tokens):
            self._tokens.append(int(token))
            self.evaluated += 1
            if i >= len(tokens) - n_logits:
                rows.append(np.asarray(self.logits_fn(tuple(self._tokens)), dtype=np.float32))
        return np.stack(rows) if rows else np.empty((0, self.n_vocab), np.float32)

    def truncate(self, n: int) -> None:
        del self._tokens[n:]

    def checkpoint(self, span: int = 0) -> None:
        pass  # a list of tokens can be cut anywhere


def hashed_logits(n_vocab: int, salt: int = 0) -> LogitsFn:
    """Deterministic pseudo-random logits for each prefix."""

    def fn(prefix: tuple[int, ...]) -> np.ndarray:
        seed = stable_seed(salt, *prefix[-6:], len(prefix))
        return np.random.default_rng(seed).normal(size=n_vocab) * 3

    return fn


def markov_logits(n_vocab: int, order: int = 2, salt: int = 0) -> LogitsFn:
    """Pseudo-random logits that depend only on the last `order` tokens: greedy decoding soon
    falls into a cycle, which n-gram lookup can then copy."""

    def fn(prefix: tuple[int, ...]) -> np.ndarray:
        seed = stable_seed(salt, "markov", *prefix[-order:])
        return np.random.default_rng(seed).normal(size=n_vocab) * 3

    return fn


def constant_logits(probs: Sequence[float]) -> LogitsFn:
    """The same next-token distribution after every prefix."""
    logits = np.log(np.asarray(probs, dtype=np.float64))
    return lambda prefix: logits


# --- a whole chat model: byte tokens, a chat template, a scripted reply ------------------------

BOS, EOS, N_BYTES = 256, 257, 256
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{{ eos_token }}"
                 "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
ASSISTANT = b"<|assistant|>"


class FakeChatModel(FakeBackend):
    """A LanguageModel (app/draftlight/engine/core/backend.py) without llama.cpp: one token per byte, BOS and
    EOS specials, a ChatML-like template. `reply(prefix_bytes)` says what the model answers
    after the last assistant header; the logits put `confidence` on its next byte (then EOS),
    plus deterministic noise of size `noise` so that sampling has something to choose from.

    Like K-quant weights on llama.cpp's CPU backend, a pass over several tokens can give other
    logits than one token at a time: `batch_drift` adds up to that much to each batched row.
    Every `rival_every`-th byte of the reply has a rival byte `rival_gap` below it: a near-tie
    that such a drift can flip. Another `template` (a real model's) names its own assistant
    `header`, after which the reply is written."""

    vocab_type = 2

    def __init__(self, reply, *, n_ctx: int = 4096, confidence: float = 12.0,
                 noise: float = 0.0, batch_drift: float = 0.0, rival_every: int = 0,
                 rival_gap: float = 0.05, template: str = CHAT_TEMPLATE,
                 header: bytes = ASSISTANT) -> None:
        super().__init__(N_BYTES + 2, self._logits)
        self.reply, self.n_ctx = reply, n_ctx
        self.template, self.header = template, header
        self.confidence, self.noise = confidence, noise
        self.batch_drift, self.rival_every, self.rival_gap = batch_drift, rival_every, rival_gap
        self.closed = False

    def _logits(self, prefix: tuple[int, ...]) -> np.ndarray:
        data = bytes(t for t in prefix if t < N_BYTES)
        header = data.rfind(self.header)
        answer = self.reply(data[:header]) if header >= 0 else b""
        written = data[header + len(self.header):] if header >= 0 else b""
        # After the header, the model says `answer`; once written (or off script), EOS.
        on_script = answer.startswith(written) and len(written) < len(answer)
        target = answer[len(written)] if on_script else EOS
        logits = np.zeros(self.n_vocab)
        if self.noise:
            seed = stable_seed("noise", *prefix[-4:], len(prefix))
            logits += np.random.default_rng(seed).normal(size=self.n_vocab) * self.noise
        logits[target] += self.confidence
        if self.rival_every and on_script and len(written) % self.rival_every == 0:
            logits[(target + 1) % N_BYTES] += self.confidence - self.rival_gap
        return logits

    def eval(self, tokens, n_logits=1):
        if len(self._tokens) + len(tokens) > self.n_ctx:
            raise RuntimeError("context window is full")
        rows = super().eval(tokens, n_logits)
        if self.batch_drift and len(tokens) > 1:
            for j in range(len(rows)):
                seed = stable_seed("batch", len(self._tokens) - len(rows) + j)
                rows[j] += np.random.default_rng(seed).uniform(
                    -self.batch_drift, self.batch_drift, self.n_vocab).astype(np.float32)
        return rows

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        out = [BOS] if add_bos else []
        marker = b"</s>"
        while data:
            if special and data.startswith(marker):
                out.append(EOS)
                data = data[len(marker):]
            else:
                out.append(data[0])
                data = data[1:]
        return out

    def piece(self, token: int) -> bytes:
        return bytes([token]) if token < N_BYTES else b""

    def token_text(self, token: int) -> str:
        specials = {BOS: "<s>", EOS: "</s>"}
        return specials[token] if token in specials else bytes([token]).decode("latin-1")

    def is_end_of_generation(self, token: int) -> bool:
        return token == EOS

    bos, eos, add_bos = BOS, EOS, False

    def metadata(self) -> dict[str, str]:
        return {"tokenizer.chat_template": self.template}

    def close(self) -> None:
        self.closed = True


def scripted_costs(model, probe, role):
    """Auto mode's cost curve without timing anything: a GPU-like flat one (drafting pays)."""
    from draftlight.engine.auto.costs import BatchCosts
    curve = BatchCosts({1: 1.0, 2: 1.05, 4: 1.1, 8: 1.2, 16: 1.5}, 0.01)
    return curve, (0.002 if role == "draft" else 0.01)


def busy_costs(model, probe, role):
    """A busy CPU's cost curve: a pass over k tokens costs about k one-token passes (v(2) 2.6),
    so no draft can pay."""
    from draftlight.engine.auto.costs import BatchCosts
    return BatchCosts({1: 1.0, 2: 2.6, 4: 5.2, 8: 10.4, 16: 20.8}, 0.015), 0.01


class FakeWordChatModel(FakeChatModel):
    """A chat model like FakeChatModel whose vocabulary is another tokenisation of the same
    bytes: the `words` first (ids 0..), then the 256 single bytes, then BOS and EOS, so no id
    means what it means to FakeChatModel. Text is tokenised longest word first; the model
    answers `reply` in that tokenisation (the first token of the rest of the answer). A word
    may end inside a UTF-8 character ("caf\\xc3"), as byte-level BPE tokens do."""

    vocab_type = 1

    def __init__(self, reply, words: Sequence[bytes], **options) -> None:
        self.words = [bytes(w) for w in words]
        self.table = self.words + [bytes([b]) for b in range(N_BYTES)]
        self.bos, self.eos = len(self.table), len(self.table) + 1
        super().__init__(reply, **options)
        self.n_vocab = len(self.table) + 2
        self._by_length = sorted(set(self.table), key=len, reverse=True)
        self._id = {piece: i for i, piece in reversed(list(enumerate(self.table)))}

    def _encode(self, data: bytes) -> list[int]:
        out = []
        while data:
            piece = next(p for p in self._by_length if data.startswith(p))
            out.append(self._id[piece])
            data = data[len(piece):]
        return out

    def _logits(self, prefix: tuple[int, ...]) -> np.ndarray:
        data = b"".join(self.piece(t) for t in prefix)
        header = data.rfind(ASSISTANT)
        answer = self.reply(data[:header]) if header >= 0 else b""
        written = data[header + len(ASSISTANT):] if header >= 0 else b""
        on_script = answer.startswith(written) and len(written) < len(answer)
        target = self._encode(answer[len(written):])[0] if on_script else self.eos
        logits = np.zeros(self.n_vocab)
        if self.noise:
            seed = stable_seed("noise", *prefix[-4:], len(prefix))
            logits += np.random.default_rng(seed).normal(size=self.n_vocab) * self.noise
        logits[target] += self.confidence
        return logits

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        out = [self.bos] if add_bos else []
        marker = b"</s>"
        while data:
            cut = data.find(marker) if special else -1
            chunk = data if cut < 0 else data[:cut]
            out += self._encode(chunk)
            data = b"" if cut < 0 else data[cut + len(marker):]
            if cut >= 0:
                out.append(self.eos)
        return out

    def piece(self, token: int) -> bytes:
        return self.table[token] if token < len(self.table) else b""

    def token_text(self, token: int) -> str:
        specials = {self.bos: "<s>", self.eos: "</s>"}
        return specials[token] if token in specials else self.piece(token).decode("latin-1")

    def is_end_of_generation(self, token: int) -> bool:
        return token == self.eos


# A draft's words for FakeWordChatModel (the cross-vocabulary tests): common English pieces,
# and two that split "é" (C3 A9) between them.
WORDS = [b"The", b" quick", b" brown", b" fox", b" jumps", b" over", b" the", b" lazy",
         b" dog", b"You", b" said", b": ", b"caf\xc3", b"\xa9 au", b" lait", b" Un", b"ab",
         b" ab", b"er", b"re", b"th", b"he", b" s", b"in", b"on", b"\xf0\x9f"]
