"""models.toml: the shipped file is valid and consistent; broken files give clear errors."""

from __future__ import annotations

import pytest

from draftlight.store.catalog import load_catalog
from draftlight.store.errors import CatalogError
from draftlight.store.installed import BUNDLED_NAME
from draftlight.store.model_names import could_draft_for

GOOD_ENTRY = '''
[[models]]
name = "a"
repo = "org/A-GGUF"
file = "A-7B-Q4_K_M.gguf"
quant = "Q4_K_M"
'''

SMALL = GOOD_ENTRY.replace('"a"', '"s"').replace("A-7B", "A-0.5B")
TOKENIZER = 'tokenizer = "A\'s BPE, 32,000 tokens (the model card)"\n'


def write(tmp_path, text):
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_catalog_loads_with_the_bundled_default(bundled_model):
    catalog = load_catalog()
    assert catalog.default.bundled and catalog.default.name == BUNDLED_NAME
    assert catalog.default.file == bundled_model.name
    assert catalog.default.size == bundled_model.stat().st_size
    assert len(catalog.pairs) >= 8
    assert catalog.get(BUNDLED_NAME) is catalog.default


def test_every_curated_pair_is_a_smaller_draft_of_the_same_family():
    for pair in load_catalog().pairs:
        assert could_draft_for(pair.target.repo + "/" + pair.target.file,
                               pair.draft.repo + "/" + pair.draft.file), pair.label


def test_shipped_bundled_sha256_matches_the_wheel(bundled_model):
    import hashlib
    assert load_catalog().default.sha256 == hashlib.sha256(bundled_model.read_bytes()).hexdigest()


@pytest.mark.parametrize("text, message", [
    ('default = "a"\n', "no \\[\\[models\\]\\] entries"),
    ('default = "b"\n' + GOOD_ENTRY, "'default' must name one of"),
    ('default = "a"\n' + GOOD_ENTRY.replace('quant = "Q4_K_M"\n', ""),
     r"entry 1 \(a\): 'quant' is missing"),
    ('default = "a"\n' + GOOD_ENTRY + 'sha256 = "abc"\n', "'sha256' must be 64 lowercase hex"),
    ('default = "a"\n' + GOOD_ENTRY + 'size = -1\n', "'size' must be a positive"),
    ('default = "a"\n' + GOOD_ENTRY + 'size_hint = "4GB"\n', "'size_hint' must be a positive"),
    ('default = "a"\n' + GOOD_ENTRY + 'colour = "red"\n', "unknown key\\(s\\) colour"),
    ('default = "a"\n' + GOOD_ENTRY.replace("A-7B-Q4_K_M.gguf", "../x.gguf"),
     "plain .gguf file name"),
    ('default = "a"\n' + GOOD_ENTRY.replace("org/A-GGUF", "not a repo"), "owner/name"),
    ('default = "a"\n' + GOOD_ENTRY + GOOD_ENTRY, "two \\[\\[models\\]\\] entries are named 'a'"),
    ('default = "a"\n' + GOOD_ENTRY + '[[pairs]]\ntarget = "a"\ndraft = "zz"\n' + TOKENIZER,
     "\\[\\[pairs\\]\\] entry 1: draft 'zz' is not"),
    ('default = "a"\n' + GOOD_ENTRY + SMALL + '[[pairs]]\ntarget = "a"\ndraft = "s"\n',
     "needs exactly 'target', 'draft' and 'tokenizer'"),
    ('default = "a"\n' + GOOD_ENTRY + SMALL + '[[pairs]]\ntarget = "a"\ndraft = "s"\n'
     'tokenizer = "same"\n', "'tokenizer' must say which tokenizer"),
    ('default = "a"\n' + GOOD_ENTRY + SMALL.replace("A-0.5B", "A-3B")
     + '[[pairs]]\ntarget = "a"\ndraft = "s"\n' + TOKENIZER,
     "the draft s is more than a third of a's size"),
    ('default = "a"\n[[models]\n', "models.toml: not valid TOML"),
])
def test_invalid_catalog_names_the_file_and_the_problem(tmp_path, text, message):
    with pytest.raises(CatalogError, match=message) as caught:
        load_catalog(write(tmp_path, text))
    assert "models.toml" in str(caught.value)


def test_a_pair_says_which_tokenizer_its_models_share(tmp_path):
    pair = load_catalog(write(tmp_path, 'default = "a"\n' + GOOD_ENTRY + SMALL
                              + '[[pairs]]\ntarget = "a"\ndraft = "s"\n' + TOKENIZER)).pairs[0]
    assert pair.tokenizer == "A's BPE, 32,000 tokens (the model card)"
    assert all("(" in p.tokenizer for p in load_catalog().pairs)  # each names its source


def test_missing_catalog(tmp_path):
    with pytest.raises(CatalogError, match="missing"):
        load_catalog(tmp_path / "models.toml")
