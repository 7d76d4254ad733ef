"""What the model lists know of each header (issue 38, parts 4 and 5): read once per file and
kept by path, size and modification time across starts; a changed file is read again, a broken
one is its reason; two models share a vocabulary only if their token lists agree."""

from __future__ import annotations

import os
from pathlib import Path

from draftlight.store.installed import InstalledModel
from draftlight.store.model_facts import FactsCache, read_facts
from draftlight.store.pairs import drafts_for, vocabulary_difference
from tests.support.hostile_gguf import PAST_THE_KEYS, hostile_files
from tests.support.hub_server import synthetic_gguf


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_the_facts_come_from_the_header(tmp_path):
    facts = read_facts(write(tmp_path / "m.gguf", synthetic_gguf(1 << 12, vocab=300)))
    assert (facts.weight_type, facts.tokenizer, facts.vocab_size) == ("Q4_K_M", "gpt2", 300)
    assert facts.readable and len(facts.vocab_digest) == 64


def test_facts_are_kept_across_starts_until_the_file_changes(tmp_path):
    model = write(tmp_path / "m.gguf", synthetic_gguf(1 << 12))
    cache_file = tmp_path / "cache" / "model-facts.json"
    first = FactsCache(cache_file)
    assert first.get(model, read=False) is None  # not read yet: the GUI thread gets nothing
    known = first.get(model)
    first.save()
    later = FactsCache(cache_file)  # the next start
    assert later.get(model, read=False) == known
    write(model, synthetic_gguf(1 << 13, vocab=500))  # pulled again: another size
    assert later.get(model, read=False) is None
    assert later.get(model).vocab_size == 500
    os.utime(model, ns=(1, 1))  # same size, another modification time
    assert later.get(model, read=False) is None


def test_a_damaged_cache_file_is_read_again_and_a_hostile_header_is_its_reason(tmp_path):
    cache_file = write(tmp_path / "model-facts.json", b"{not json")
    facts = FactsCache(cache_file)
    for name, hostile in hostile_files().items():
        if name in PAST_THE_KEYS:  # in the tensor records, which the lists never read
            continue
        bad = write(tmp_path / f"{name}.gguf", hostile.data)
        known = facts.get(bad)
        assert known is not None and known.error and "\n" not in known.error, name
    facts.save()
    assert FactsCache(cache_file).get(tmp_path / "nested-arrays.gguf", read=False).error


def test_the_same_tokenizer_and_size_with_other_tokens_is_another_vocabulary(tmp_path):
    facts = FactsCache()
    target = write(tmp_path / "target.gguf", synthetic_gguf(1 << 18, vocab=1000))
    same = write(tmp_path / "same.gguf", synthetic_gguf(1 << 12, vocab=1000, seed=1))
    padded = write(tmp_path / "padded.gguf", synthetic_gguf(1 << 12, vocab=1010))  # +10 pads
    other = write(tmp_path / "other.gguf", synthetic_gguf(1 << 12, vocab=1000, token_prefix="u"))
    assert vocabulary_difference(str(target), str(same), facts) is None
    assert vocabulary_difference(str(target), str(padded), facts) is None
    assert "another token list" in vocabulary_difference(str(target), str(other), facts)
    models = [InstalledModel(p.stem, p, "local", size=p.stat().st_size)
              for p in (target, same, other)]
    choices = drafts_for(models[0], models, facts)
    assert [(c.draft.name, c.same_vocabulary) for c in choices] == [("same", True),
                                                                    ("other", False)]
