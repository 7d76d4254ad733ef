"""What a GGUF file or repo name says: quantisation, parameter size and model family.

The family is a guess from the name, used to offer drafts before anything is downloaded; the
engine checks the real vocabularies once both files are on disk.
"""

from __future__ import annotations

import re

_QUANT = re.compile(
    r"(?<![A-Za-z0-9])(I?Q\d_K_[SMLX]L?|IQ\d_(?:XXS|XS|S|M|NL)|Q\d_K|Q\d_[01]|TQ\d_0|"
    r"MXFP4|BF16|F16|F32|FP16)(?![A-Za-z0-9])", re.IGNORECASE)
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([BM])(?![A-Za-z0-9])", re.IGNORECASE)
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)

# Names that share one tokenizer across sizes -> family id. Order matters: specific first.
_FAMILIES = [
    (re.compile(r"qwen2\.5[-_ ]?coder", re.I), "qwen2.5-coder"),
    (re.compile(r"qwen2\.5", re.I), "qwen2.5"),
    (re.compile(r"qwen3", re.I), "qwen3"),
    (re.compile(r"llama[-_ ]?3\.[123]", re.I), "llama-3.x"),
    (re.compile(r"gemma[-_ ]?3(?!n)", re.I), "gemma-3"),
    (re.compile(r"gemma[-_ ]?2", re.I), "gemma-2"),
    (re.compile(r"smollm2", re.I), "smollm2"),
    (re.compile(r"smollm3", re.I), "smollm3"),
    (re.compile(r"phi[-_ ]?3", re.I), "phi-3"),
    (re.compile(r"deepseek[-_ ]?r1[-_ ]?distill[-_ ]?qwen", re.I), "deepseek-r1-qwen"),
]


def quantisation_from_name(file_name: str) -> str | None:
    """'Qwen2.5-7B-Instruct-Q4_K_M.gguf' -> 'Q4_K_M'; None when the name does not say."""
    stem = re.sub(r"\.gguf$", "", file_name, flags=re.IGNORECASE)
    matches = _QUANT.findall(stem.replace(".", "-"))
    return matches[-1].upper() if matches else None


def parameter_size_from_name(name: str) -> float | None:
    """'Qwen2.5-0.5B-Instruct' -> 0.5 (billions); '270m' -> 0.27; None when absent."""
    match = _SIZE.search(name.split("/")[-1])
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).upper() == "M" else value


def family_from_name(name: str) -> str | None:
    """'bartowski/Qwen2.5-7B-Instruct-GGUF' -> 'qwen2.5'; None for unknown families."""
    for pattern, family in _FAMILIES:
        if pattern.search(name):
            return family
    return None


def split_part(file_name: str) -> tuple[int, int] | None:
    """'x-00001-of-00003.gguf' -> (1, 3): one part of a model split across files."""
    match = _SPLIT.search(file_name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def is_projector(file_name: str) -> bool:
    """Vision projectors (mmproj) are GGUFs too, but not chat models."""
    return "mmproj" in file_name.lower()


# A draft is at most a third of its target's parameters (0.5B for 1.5B, give or take the
# rounding of names): a larger one costs too much of a target pass per drafted token to pay.
MAX_DRAFT_PARAMETERS = 1 / 3 * 1.02


def could_draft_for(target_name: str, draft_name: str) -> bool:
    """Whether `draft_name` looks like a model of `target_name`'s family at most a third of
    its size (never the target itself)."""
    family = family_from_name(target_name)
    if family is None or family_from_name(draft_name) != family:
        return False
    target_size = parameter_size_from_name(target_name)
    draft_size = parameter_size_from_name(draft_name)
    if target_size is None or draft_size is None:
        return True  # same family, sizes unknown: offer it, the engine will check
    return draft_size <= target_size * MAX_DRAFT_PARAMETERS


_FAMILY_SEARCH = {"qwen2.5-coder": "Qwen2.5-Coder", "qwen2.5": "Qwen2.5", "qwen3": "Qwen3",
                  "llama-3.x": "Llama-3.2", "gemma-3": "gemma-3", "gemma-2": "gemma-2",
                  "smollm2": "SmolLM2", "smollm3": "SmolLM3", "phi-3": "Phi-3",
                  "deepseek-r1-qwen": "DeepSeek-R1-Distill-Qwen"}


def family_search_term(name: str) -> str | None:
    """What to search the hub for to find other sizes of `name`'s family."""
    family = family_from_name(name)
    return _FAMILY_SEARCH.get(family) if family else None


def format_parameters(count: int) -> str:
    """7_615_616_512 -> '7.6B', 494_032_768 -> '494M', 135_000_000 -> '135M'."""
    if count >= 1e9:
        return f"{count / 1e9:.1f}".rstrip("0").rstrip(".") + "B"
    return f"{count / 1e6:.0f}M"


def quant_bits(quant: str | None) -> int | None:
    """Bits per weight a quantisation name starts with: 'Q4_K_M' -> 4, 'IQ3_XS' -> 3,
    'F16' -> 16; None when the name does not say."""
    match = re.match(r"^(?:I?Q|TQ|B?F|FP)(\d+)", quant or "", re.IGNORECASE)
    return int(match.group(1)) if match else None
