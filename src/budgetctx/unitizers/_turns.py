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
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import ClassVar, Literal, NamedTuple

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval
from budgetctx.unitizers._base import (
    Segmentation,
    _unit,
    base_groups,
    units_from_groups,
)
from budgetctx.unitizers._segment import Segment, segment_text
from budgetctx.unitizers._sentence import MAX_WORDS

__all__ = [
    "TurnLine",
    "TurnStatistics",
    "TurnUnitizer",
    "dialogue_turns",
    "is_backchannel",
    "spoken_words",
    "strip_tags",
    "turn_lines",
    "turn_statistics",
    "with_speakers",
]

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
#: Hesitations that transcribers write down and script writers almost never do.
HESITATION_WORDS = frozenset(["um", "uh", "uhm", "umm", "er", "erm", "mm", "mmm", "hmm", "mhm"])
#: Transcribed, unscripted speech (a meeting, a visit) has at least this share of back-channel
#: turns or this rate of hesitations per spoken word. Chosen on the validation splits: the
#: eight L-Eval meeting transcripts have 0.27-0.39 back-channel turns and 0.024-0.108
#: hesitations per word, the two TV scripts 0.07 and 0.001; the thresholds sit in the gap.
SPONTANEOUS_BACKCHANNEL_SHARE = 0.15
SPONTANEOUS_HESITATION_RATE = 0.01


def is_backchannel(body: str) -> bool:
    """Whether a turn's words (its tag and bracketed markup removed) only acknowledge.

    >>> [is_backchannel(t) for t in ("Mm-hmm .", "Okay, thank you.", "No, it started Monday.")]
    [True, True, False]
    """
    words = _WORD.findall(_MARKUP.sub(" ", body).lower())
    return len(words) <= 4 and all(w in BACKCHANNEL_WORDS for w in words)


def _tag(line: str) -> tuple[str, int, str] | None:
    """``(speaker, end of the tag, speaker as written)`` when ``line`` starts with a speaker
    tag."""
    m = _TAG.match(line)
    if m is None:
        return None
    name = (m.group("bracket") or m.group("name") or "").strip()
    if not name or name.lower().split()[-1] in _NOT_SPEAKERS:
        return None
    return name.upper(), m.end(), name


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


class TurnLine(NamedTuple):
    """One non-blank line of a dialogue: its span, whether it is a back-channel turn, where
    its speaker tag ends (-1 without one) and the speaker as written."""

    start: int
    end: int
    backchannel: bool
    tag_end: int
    speaker: str | None


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
    lines = turn_lines(text)
    return None if lines is None else [(t.start, t.end, t.backchannel) for t in lines]


def turn_lines(text: str) -> list[TurnLine] | None:
    """:func:`dialogue_turns` with each line's tag (what turn statistics and speakers read),
    or None when ``text`` is not a dialogue."""
    lines: list[tuple[int, int, tuple[str, int, str] | None]] = []
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
        if tag is None:
            turns.append(TurnLine(start, end, False, -1, None))
            continue
        back = tag[0] in speakers and is_backchannel(text[start + tag[1] : end])
        turns.append(TurnLine(start, end, back, tag[1], tag[2]))
    return turns


@dataclass(frozen=True)
class TurnStatistics:
    """How a dialogue is spoken: statistics that mean the same in any corpus.

    ``backchannel_share``: share of the speakers' turns that only acknowledge ("Yeah .",
    "mm-hmm"); ``hesitation_rate``: hesitations ("um", "uh") per spoken word;
    ``mean_turn_words``: spoken words per turn.

    >>> s = turn_statistics("A: Um, I hurt.\\nB: Yeah.\\nA: Pain since Monday.\\nB: OK.\\n"
    ...                     "A: Bye.\\nB: No.")
    >>> (s.backchannel_share, s.hesitation_rate, s.spontaneous)
    (0.666667, 0.1, True)
    """

    backchannel_share: float
    hesitation_rate: float
    mean_turn_words: float

    @property
    def spontaneous(self) -> bool:
        """Transcribed speech (meetings, visits) rather than written dialogue (scripts)."""
        return (
            self.backchannel_share >= SPONTANEOUS_BACKCHANNEL_SHARE
            or self.hesitation_rate >= SPONTANEOUS_HESITATION_RATE
        )

    def to_dict(self) -> dict[str, float | bool]:
        return {**asdict(self), "spontaneous": self.spontaneous}


def turn_statistics(
    text: str, *, lines: Sequence[TurnLine] | Literal["find"] | None = "find"
) -> TurnStatistics | None:
    """:class:`TurnStatistics` of ``text``, or None when it is not a dialogue. ``lines``:
    :func:`turn_lines` of ``text`` when the caller has them already."""
    if lines == "find":
        lines = turn_lines(text)
    if lines is None:
        return None
    tagged = back = words = hesitations = 0
    for line in lines:
        if line.tag_end < 0:
            continue  # a stage direction or a caption, not a turn
        tagged += 1
        back += line.backchannel
        body = text[line.start + line.tag_end : line.end].strip()
        spoken = [w.lower() for w in _WORD.findall(_MARKUP.sub(" ", body))]
        words += len(spoken)
        hesitations += sum(w in HESITATION_WORDS for w in spoken)
    return TurnStatistics(
        backchannel_share=round(back / max(tagged, 1), 6),
        hesitation_rate=round(hesitations / max(words, 1), 6),
        mean_turn_words=round(words / max(tagged, 1), 6),
    )


def with_speakers(
    seg: Segmentation, *, lines: Sequence[TurnLine] | Literal["find"] | None = "find"
) -> Segmentation:
    """``seg`` with each unit's ``speaker`` set when the document is a dialogue: the tag, as
    written, of the turn the unit starts in (None for a stage direction). Spans, texts and
    costs are untouched, so a sentence cut from a long turn keeps its speaker in provenance
    without a character added to the context.

    >>> from budgetctx.unitizers import get_unitizer
    >>> seg = get_unitizer("sentence").unitize(
    ...     "[doctor] How long? Any fever?\\n[patient] Two days. No fever.\\n[doctor] Okay.\\n"
    ...     "[patient] It hurts.\\n[doctor] Where?\\n[patient] Here.")
    >>> [(u.text, u.speaker) for u in with_speakers(seg).units][1:4]
    [('Any fever?', 'doctor'), ('[patient] Two days.', 'patient'), ('No fever.', 'patient')]
    """
    if lines == "find":
        lines = turn_lines(seg.document) if seg.units else None
    if lines is None or not seg.units:
        return seg
    starts = [line.start for line in lines]
    units = tuple(
        _unit(
            u.id,
            u.segments,
            u.spans,
            u.text,
            u.kind,
            u.section,
            lines[max(bisect_right(starts, u.spans[0][0]) - 1, 0)].speaker,
        )
        if u.spans
        else u
        for u in seg.units
    )
    return replace(seg, units=units)


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
