"""What a speculation mode is, in one place: how it is written, which engine runs it, whether it
needs a draft model, and what the window calls it. A leaf: it imports nothing of the app.

A mode travels as a `Mode` value: text is parsed once where it comes in (settings.toml, the
command line, a serve request, the history, the host's pipe) and written back with `str(mode)`;
everything between compares values (`mode == NGRAM`) and reads attributes. Comparing a Mode with
text raises TypeError, so a string that slipped through is found, not silently unequal.

    auto, off, draft, ngram        the in-process engine's own (Draftlight's drafters)
    llama:TYPE                     llama.cpp's llama-server, started with --spec-type TYPE
    llama:TYPE+TYPE…               a chain: llama-server tries the types in turn
                                   (--spec-type TYPE,TYPE; `+` because --modes already uses commas)
    remote                         a server already running somewhere: it decides how it decodes
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

_IN_PROCESS = ("auto", "off", "draft", "ngram")  # the kinds Draftlight's engine runs
_REMOTE = "remote"
# llama.cpp's --spec-type names (common/arg.cpp in the vendored sources); it takes a comma list.
SPEC_TYPES = ("none", "draft-simple", "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark",
              "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")
# What each type does, in a line (from llama.cpp's docs/speculative.md): the Settings dialog
# shows it under the box and as each entry's tooltip.
SPEC_TYPE_HELP = {
    "none": "No drafting: llama-server decodes one token per pass.",
    "draft-simple": "A small draft model (a second GGUF with the target's vocabulary) guesses "
                    "the next tokens.",
    "draft-eagle3": "An EAGLE-3 draft head, a small model trained on the target's hidden "
                    "states, guesses the next tokens.",
    "draft-mtp": "The target's own multi-token-prediction layers guess the next tokens: no "
                 "second model (DeepSeek-V3, GLM-4.5, Qwen3-Next and others have them).",
    "draft-dflash": "A DFlash drafter, a second GGUF made for the target, guesses a whole "
                    "block of tokens in one pass.",
    "draft-dspark": "A DSpark drafter, a second GGUF made for the target, guesses the next "
                    "tokens.",
    "ngram-simple": "Copies what followed the last earlier occurrence of the latest n tokens: "
                    "no model, pays on rewrites and quotes.",
    "ngram-map-k": "Like ngram-simple, but drafts only a continuation that followed the latest "
                   "n tokens at least a set number of times (--spec-ngram-min-hits).",
    "ngram-map-k4v": "Keeps up to four continuations per n tokens and drafts one only when it "
                     "is clearly the most frequent (experimental).",
    "ngram-mod": "A rolling hash of the latest n tokens picks each next token from a pool "
                 "shared by all requests: drafts of any length, suits summaries and code.",
    "ngram-cache": "Drafts from counts of which token follows each short n-gram in the "
                   "context (llama.cpp's oldest lookup).",
}

# The spec types that read a second model (-md); draft-mtp reads the target's own MTP layers.
NEEDS_DRAFT_MODEL = ("draft-simple", "draft-eagle3", "draft-dflash", "draft-dspark")
LLAMA = "llama"
_PREFIX = LLAMA + ":"
_CHAIN = "+"

_LABELS = {"off": "Off", "draft": "Draft model", "ngram": "N-gram", "auto": "Auto",
           _REMOTE: "The server's own", "none": "Off (llama-server)",
           "draft-mtp": "MTP (built into the model)"}


class ModeError(ValueError):
    """Text that is not a mode; its message says which modes there are."""


@dataclass(frozen=True)
class Mode:
    kind: str  # one of _IN_PROCESS, LLAMA or _REMOTE
    spec_types: tuple[str, ...] = ()  # llama-server's types, in the order it tries them

    @classmethod
    def parse(cls, text: str) -> "Mode":
        """Raises ModeError for anything but the forms in this module's docstring."""
        text = text.strip()
        if text in _IN_PROCESS or text == _REMOTE:
            return cls(text)
        if text.startswith(_PREFIX):
            types = tuple(t.strip() for t in text[len(_PREFIX):].split(_CHAIN))
            unknown = [t for t in types if t not in SPEC_TYPES]
            if not unknown and len(set(types)) == len(types) and not ("none" in types
                                                                        and len(types) > 1):
                return cls(LLAMA, types)
            if unknown:
                raise ModeError(f"{text!r}: {', '.join(map(repr, unknown))} is not a llama.cpp "
                                f"speculation type; choose from {', '.join(SPEC_TYPES)}")
            raise ModeError(f"{text!r}: a chain names each type once, and never 'none'")
        raise ModeError(f"{text!r}: choose {', '.join(_IN_PROCESS)}, {_PREFIX}TYPE or "
                        f"{_PREFIX}TYPE{_CHAIN}TYPE (TYPE one of {', '.join(SPEC_TYPES)})")

    @classmethod
    def llama(cls, spec_types: str | tuple[str, ...]) -> "Mode":
        """llama-server's mode for `spec_types`: its --spec-type value ("ngram-mod",
        "draft-mtp,ngram-mod") or the types themselves."""
        if isinstance(spec_types, str):
            spec_types = tuple(spec_types.split(","))
        return cls.parse(_PREFIX + _CHAIN.join(spec_types))

    def __str__(self) -> str:
        return _PREFIX + _CHAIN.join(self.spec_types) if self.kind == LLAMA else self.kind

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            raise TypeError(f"mode {self} compared with the text {other!r}: parse it first")
        if not isinstance(other, Mode):
            return NotImplemented
        return (self.kind, self.spec_types) == (other.kind, other.spec_types)

    def __hash__(self) -> int:
        return hash((self.kind, self.spec_types))

    @property
    def runs_in_process(self) -> bool:
        return self.kind in _IN_PROCESS

    @property
    def runs_on_llama_server(self) -> bool:
        return self.kind == LLAMA

    @property
    def needs_draft_model(self) -> bool:
        return self.kind == "draft" or any(t in NEEDS_DRAFT_MODEL for t in self.spec_types)

    @property
    def spec_type_argument(self) -> str:
        """llama-server's --spec-type value: "none" for plain decoding ("off" there too)."""
        if self.kind == "off":
            return "none"
        if self.kind != LLAMA:
            raise ModeError(f"mode {self} is not one llama-server runs; choose {_PREFIX}TYPE "
                            f"with TYPE one of {', '.join(SPEC_TYPES)}")
        return ",".join(self.spec_types)

    @property
    def parts(self) -> tuple["Mode", ...]:
        """A chain's single-type modes (a mode that is not a chain: itself)."""
        if len(self.spec_types) < 2:
            return (self,)
        return tuple(Mode(LLAMA, (t,)) for t in self.spec_types)

    @property
    def label(self) -> str:
        """What the window calls it."""
        if self.kind != LLAMA:
            return _LABELS[self.kind]
        if len(self.spec_types) == 1 and self.spec_types[0] in _LABELS:
            return _LABELS[self.spec_types[0]]
        return "llama.cpp " + " + ".join(self.spec_types)

    def on_llama_server(self) -> "Mode":
        """The llama-server mode closest to this one (a model split over machines runs there
        only): off -> llama:none, draft -> llama:draft-simple, auto/ngram -> llama:ngram-simple."""
        if self.kind == LLAMA:
            return self
        return Mode(LLAMA, ({"off": "none", "draft": "draft-simple"}.get(self.kind,
                                                                         "ngram-simple"),))

    @property
    def help(self) -> str:
        """The mode in a sentence (the toolbar's tooltip); a chain: each type's in turn."""
        if self.kind == LLAMA:
            return " Then: ".join(SPEC_TYPE_HELP.get(t, t) for t in self.spec_types)
        return _HELP[self.kind]


