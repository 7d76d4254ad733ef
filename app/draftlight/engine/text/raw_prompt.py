"""A prompt completed as given (OpenAI's /v1/completions), not a conversation: no chat template,
the text's own tokens with the model's BOS where its vocabulary asks for one. With a suffix,
fill in the middle through the model's own FIM tokens, in llama.cpp's prefix-suffix-middle
order (its /infill's): [BOS] FIM_PRE prompt FIM_SUF suffix FIM_MID, and the model writes what
goes between."""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.errors import ContextOverflowError, EngineError


@dataclass(frozen=True)
class RawPrompt:
    text: str
    suffix: str | None = None  # what follows the completion: fill in the middle

    def as_messages(self) -> list[dict[str, str]]:
        """Stand-in messages for what reads a reply's sources (origins.py, copy_source): the
        prompt is message 0, the suffix message 1, located in the prompt by their text."""
        parts = [self.text] + ([self.suffix] if self.suffix is not None else [])
        return [{"role": "user", "content": part} for part in parts]

    def record(self) -> dict:
        """As it crosses the engine host's pipe (from_record reads it back)."""
        return {"text": self.text, "suffix": self.suffix}

    @classmethod
    def from_record(cls, record: dict | None) -> "RawPrompt | None":
        return None if record is None else cls(record["text"], record.get("suffix"))


def raw_prompt_tokens(model: LanguageModel, prompt: RawPrompt) -> list[int]:
    """The tokens `prompt` is read as. Special tokens written in its text (<|im_start|>) are
    read as tokens, as llama-server and llama-cpp-python read a completion's prompt: a client
    that writes a chat template by hand means them.

    Raises:
        EngineError: a suffix for a model whose vocabulary has no FIM tokens."""
    start = [model.bos] if model.add_bos else []
    if prompt.suffix is None:
        tokens = start + model.tokenize(prompt.text, add_bos=False)
        return tokens or [model.bos]  # an empty prompt: complete from the start of a text
    fim = fim_tokens(model)
    if fim is None:
        raise EngineError("'suffix' needs a model trained to fill in the middle; this model's "
                          "vocabulary has no FIM tokens (prefix, suffix, middle): send the "
                          "prompt alone")
    pre, suf, mid = fim
    return (start + [pre] + model.tokenize(prompt.text, add_bos=False)
            + [suf] + model.tokenize(prompt.suffix, add_bos=False) + [mid])


def fim_tokens(model: LanguageModel) -> tuple[int, int, int] | None:
    """The model's fill-in-the-middle tokens (prefix, suffix, middle), or None where its
    vocabulary has none. Test models without a vocabulary of llama.cpp's have no such
    attribute: they have none either."""
    return getattr(model, "fim_tokens", None)


def fit_raw_prompt(model: LanguageModel, prompt: RawPrompt, reserve: int) -> list[int]:
    """raw_prompt_tokens, if they leave `reserve` tokens of the context for the reply: a
    prompt is never cut, as a conversation's oldest turns are (fit_prompt).

    Raises:
        ContextOverflowError: they do not. EngineError: as raw_prompt_tokens."""
    tokens = raw_prompt_tokens(model, prompt)
    if len(tokens) + reserve > model.n_ctx:
        raise ContextOverflowError(
            f"the prompt is {len(tokens):,} tokens long; with room for a reply "
            f"({reserve:,} tokens) it does not fit the {model.n_ctx:,}-token context")
    return tokens
