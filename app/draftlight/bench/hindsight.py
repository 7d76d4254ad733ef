"""The best fixed draft-length rule, chosen after seeing the answers: what evidence could buy.

The ceiling (ceiling.py) knows where each copy ends; auto knows what n-gram lookup tells it. A
fixed rule from evidence to draft length, chosen on the answers it is then run on, bounds what
any policy reading that evidence can reach (docs/replay.md):

    γ*(key) = argmax_γ (1 + mean min(r, γ)) / v(γ + 1)

over every answer position whose guess has that key, r being how many of its guesses the
answer then follows. The key is the match length (24 and more pooled), and with `sentence`
also how many of the guess's tokens come before its passage's sentence end
(sentence_ends.sentence_left, 16 and more or none pooled). A rule per category, or one for all
(`pooled`, as auto has); and a rule fitted on other recordings (`fitted_on`) than the ones it is
judged on, which says whether what the evidence buys holds on prompts the fit never saw.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.bench.ceiling import followed, ngram_oracle_cost
from draftlight.bench.replay_table import Replayed, format_table, summarise
from draftlight.bench.sentence_ends import Marks, sentence_left
from draftlight.engine.auto.adaptive import AdaptiveDrafter
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.reply.generator import SpeculationConfig
from draftlight.engine.step.ngram_index import Fold

Guess = tuple[object, int, int]  # (key, right guesses, guessed)


@dataclass
class Recording:
    """Recorded answers with their words and sentence marks (recorded_words.py)."""

    records: list[dict]
    fold: Fold | None = None
    marks: Marks | None = None


def guesses(record: dict, recording: Recording, sentence: bool,
            config: SpeculationConfig) -> list[Guess | None]:
    """Per answer position, what n-gram lookup (as the engine runs it) guesses there."""
    answer = record["answer"]
    drafter = NgramDrafter(config.ngram_max, config.ngram_min, fold=recording.fold)
    context, out = list(record["prompt"]), []
    for position in range(len(answer)):
        room = min(config.auto_max_tokens, len(answer) - position - 1)
        guess = drafter.propose(context, room) if room else None
        if guess and guess.tokens:
            key: object = min(guess.match_length, 24)
            if sentence and recording.marks is not None:
                key = (key, min(sentence_left(guess.tokens, recording.marks) or 16, 16))
            out.append((key, followed(guess.tokens, answer, position), len(guess.tokens)))
        else:
            out.append(None)
        context.append(answer[position])
    return out


def fit_rule(seen: list[list[Guess | None]], costs: BatchCosts,
             config: SpeculationConfig) -> dict[object, int]:
    """γ*(key) over these answers' guesses."""
    lengths = [0] + AdaptiveDrafter(costs, []).lengths(config.auto_max_tokens)  # as auto's
    rows: dict[object, list[tuple[int, int]]] = {}
    for positions in seen:
        for key, right, guessed in filter(None, positions):
            rows.setdefault(key, []).append((right, guessed))
    return {key: max(lengths, key=lambda k: (1 + sum(min(r, k, n) for r, n in found)
                                             / len(found)) / costs(k + 1))
            for key, found in rows.items()}


def run_rule(rule: dict[object, int], record: dict, positions: list[Guess | None],
             costs: BatchCosts, config: SpeculationConfig) -> Replayed:
    """The rule over one answer (a key it has never seen drafts nothing)."""
    answer, position, passes = record["answer"], 0, 0.0
    while position < len(answer):
        guess = positions[position]
        gamma = min(rule.get(guess[0], 0), guess[2]) if guess else 0
        passes += costs(gamma + 1)
        position += (min(guess[1], gamma) if guess else 0) + 1
    oracle = ngram_oracle_cost(record["prompt"], answer, costs, config.auto_max_tokens,
                               NgramDrafter(config.ngram_max, config.ngram_min))
    return Replayed(record["category"], record.get("question_id"), len(answer), passes, oracle)


def hindsight(recording: Recording, costs: BatchCosts,
              config: SpeculationConfig = SpeculationConfig(), *, sentence: bool = False,
              pooled: bool = False, fitted_on: list[Recording] | None = None
              ) -> list[Replayed]:
    """The rule (see the module docstring) run over `recording`'s answers."""
    judged = [(r, guesses(r, recording, sentence, config)) for r in recording.records]
    if fitted_on is not None:
        seen = [guesses(r, other, sentence, config) for other in fitted_on
                for r in other.records]
        rule = fit_rule(seen, costs, config)
        return [run_rule(rule, r, positions, costs, config) for r, positions in judged]
    groups: dict[str, list[tuple[dict, list]]] = {}
    for record, positions in judged:
        groups.setdefault("all" if pooled else record["category"], []).append(
            (record, positions))
    out = []
    for items in groups.values():
        rule = fit_rule([positions for _, positions in items], costs, config)
        out += [run_rule(rule, r, positions, costs, config) for r, positions in items]
    return out


def print_hindsight(recording: Recording, costs: BatchCosts, curve_name: str, name: str,
                    fitted_on: list[Recording]) -> None:
    """replay run --hindsight: the rules on match length, then with the sentence's end (where
    the recording has marks), per category and one for all; and fitted on other recordings."""
    evidence = [("", False)]
    if recording.marks is not None:  # else `replay words` writes them
        evidence.append((", keyed on the sentence's end", True))
    for title, sentence in evidence:
        variants = [("", {"pooled": False}), (" (one for all categories)", {"pooled": True})]
        if fitted_on:
            variants.append((" (one for all, fitted on the --fit-on recordings)",
                             {"fitted_on": fitted_on}))
        for how, options in variants:
            rows = hindsight(recording, costs, sentence=sentence, **options)
            print(f"\n## {name}, curve {curve_name}: best fixed rule in hindsight{how}{title}\n")
            print(format_table(summarise(rows), "hindsight" if "fitted" not in how else "rule"))
