"""Drafters guess the next few tokens; the target then checks them in one pass.

They share one small Protocol. A drafter may keep state (a draft model's KV cache) but must
accept any context: after a rejection the context it sees next is not an extension of its guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from draftlight.engine.core.backend import Backend, sync_cache
from draftlight.engine.step.ngram_index import Fold, NgramIndex
from draftlight.engine.core.sampling import SamplingParams, sample, softmax, to_probs


@dataclass(frozen=True)
class DraftOrigin:
    """Where a draft came from, in tokens (app/draftlight/engine/step/origins.py turns it into what a reader
    can follow: a span of a message, of the reply, of the prediction)."""
    kind: str  # "context": copied from context[start:]; "prediction": from prediction[start:];
    #            "model": guessed by the draft model
    start: int = 0
    p: tuple[float, ...] = ()  # "model": the draft's probability of each token it guessed
    text: str = ""  # "model" of another vocabulary: the text it proposed


@dataclass
class Draft:
    tokens: list[int]
    # q: the drafter's distribution for each drafted token, shape (len(tokens), n_vocab), under
    # the same transform as the target's. None means one-hot at each drafted token (n-gram
    # lookup, and a draft model under greedy decoding).
    probs: np.ndarray | None = None
    # N-gram lookup: how many tokens before the guess match the earlier occurrence it copies.
    match_length: int = 0
    origin: DraftOrigin | None = None
    # A draft model whose context window is full: how many tokens of the context it could not
    # see (draft_window). The reply is unchanged; the engine tells the user once a reply.
    left_out: int = 0
    # Where a copied guess lies (acceptance.PLACES): "message" (the one being answered),
    # "earlier", "reply", "prediction"; "" when the drafter does not say (a draft model).
    where: str = ""
    # A copied guess: what the index's occurrences of the n-gram it copies went on with
    # (acceptance.CONTINUATIONS): "one" occurrence, several that "agree" on the next token, or
    # a "split"; "" when the drafter does not say.
    continuations: str = ""


class Drafter(Protocol):
    def propose(self, context: Sequence[int], max_tokens: int, params: SamplingParams,
                rng: np.random.Generator) -> Draft:
        """Guess up to `max_tokens` tokens that follow `context`."""
        ...


class NgramDrafter:
    """Prompt lookup: find an earlier occurrence of the context's last n tokens (n = max_ngram
    down to min_ngram) and propose what followed it. Costs no model pass.

    Of several occurrences it copies the one whose preceding tokens match the context longest
    (the latest among equals): in a document with repeated phrases that is the passage being
    copied, and the match length it reports is then the best evidence auto mode has.

    The n-grams are indexed incrementally (ngram_index.NgramIndex), so a step costs a few dict
    lookups instead of a scan of the whole context; contexts that do not extend the previous one
    (a new conversation) rebuild the index.
    """

    def __init__(self, max_ngram: int = 3, min_ngram: int = 2, fold: Fold | None = None) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self.fold = fold  # word_fold of the model's pieces: how far back a match is measured
        self._index = NgramIndex(min_ngram, max_ngram, fold=fold)
        self._regions: tuple[int, int] | None = None
        self._trusted = False  # the context was compared whole since the reply began

    @property
    def regions(self) -> tuple[int, int] | None:
        """(where the message being answered starts, where the reply starts) in the context,
        set by the engine for each reply; None: guesses say no place."""
        return self._regions

    @regions.setter
    def regions(self, value: tuple[int, int] | None) -> None:
        self._regions = value
        self._trusted = False  # a new reply: its context is compared whole once

    def place(self, position: int) -> str:
        """Where a continuation at `position` lies (acceptance.PLACES)."""
        if self.regions is None:
            return ""
        message_start, reply_start = self.regions
        if position >= reply_start:
            return "reply"
        return "message" if position >= message_start else "earlier"

    # Within a reply a step's context is the last one and the step's tokens (at most this many)
    STEP_GROWTH = 64
    # ... and the newest this many indexed tokens are compared (a reply's steps only ever add
    # to the context, so this is a guard, paid at every step: 64 cost 20 us a step, 0.15% of
    # the bundled model's token)
    TAIL = 8

    def _sync(self, context: Sequence[int]) -> list[int]:
        """The indexed tokens, brought up to `context`. The first time in a reply (and whenever
        it grew by more than a step could) they are compared whole; then a step's context is
        checked by its newest TAIL indexed tokens, read in the one slice that also brings the
        new tokens, O(1) a step: comparing all of them cost 0.3 ms a step at 30,000 tokens on
        a 2-core CPU, 5% of a small model's pass (`draftlight bench scale`)."""
        index = self._index
        known = len(index.tokens)
        if self._trusted and known <= len(context) <= known + self.STEP_GROWTH:
            tail = max(0, known - self.TAIL)
            recent = context[tail:]
            if recent[:known - tail] == index.tokens[tail:]:
                index.extend(recent[known - tail:])
                return index.tokens
        self._trusted = len(context) >= known and list(context[:known]) == index.tokens
        if not self._trusted:
            index = self._index = NgramIndex(self.min_ngram, self.max_ngram, fold=self.fold)
            known = 0
            self._trusted = True
        index.extend(context[known:])
        return index.tokens

    def propose(self, context, max_tokens, params=None, rng=None) -> Draft:
        if max_tokens <= 0:
            return Draft([])
        tokens = self._sync(context)
        size = len(tokens)
        for n in range(self.max_ngram, self.min_ngram - 1, -1):
            if size <= n:
                continue
            positions = self._index.positions(tokens[size - n:])
            if not positions:
                continue
            # Of the latest MAX_CANDIDATES occurrences, the longest match (the latest of equals)
            candidates = positions[-NgramIndex.MAX_CANDIDATES:]
            best, best_length = -1, -1
            for start in reversed(candidates):
                length = self._index.match_length_to_end(start)
                if length > best_length:
                    best, best_length = start, length
            return Draft(tokens[best:best + max_tokens], None, best_length,
                         DraftOrigin("context", best), where=self.place(best),
                         continuations=continuations(tokens, candidates))
        return Draft([])


