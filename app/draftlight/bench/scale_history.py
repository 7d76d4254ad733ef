"""A year of use, made up from a seed: a history of many conversations (bench scale).

Each conversation has about MESSAGES_EACH messages of made-up words (questions of one to three
sentences, replies of four to twelve), its replies with stored runs and figures as the window
stores them, every BRANCH_EVERY-th a regenerated last reply (a branch), every ATTACH_EVERY-th a
file's text attached to its first question. Then one conversation per long length, of about
that many tokens (CHARS_PER_TOKEN), in turns of a question of TURN_CHARS / 4 and a reply of
TURN_CHARS. The same seed writes the same
file. The history is written through History (its schema, its search index) in one
transaction, as a year of single writes would leave it.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

from draftlight.store.history import History

MESSAGES_EACH = 40
BRANCH_EVERY = 8
ATTACH_EVERY = 20
ATTACHMENT_CHARS = 8_000
TURN_CHARS = 1_600
CHARS_PER_TOKEN = 2.4  # made-up words, measured on SmolLM2's tokenizer
RARE = "zebrafinch"  # a word in exactly one conversation: a search that finds one
COMMON = "window"  # a word in most conversations: a search that finds hundreds


@dataclass
class Built:
    path: Path
    conversations: int
    messages: int
    seconds: float
    long: dict[int, int]  # length in tokens -> conversation id
    branched: int  # a conversation with a branch


class Words:
    """Made-up prose from a seed: syllables into words, words into sentences."""

    def __init__(self, rng: random.Random) -> None:
        syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
        self.rng = rng
        self.vocabulary = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3)))
                           for _ in range(3000)] + [COMMON] * 3 + ["the", "of", "and"] * 40

    def sentence(self) -> str:
        words = [self.rng.choice(self.vocabulary) for _ in range(self.rng.randint(6, 18))]
        return " ".join(words).capitalize() + self.rng.choice(".....?!")

    def prose(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def chars(self, count: int) -> str:
        out: list[str] = []
        while sum(map(len, out)) < count:
            out.append(self.prose(5))
        return "\n\n".join(out)[:count]


def figures(rng: random.Random, text: str) -> tuple[str, str]:
    """A stored reply's runs (provenance) and figures, shaped as the window writes them."""
    runs, at = [], 0
    while at < len(text) - 40 and len(runs) < 12:
        at += rng.randint(20, 200)
        end = min(len(text), at + rng.randint(8, 60))
        runs.append([at, end, rng.randint(2, 12)])
        at = end
    tokens = int(len(text) / CHARS_PER_TOKEN)
    stats = {"new_tokens": tokens, "target_passes": max(1, tokens * 2 // 3),
             "drafted": tokens // 2, "accepted": tokens // 3, "seconds": tokens / 40,
             "prompt_tokens": tokens * 4, "mode": "auto",
             "passes": [[rng.randint(0, 4), rng.randint(0, 4)] for _ in range(min(tokens, 200))]}
    return json.dumps(runs), json.dumps(stats)


def build(path: Path, conversations: int = 5_000, seed: int = 0,
          long: tuple[int, ...] = (2_000, 8_000, 30_000),
          messages_each: int = MESSAGES_EACH) -> Built:
    """Write the history at `path` (a new file)."""
    started = time.perf_counter()
    rng = random.Random(seed)
    words = Words(rng)
    History(path).close()  # the schema and its index, as the app creates them
    history = History(path)
    now = time.time() - 365 * 86_400
    messages = 0
    long_ids: dict[int, int] = {}
    branched = 0
    try:
        with history.transaction() as db:  # one for the whole year
            for number in range(conversations + len(long)):
                tokens = long[number - conversations] if number >= conversations else 0
                title = " ".join(words.sentence().split()[:5])
                if number == conversations // 2:
                    title += f" {RARE}"
                now += 365 * 86_400 / (conversations + len(long))
                conversation = db.execute(
                    "INSERT INTO conversations (title, created, updated) VALUES (?, ?, ?)",
                    (title, now, now)).lastrowid
                written, branch = _write_messages(db, rng, words, conversation, number, tokens,
                                                  now, messages_each)
                messages += written
                if branch:
                    branched = branched or conversation
                if tokens:
                    long_ids[tokens] = conversation
    finally:
        history.close()
    return Built(path, conversations + len(long), messages, time.perf_counter() - started,
                 long_ids, branched)


def _write_messages(db, rng: random.Random, words: Words, conversation: int, number: int,
                    tokens: int, now: float, messages_each: int) -> tuple[int, bool]:
    """The messages of the `number`-th conversation (of about `tokens` tokens, 0: an ordinary
    one), its branch if it has one, and the leaf it shows: (messages written, whether it has a
    branch)."""
    parent, last_user, written = None, None, 0
    pair = TURN_CHARS + TURN_CHARS // 4  # a question and its reply
    count = (max(2, int(tokens * CHARS_PER_TOKEN / pair) * 2) if tokens
             else rng.randint(messages_each // 2, messages_each * 3 // 2) // 2 * 2)
    for turn in range(count):
        user = turn % 2 == 0
        if tokens:
            text = words.chars(TURN_CHARS // (4 if user else 1))
        else:
            text = words.prose(rng.randint(1, 3) if user else rng.randint(4, 12))
        if user and turn == 0 and number % ATTACH_EVERY == 0:
            text = f"report.txt\n```\n{words.chars(ATTACHMENT_CHARS)}\n```\n{text}"
        runs, stats = (None, None) if user else figures(rng, text)
        parent = db.execute(
            "INSERT INTO messages (conversation_id, role, text, provenance, stats,"
            " status, mode, created, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (conversation, "user" if user else "assistant", text, runs, stats,
             "complete", None if user else "auto", now, parent)).lastrowid
        last_user = parent if user else last_user
        written += 1
    branch = number % BRANCH_EVERY == 1 and not tokens and last_user is not None
    if branch:
        text = words.prose(6)  # the last question answered again: a branch
        runs, stats = figures(rng, text)
        parent = db.execute(
            "INSERT INTO messages (conversation_id, role, text, provenance, stats,"
            " status, mode, created, parent_id) VALUES (?, 'assistant', ?, ?, ?, "
            "'complete', 'auto', ?, ?)",
            (conversation, text, runs, stats, now, last_user)).lastrowid
        written += 1
    db.execute("UPDATE conversations SET shown_leaf = ? WHERE id = ?", (parent, conversation))
    return written, branch
