"""The history strategy of :func:`~budgetctx.fit_messages`: whole turns, oldest dropped first.

A chat is split into *turns*: a turn starts at a user message (a run of consecutive user
messages is one turn, and so is a user message right after a tool result) and holds everything
up to the next one: the assistant's answer, its tool calls and their results. A turn never
starts while a tool call of the turn before is still unanswered, so a tool call and its result
always stay together, and the kept history always starts on a user message, never on an orphan
tool result or assistant turn. System and developer messages belong to no turn: they are always
kept, where they are.

When a chat is over the budget, the last ``keep_turns`` turns are never dropped; older
turns are dropped, oldest first, until what is left can be fitted by condensing without
shrinking the condensable text more than :data:`MAX_SHRINK` times (and at all: the texts
that cannot be condensed must fit). The rest is then condensed as before (one global
selection), so a long document in the current turn is condensed, not dropped, while a
60-turn agent history loses its oldest turns first.

>>> chat = [
...     {"role": "system", "content": "Be brief."},
...     {"role": "user", "content": "Hi."},
...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
...     {"role": "tool", "tool_call_id": "c1", "content": "{}"},
...     {"role": "assistant", "content": "Done."},
...     {"role": "user", "content": "And now?"},
... ]
>>> split_turns(chat)
[[1, 2, 3, 4], [5]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from budgetctx._errors import InputError

__all__ = [
    "MAX_SHRINK",
    "HistoryPlan",
    "dropped_note",
    "fit_dropping",
    "plan_history",
    "split_turns",
]

R = TypeVar("R")

#: Older turns are dropped until the condensable text left needs to shrink at most this many
#: times to fit: condensing a history 4x keeps about one sentence in four, below which a
#: model gets fragments of every old turn instead of whole recent ones.
MAX_SHRINK = 4.0
_SYSTEM_ROLES = ("system", "developer")


def split_turns(messages: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """Message indices grouped into turns (system/developer messages are in none)."""
    turns: list[list[int]] = []
    current: list[int] = []
    pending: set[str] = set()
    previous = ""
    for i, msg in enumerate(messages):
        role = str(msg.get("role"))
        if role in _SYSTEM_ROLES:
            continue
        # A user message right after a tool result (no answer between) goes on the same
        # exchange: Anthropic sends tool results and the next question in one user message.
        starts = role == "user" and previous not in ("user", "tool") and not pending
        if starts and current:
            turns.append(current)
            current = []
        current.append(i)
        if role == "assistant":
            for call in msg.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    pending.add(str(call.get("id")))
            if msg.get("function_call") is not None:
                pending.add("\0function")
        elif role == "tool":
            pending.discard(str(msg.get("tool_call_id")))
        elif role == "function":
            pending.discard("\0function")
        previous = role
    if current:
        turns.append(current)
    return turns


@dataclass(frozen=True)
class HistoryPlan:
    """Turns (message indices) and how many of the oldest to drop first."""

    turns: tuple[tuple[int, ...], ...]
    droppable: int
    drop: int

    def kept(self, n_messages: int, drop: int) -> list[int]:
        gone = {i for turn in self.turns[:drop] for i in turn}
        return [i for i in range(n_messages) if i not in gone]


def plan_history(
    messages: Sequence[Mapping[str, Any]],
    floors: Sequence[int],
    condensable: Sequence[int],
    *,
    limit: int,
    keep_turns: int,
    overhead: int,
) -> HistoryPlan:
    """How many of the oldest turns to drop before condensing.

    ``floors[i]`` is what message ``i`` costs with its condensable texts emptied;
    ``condensable[i]`` what those texts cost verbatim. The plan drops the fewest oldest turns
    such that the floor fits and the condensable text left is at most :data:`MAX_SHRINK`
    times the room it gets; when no number does, every droppable turn.
    """
    turns = split_turns(messages)
    droppable = max(len(turns) - keep_turns, 0)
    floor = overhead + sum(floors)
    cond = sum(condensable)
    drop = droppable
    for k in range(droppable + 1):
        room = limit - floor
        if room >= 0 and cond <= MAX_SHRINK * room:
            drop = k
            break
        if k < droppable:
            floor -= sum(floors[i] for i in turns[k])
            cond -= sum(condensable[i] for i in turns[k])
    return HistoryPlan(tuple(tuple(t) for t in turns), droppable, drop)


def fit_dropping(
    messages: Sequence[Mapping[str, Any]],
    plan: HistoryPlan,
    fit: Callable[[list[Mapping[str, Any]], Callable[[int], int]], R],
) -> tuple[R, list[int], int]:
    """``fit`` on the messages left after dropping ``plan.drop`` turns, one more turn at a
    time while what cannot be condensed still does not fit; also the kept input indices and
    the number of turns dropped.

    ``fit(kept_messages, to_input)`` fits a subset; ``to_input`` maps a subset index to the
    input index.
    """
    n = len(messages)
    drop = plan.drop
    while True:
        kept = plan.kept(n, drop)
        try:
            return fit([messages[i] for i in kept], kept.__getitem__), kept, drop
        except InputError as exc:
            # Only "what cannot be condensed does not fit" (parameter budget) is cured by
            # dropping an older turn; anything else is a bad message and stays an error.
            if exc.parameter != "budget" or drop >= plan.droppable:
                raise
            drop += 1


def dropped_note(drop: int, n_messages: int) -> str:
    """The note that says what the history strategy dropped."""
    turns = "turn" if drop == 1 else "turns"
    return (
        f"history: dropped the {drop} oldest {turns} ({n_messages} messages) whole, so that "
        "the rest fits; kept the system messages and the later turns"
    )
