"""Fit a conversation into the context window, dropping its oldest turns when it must."""

from __future__ import annotations

from typing import Callable

from draftlight.engine.core.errors import ContextOverflowError

Messages = list[dict[str, str]]
DROP_BLOCK = 4  # user turns dropped at a time when a conversation outgrows the context


def fit_prompt(tokenize_chat: Callable[[Messages], list[int]], messages: Messages, reserve: int,
               n_ctx: int) -> tuple[list[int], int]:
    """Tokens of the conversation, dropping its oldest turns until `reserve` new tokens fit.

    The system prompt and the latest message are always kept, and a cut is made only
    before a user turn (templates insist on user/assistant alternation). Turns are dropped
    DROP_BLOCK user turns at a time, at cut points that stay put as the conversation grows,
    so the following replies reuse the KV cache instead of evaluating it all again.
    Returns (tokens, dropped).
    """
    system = [m for m in messages[:1] if m["role"] == "system"]
    turns = messages[len(system):]
    users = [i for i, m in enumerate(turns) if i and m["role"] == "user"]
    cuts = [0] + users[DROP_BLOCK - 1::DROP_BLOCK]
    if users and cuts[-1] != users[-1]:
        cuts.append(users[-1])  # the last resort: only the latest user turn
    fitting: dict[int, list[int]] = {}

    def fits(dropped: int) -> bool:
        tokens = tokenize_chat(system + turns[dropped:])
        fitting[dropped] = tokens
        return len(tokens) + reserve <= n_ctx

    low, high = 0, len(cuts) - 1  # bisect for the first cut that fits (fewer tokens later)
    if not fits(cuts[high]):
        tokens = fitting[cuts[high]]
        raise ContextOverflowError(
            f"the message is {len(tokens):,} tokens long; with room for a reply "
            f"({reserve:,} tokens) it does not fit the {n_ctx:,}-token context")
    while low < high:
        middle = (low + high) // 2
        if fits(cuts[middle]):
            high = middle
        else:
            low = middle + 1
    return fitting[cuts[low]], cuts[low]  # every index bisection ends on was tried


def answered_start(tokenize_chat: Callable[[Messages], list[int]], messages: Messages,
                   prompt: list[int]) -> int:
    """Where the last of `messages` (the one being answered) starts in `prompt`, their tokens:
    where `prompt` parts from the same conversation with that message left empty."""
    if not messages:
        return len(prompt)
    emptied = tokenize_chat(messages[:-1] + [{**messages[-1], "content": ""}])
    start = 0
    for ours, theirs in zip(prompt, emptied):
        if ours != theirs:
            break
        start += 1
    return start
