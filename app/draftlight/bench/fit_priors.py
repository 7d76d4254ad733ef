"""Fit auto's acceptance priors (engine/auto/acceptance_priors.py) on recorded greedy answers.

    python -m draftlight.bench.fit_priors app/draftlight/bench/recorded/*.jsonl.gz > priors.py

Matches are measured as the engine measures them, with the model's words (recorded_words.py:
"The" and " the" agree) where the recording has them.

For every answer position where n-gram lookup (as the engine runs it) has a guess, the guess's
tokens are compared with the answer: the i-th token, reached only if the ones before it were
right, is one trial at evidence (match length + i) in the bucket of that evidence, at the place
the match lies (the message being answered, earlier messages, the reply so far), and for a
guess whose n-gram occurs more than once, whether its occurrences agree on the next token: their
own rows ("reply/agree", "reply/split"). A row's prior for a bucket is its hit rate over all
files, each file weighing the same, rounded down to two decimals (at most HIGHEST); a bucket with
fewer than MIN_TRIALS trials, and buckets 0-1 (a match is at least 2 tokens), keep the pooled
prior of guesses with no place (an agree or split row: its place's). A Predicted Output starts
from the message's priors: like the message being answered, it is text the reply is expected to
copy.

Where the message being answered starts is read from the chat markup: the recordings are of
ChatML models, whose every message opens with the token the prompt opens with (<|im_start|>);
the answered message is the one before the assistant's header. A recording of another template
is refused.
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from draftlight.bench.recorded_words import load_words
from draftlight.engine.auto.acceptance import BUCKET_EDGES, KEYS, bucket, evidence_key
from draftlight.engine.auto.acceptance_priors import PRIORS
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.reply.generator import SpeculationConfig
from draftlight.engine.step.ngram_index import Fold

MIN_TRIALS = 30
HIGHEST = 0.98  # no prior says certain: a Beta prior at 1.0 would never be doubted
PLACES = ("message", "earlier", "reply")


def regions(prompt: list[int]) -> tuple[int, int] | None:
    """(where the answered message starts, where the reply starts) in ChatML token positions;
    None for a prompt without that markup."""
    opens = [i for i, t in enumerate(prompt) if prompt and t == prompt[0]]
    return (opens[-2], len(prompt)) if len(opens) >= 2 else None


def place_of(position: int, message_start: int, reply_start: int) -> str:
    if position >= reply_start:
        return "reply"
    return "message" if position >= message_start else "earlier"


def trials(records: list[dict], config: SpeculationConfig = SpeculationConfig(),
           fold: Fold | None = None):
    """(place, bucket) -> [hits, trials] over the records' answers (`fold`: their words)."""
    out: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for record in records:
        prompt, answer = record["prompt"], record["answer"]
        where = regions(prompt)
        if where is None:
            raise SystemExit("fit_priors: a prompt without ChatML markup (its first token "
                             "opens fewer than two messages)")
        message_start, reply_start = where
        ngram = NgramDrafter(config.ngram_max, config.ngram_min, fold=fold)
        for position in range(len(answer)):
            guess = ngram.propose(prompt + answer[:position], config.auto_max_tokens)
            if not guess.tokens:
                continue
            place = evidence_key(place_of(guess.origin.start, message_start, reply_start),
                                 guess.continuations)
            for i, token in enumerate(guess.tokens):
                if position + i >= len(answer):
                    break
                counts = out[(place, bucket(guess.match_length + i))]
                right = token == answer[position + i]
                counts[0] += right
                counts[1] += 1
                if not right:
                    break
    return out


def fit(files: list[list[dict]], folds: list[Fold | None] | None = None
        ) -> dict[str, tuple[float, ...]]:
    rates: dict[tuple[str, int], list[float]] = defaultdict(list)
    sizes: dict[tuple[str, int], float] = defaultdict(float)
    for records, fold in zip(files, folds or [None] * len(files)):
        for key, (hits, total) in trials(records, fold=fold).items():
            rates[key].append(hits / total)
            sizes[key] += total
    priors = {"": PRIORS[""]}
    for place in (key for key in KEYS if key.split("/")[0] in PLACES):  # places first
        row, fallback = [], priors[place.split("/")[0]] if "/" in place else PRIORS[""]
        for b in range(len(BUCKET_EDGES)):
            key = (place, b)
            if b < 2 or sizes[key] < MIN_TRIALS:
                row.append(fallback[b])
            else:
                row.append(min(HIGHEST, math.floor(100 * sum(rates[key]) / len(rates[key])) / 100))
        priors[place] = tuple(row)
    priors["prediction"] = priors["message"]
    return priors


def main(argv: list[str] | None = None) -> int:
    paths = (argv if argv is not None else sys.argv[1:])
    if not paths:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    files = [[json.loads(line) for line in gzip.open(path, "rt")] for path in paths]
    priors = fit(files, [load_words(Path(path)) for path in paths])
    print("PRIORS = {")
    for place, row in priors.items():
        print(f"    {place!r}: ({', '.join(f'{p:.2f}' for p in row)}),")
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
