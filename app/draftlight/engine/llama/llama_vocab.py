"""A LlamaBackend's vocabulary: tokenising, token pieces and texts, special tokens, metadata.

A mixin of LlamaBackend: it reads the backend's loaded model (`_model`), its vocabulary
(`vocab`) and a piece buffer (`_piece_buffer`).
"""

from __future__ import annotations

import llama_cpp


class LlamaVocabulary:
    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        return self._model.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special)

    def piece(self, token: int) -> bytes:
        """The bytes of one token as text (special tokens render as nothing)."""
        n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buffer, 256, 0, False)
        return bytes(self._piece_buffer.raw[:max(n, 0)])

    def token_text(self, token: int) -> str:
        return llama_cpp.llama_vocab_get_text(self.vocab, token).decode("utf-8", "replace")

    def is_end_of_generation(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    @property
    def vocab_type(self) -> int:
        return int(llama_cpp.llama_vocab_type(self.vocab))

    @property
    def bos(self) -> int:
        return int(llama_cpp.llama_vocab_bos(self.vocab))

    @property
    def eos(self) -> int:
        return int(llama_cpp.llama_vocab_eos(self.vocab))

    @property
    def add_bos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))

    @property
    def fim_tokens(self) -> tuple[int, int, int] | None:
        """Fill-in-the-middle's (prefix, suffix, middle) tokens, as llama.cpp found them in the
        GGUF's metadata or vocabulary (<|fim_prefix|>, ...); None where it found no set."""
        found = tuple(int(ask(self.vocab)) for ask in (
            llama_cpp.llama_vocab_fim_pre, llama_cpp.llama_vocab_fim_suf,
            llama_cpp.llama_vocab_fim_mid))
        return None if min(found) < 0 else found

    def metadata(self) -> dict[str, str]:
        return self._model.metadata()

    @property
    def description(self) -> str:
        return self._model.desc()
