"""Turn units for dialogue: transcripts of visits, meetings and scripts (issue 21).

Sentence units cut a speaker's turn into pieces that lose their speaker, and a transcript's
many back-channel turns ("Yeah .", "[patient] mm-hmm .") look central to any similarity
measure because their few words occur on every other line. Here a turn (a line led by a
speaker tag) is one unit, cut into runs of whole sentences when it is long; a back-channel
turn joins the turn it answers instead of standing on its own. A document that is not a
dialogue gets exactly the sentence units.

Speaker tags recognised at the start of a line: ``Name:`` / ``NAME :`` (one to four words),
``[doctor]``, ``SPEAKER_1:``, ``Speaker 2:``, each optionally after a timestamp
(``00:01:02``, ``[00:01]``). A document is a dialogue when at least two tags lead three lines
or more each and tagged lines are at least a third of its lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval
from budgetctx.unitizers._base import Segmentation, base_groups, units_from_groups
from budgetctx.unitizers._segment import Segment, segment_text
from budgetctx.unitizers._sentence import MAX_WORDS

__all__ = ["TurnUnitizer", "dialogue_turns", "is_backchannel", "spoken_words", "strip_tags"]

_TIME = r"(?:\[?\(?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\)?\]?[ \t]*(?:-->[^\n]*?)?[ \t-]*)"
_TAG = re.compile(
    rf"^{_TIME}?(?:\[(?P<bracket>[A-Za-z][\w .'-]{{0,30}})\]|"
    r"(?P<name>[A-Za-z][\w.'()&/-]*(?:[ \t][\w.'()&/-]+){0,3}?)[ \t]*:(?=[ \t]|$))"
)
_LETTERS = re.compile(r"[A-Za-z]{2}")
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
_MARKUP = re.compile(r"\{[^}]*\}|\([^)]*\)|\[[^\]]*\]")
#: Words that make up acknowledgements, assents and hesitations, and nothing else.
BACKCHANNEL_WORDS = frozenset(
    [
        "mm",
        "mmm",
        "mm-hmm",
        "mhm",
        "hmm",
        "hm",
        "uh-huh",
        "uh",
        "huh",
        "um",
        "uhm",
        "er",
        "ah",
        "oh",
        "ok",
        "okay",
        "yeah",
        "yep",
        "yes",
        "yeah",
        "no",
        "nope",
        "right",
        "alright",
        "all",
        "sure",
        "thanks",
        "thank",
        "you",
        "great",
        "good",
        "fine",
        "cool",
        "wow",
        "really",
        "so",
        "well",
        "and",
        "i",
        "see",
        "got",
        "it",
        "exactly",
        "true",
        "indeed",
        "correct",
        "hi",
        "hello",
        "bye",
        "sorry",
        "pardon",
    ]
)
#: Labels that lead lines of notes, forms and abstracts, never a speaker's turn.
_NOT_SPEAKERS = frozenset(
    {
        "history", "hpi", "plan", "assessment", "impression", "diagnosis", "diagnoses",
        "medications", "medication", "allergies", "allergy", "results", "result", "conclusion",
        "conclusions", "background", "methods", "objective", "objectives", "subjective", "vitals",
        "labs", "lab", "exam", "examination", "note", "notes", "findings", "summary", "course",
        "disposition", "procedure", "procedures", "indication", "indications", "comment",
        "comments", "date", "time", "page", "bp", "hr", "rr", "temp", "pulse", "weight", "height",
        "spo2", "sat", "o2", "pain", "total", "score", "dose", "route", "frequency", "signature",
        "signed",
    }
)  # fmt: skip
_MIN_TAGGED_SHARE = 1 / 3
_MIN_TAG_LINES = 3


def is_backchannel(body: str) -> bool:
    """Whether a turn's words (its tag and bracketed markup removed) only acknowledge.

    >>> [is_backchannel(t) for t in ("Mm-hmm .", "Okay, thank you.", "No, it started Monday.")]
    [True, True, False]
    """
    words = _WORD.findall(_MARKUP.sub(" ", body).lower())
    return len(words) <= 4 and all(w in BACKCHANNEL_WORDS for w in words)


def _tag(line: str) -> tuple[str, int] | None:
    """``(speaker, end of the tag)`` when ``line`` starts with a speaker tag."""
    m = _TAG.match(line)
    if m is None:
        return None
    name = (m.group("bracket") or m.group("name") or "").strip()
    if not name or name.lower().split()[-1] in _NOT_SPEAKERS:
        return None
    return name.upper(), m.end()


def strip_tags(text: str) -> str:
    """``text`` without its leading speaker tag, if it has one.

    >>> strip_tags("[doctor] any chest pain ?"), strip_tags("Grad G: No .")
    ('any chest pain ?', 'No .')
    """
    tag = _tag(text)
    return text[tag[1] :].strip() if tag is not None else text


def spoken_words(text: str) -> list[str]:
    """The words of ``text`` once its leading speaker tag and bracketed markup are removed.

    >>> spoken_words("Grad G: {vocalsound} I don't know .")
    ['I', "don't", 'know']
    """
    return _WORD.findall(_MARKUP.sub(" ", strip_tags(text)))


def dialogue_turns(text: str) -> list[tuple[int, int, bool]] | None:
    """The turns of a dialogue as ``(start, end, backchannel)`` character spans, one per
    non-blank line (untagged lines, such as stage directions, are turns of their own), or
    None when ``text`` is not a dialogue.

    >>> text = "A: I hurt.\\nB: Yeah.\\nA: Pain since Monday.\\nB: OK.\\nA: Bye.\\nB: No."
    >>> dialogue_turns(text)[:2]
    [(0, 10, False), (11, 19, True)]
    >>> dialogue_turns("Chest pain. Troponin negative.") is None
    True
    """
    lines: list[tuple[int, int, tuple[str, int] | None]] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        stripped = body.strip()
        if stripped:
            start = pos + len(body) - len(body.lstrip())
            lines.append((start, start + len(stripped), _tag(stripped)))
        pos += len(raw)
    counts: dict[str, int] = {}
    for _, _, tag in lines:
        if tag is not None:
            counts[tag[0]] = counts.get(tag[0], 0) + 1
    speakers = {name for name, c in counts.items() if c >= _MIN_TAG_LINES}
    bodies = [text[a + t[1] : b] for a, b, t in lines if t is not None and t[0] in speakers]
    if len(speakers) < 2 or len(bodies) < _MIN_TAGGED_SHARE * len(lines):
        return None
    # Turns are speech: a form's repeated fields ("BP: 120/80") hold values, not words.
    if sum(1 for body in bodies if _LETTERS.search(body)) < len(bodies) / 2:
        return None
    turns = []
    for start, end, tag in lines:
        back = tag is not None and tag[0] in speakers and is_backchannel(text[start + tag[1] : end])
        turns.append((start, end, back))
    return turns


def turn_groups(
    text: str, segments: Sequence[Segment], *, max_turn_words: int
) -> list[list[int]] | None:
    """Segment indices grouped into turn units (see the module docstring), or None when
    ``text`` is not a dialogue. Groups are runs of consecutive segments, in order."""
    turns = dialogue_turns(text)
    if turns is None:
        return None
    # Each segment goes to the turn (line) it starts in: segments never cross lines here.
    groups: list[list[int]] = []
    back: list[bool] = []
    owner: list[int] = []  # the turn of each group
    words: list[int] = []  # the words of each group
    k = 0
    for i, seg in enumerate(segments):
        while k + 1 < len(turns) and turns[k + 1][0] <= seg.start:
            k += 1
        n = len(seg.text.split())
        if groups and owner[-1] == k:
            after_header = segments[groups[-1][-1]].kind == "header"
            if after_header or words[-1] + n <= max_turn_words:
                groups[-1].append(i)
                words[-1] += n
                continue
        groups.append([i])
        back.append(turns[k][2])
        owner.append(k)
        words.append(n)
    return _merge_backchannel(groups, back)


def _merge_backchannel(groups: list[list[int]], back: list[bool]) -> list[list[int]]:
    """A back-channel turn joins the unit before it (the turn it answers); one at the very
    start joins the unit after it."""
    out: list[list[int]] = []
    carry: list[int] = []
    for group, is_back in zip(groups, back, strict=True):
        if is_back and out:
            out[-1].extend(group)
        elif is_back:
            carry.extend(group)
        else:
            out.append(carry + group)
            carry = []
    if carry:
        out.append(carry)
    return out


@dataclass(frozen=True)
class TurnUnitizer(Component, name="turn"):
    """Dialogue turns as units (long turns cut into runs of at most ``max_turn_words`` words
    of whole sentences, back-channel turns joined to the turn they answer); sentence units
    for a document that is not a dialogue.

    >>> seg = TurnUnitizer().unitize("A: I have had pain. It is bad.\\nB: Okay.\\nA: Since May.\\n"
    ...                              "B: Where?\\nA: Chest.\\nB: Right.")
    >>> [u.text for u in seg.units]
    ['A: I have had pain. It is bad. B: Okay.', 'A: Since May.', 'B: Where?', 'A: Chest. B: Right.']
    """

    max_words: int | None = 150
    max_turn_words: int = 60

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "max_words": MAX_WORDS,
        "max_turn_words": Interval(
            int, 1, None, fix="e.g. 60; a longer turn is cut between its sentences."
        ),
    }

    def unitize(self, text: str) -> Segmentation:
        segments = tuple(segment_text(text, max_words=self.max_words))
        groups = turn_groups(text, segments, max_turn_words=self.max_turn_words)
        if groups is None:
            groups = base_groups(segments)
        return Segmentation(text, segments, units_from_groups(segments, groups), self.name)