def word_fold(piece: Callable[[int], bytes]) -> Fold:
    """A token's word, for measuring how long a match is: its text without surrounding spaces,
    in lower case ("The", " the" and "THE" are one word); a token whose text is only spaces, or
    nothing (a special token), is itself. `piece` is the model's token -> bytes; each token's
    word is worked out once, when a match first reaches it."""
    words: dict[int, object] = {}

    def fold(token: int) -> object:
        word = words.get(token)
        if word is None:
            text = piece(token).decode("utf-8", "replace").strip().lower()
            word = words[token] = text or token
        return word
    return fold


def continuations(tokens: Sequence[int], positions: Sequence[int]) -> str:
    """What the occurrences of an n-gram went on with (`positions`: where the token after each
    is): "one" occurrence, several that "agree", or a "split". Recorded greedy answers of two
    models: after a 2-token match in the reply so far the guess is right 0.69 of the time when
    earlier occurrences agree, 0.44 when there is one, 0.24 when they split."""
    if len(positions) == 1:
        return "one"
    first = tokens[positions[0]]
    return "agree" if all(tokens[p] == first for p in positions) else "split"


# Tokens a draft model's window keeps free for the tokens it drafts (at most a quarter of it)
DRAFT_HEADROOM = 16


def draft_window(context: Sequence[int], n_ctx: int | None) -> tuple[list[int], int]:
    """The tokens a draft model with an `n_ctx`-token window drafts from, and how many tokens
    of `context` they leave out.

    The whole context while it fits with DRAFT_HEADROOM tokens to spare for the draft. Past that
    (a draft loaded with a smaller context than the target's, or one of another vocabulary that
    needs more tokens for the same text), the context's first token (BOS or the chat template's
    first: models attend to it heavily whatever follows, and go astray without it: the
    "attention sink" of StreamingLLM, Xiao et al. 2023), then its latest tokens. These start at
    a cut that moves in steps of half the window: between two steps each context extends the
    one before, so the draft's cache is reused as usual, and a step costs one batch over half a
    window instead of one over the whole window at every proposal.

    Drafting from the latest tokens rather than stopping: a draft guesses mostly from the
    recent text, and whatever it guesses the target verifies, so the reply stays the target's.
    Stopping would turn the rest of a long conversation into plain decoding.
    """
    size = len(context)
    headroom = min(DRAFT_HEADROOM, (n_ctx or 0) // 4)
    if n_ctx is None or size + headroom <= n_ctx:
        return list(context), 0
    step = max(n_ctx // 2, 1)
    over = size + headroom - n_ctx  # tokens that must go, besides the kept first one
    start = 1 + -(-over // step) * step  # the first token kept after the cut
    return [context[0], *context[start:]], start - 1


class ModelDrafter:
    """A smaller model with the same vocabulary drafts autoregressively, one token per pass.

    Its cache is synced to the context before each proposal, so after a rejection only the
    tokens that differ are evaluated again. A context longer than the draft's window (`n_ctx`)
    is drafted from its latest part (draft_window), never past the window's end.

    `keep_going(i, p)`, when set (by auto mode), is asked before drawing token i+1 (i ≥ 1), with
    p = the draft's own estimate that all i+1 tokens will be right: Π_{j≤i} c(q_j(d_j)) for the
    tokens already drawn, times c(E_{x~q_{i+1}}[q_{i+1}(x)]) (max q under greedy) for the next
    one, where c is `calibrate` (what auto learnt of how often a token drafted with belief q is
    accepted: acceptance.Calibration), or q itself when it is not set.

    Why before drawing: the acceptance test divides by q_{i+1}(d_{i+1}), which is only right if
    d_{i+1} is proposed whatever its value. A stop rule that looks at d_{i+1} itself (drop it when
    q(d_{i+1}) is small) proposes low-q tokens less often than q says, and sampled output drifts
    from the target's distribution. A rule that depends only on d_1..d_i and the next row does
    not: at each position the step either verifies a draw from q or samples p itself, and both
    give p (tests/engine/step/test_lossless_sampling.py).
    """

    def __init__(self, backend: Backend, target_vocab: int, *, n_ctx: int | None = None) -> None:
        self.backend = backend
        self.target_vocab = target_vocab
        # The draft's context window; None: the backend's n_ctx if it has one, else unbounded
        self.n_ctx = n_ctx if n_ctx is not None else getattr(backend, "n_ctx", None)
        self.keep_going: Callable[[int, float], bool] | None = None
        self.calibrate: Callable[[float], float] | None = None

    def _fit_vocab(self, logits: np.ndarray) -> np.ndarray:
        """Align the draft's logits with the target's vocabulary (sizes may differ slightly)."""
        n = self.target_vocab
        if logits.shape[-1] == n:
            return logits
        out = np.full(n, -np.inf, dtype=np.float32)
        m = min(n, logits.shape[-1])
        out[:m] = logits[:m]
        return out

    def propose(self, context, max_tokens, params, rng) -> Draft:
        if max_tokens <= 0 or not context:
            return Draft([])
        context, left_out = draft_window(context, self.n_ctx)
        if self.n_ctx is not None:  # the cache ends with the context and all drafts but the last
            max_tokens = min(max_tokens, self.n_ctx - len(context) + 1)
        sync_cache(self.backend, context[:-1])
        self.backend.checkpoint()  # the next propose() comes back here, after a rejection
        token = context[-1]
        tokens: list[int] = []
        rows: list[np.ndarray] = []
        beliefs: list[float] = []  # q_j(d_j): shown with the accepted tokens as their origin
        cumulative = 1.0  # Π c(q_j(d_j)) over the tokens drawn so far
        calibrate = self.calibrate or (lambda q: q)
        for _ in range(max_tokens):
            logits = self._fit_vocab(self.backend.eval([token], n_logits=1)[0])
            row = None if params.greedy else to_probs(logits, params)[0]
            # The draft's expected confidence in its next token, known before drawing it:
            # greedy takes the argmax, right with (its belief) max q; sampling draws x ~ q, and
            # E_{x~q}[q(x)] = Σ q².
            if row is None:
                expected = float(softmax(logits).max())
            else:
                expected = float(row @ row)
            # Decided before d_{i+1} is drawn (see the class docstring).
            if tokens and self.keep_going is not None and not self.keep_going(
                    len(tokens), cumulative * calibrate(expected)):
                break
            if row is None:
                token = int(np.argmax(logits))
                belief = expected  # greedy: q(argmax) is exactly max q
            else:
                token = sample(row, rng)
                belief = float(row[token])
                rows.append(row)
            cumulative *= calibrate(belief)
            beliefs.append(belief)
            tokens.append(token)
        probs = np.stack(rows) if rows else None
        return Draft(tokens, probs, origin=DraftOrigin("model", p=tuple(beliefs)),
                     left_out=left_out)
