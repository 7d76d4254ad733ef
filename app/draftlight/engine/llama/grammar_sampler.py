"""llama.cpp's own grammar machinery as a Grammar (engine/core/grammar.py): a grammar sampler
(llama_sampler_init_grammar) applied to a row of logits, cloned to walk along a draft."""

from __future__ import annotations

import ctypes

import llama_cpp
import numpy as np

from draftlight.engine.core.errors import EngineError

# llama_token_data as numpy sees it, so a row of logits is handed over without a Python loop
TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
assert TOKEN_DATA.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)


class GrammarSampler:
    """One grammar state on llama.cpp; close() frees it (a copy is freed on its own)."""

    def __init__(self, handle, n_vocab: int) -> None:
        self._handle = handle
        self._n_vocab = n_vocab
        self._row = np.zeros(n_vocab, dtype=TOKEN_DATA)
        self._row["id"] = np.arange(n_vocab, dtype=np.int32)
        self._one = np.zeros(1, dtype=TOKEN_DATA)

    @classmethod
    def parse(cls, vocab, n_vocab: int, gbnf: str) -> "GrammarSampler":
        """The grammar `gbnf` (root rule "root"), at its start; EngineError if it does not parse
        (llama.cpp returns no sampler then)."""
        handle = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not handle:
            raise EngineError("the grammar could not be parsed by llama.cpp")
        return cls(handle, n_vocab)

    def _apply(self, data: np.ndarray) -> None:
        array = llama_cpp.llama_token_data_array(
            data=data.ctypes.data_as(llama_cpp.llama_token_data_p), size=len(data),
            selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self._handle, ctypes.byref(array))

    def allows(self, token: int) -> bool:
        self._one["id"], self._one["logit"] = token, 0.0
        self._apply(self._one)
        return bool(np.isfinite(self._one["logit"][0]))

    def masked(self, logits: np.ndarray) -> np.ndarray:
        self._row["logit"] = logits[:self._n_vocab]
        self._apply(self._row)  # sets what the grammar forbids to −inf, in place, in order
        out = np.array(logits, dtype=np.float32, copy=True)
        out[:self._n_vocab] = self._row["logit"]
        return out

    def accept(self, token: int) -> None:
        # llama.cpp aborts the process on a token its grammar forbids: checked here first
        if not self.allows(token):
            raise EngineError(f"token {token} is not allowed by the grammar here")
        llama_cpp.llama_sampler_accept(self._handle, token)

    def copy(self) -> "GrammarSampler":
        return GrammarSampler(llama_cpp.llama_sampler_clone(self._handle), self._n_vocab)

    def close(self) -> None:
        if self._handle:
            llama_cpp.llama_sampler_free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        self.close()