# The modes as values: Draftlight's own, in the order the window lists them, and the remote
# server's one
AUTO, OFF, DRAFT, NGRAM = IN_PROCESS = tuple(Mode(kind) for kind in _IN_PROCESS)
REMOTE = Mode(_REMOTE)


# Each mode in one sentence, where the window lists them (the toolbar's Speculation box)
_HELP = {
    "auto": "Drafts only as much as pays on this machine now, from the conversation (n-gram) or "
            "the draft model, and says under a reply why it drafted little.",
    "off": "No drafting: the target writes one token per pass (plain decoding, to compare with).",
    "draft": "The draft model guesses the next few tokens each pass; the target checks them "
             "all at once.",
    "ngram": "Copies what followed the same words earlier in the conversation or an attached "
             "file: free to guess, fast on summaries, quotes and code edits.",
    _REMOTE: "The server decides how it drafts; Draftlight shows what it sends back.",
}


def mode_label(text: str) -> str:
    """What the window calls the mode written `text` (a reply's record, from the history): text
    that is no mode (an older record's) is shown as it is."""
    try:
        return Mode.parse(text).label
    except ModeError:
        return text.replace("_", " ").capitalize() if text else ""


def spec_types_argument(value: str) -> str:
    """Check a --spec-type value ("ngram-mod" or "draft-mtp,ngram-mod"); returns it.

    Raises:
        ModeError: a type llama.cpp does not have."""
    return Mode.llama(value).spec_type_argument


def mode_argument(value: str) -> Mode:
    """argparse type of `--mode` (chat, serve): a mode, written the canonical way."""
    try:
        mode = Mode.parse(value)
    except ModeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if mode == REMOTE:
        raise argparse.ArgumentTypeError("'remote' is --engine URL's only mode; give --engine")
    return mode
