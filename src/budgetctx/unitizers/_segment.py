"""Clinical-aware segmentation of a document into sentence-sized segments.

A *segment* is the smallest piece of text budgetctx renders: a sentence, a list item or a
header line, with its exact character span in the input. Every unitizer builds its units from
these segments, so provenance is exact whatever the unitization.

The splitter first reads the line structure (blank lines, headers, list items, one-fact lines
such as vitals), because clinical notes carry meaning in it, and only then asks blingfire for
sentence boundaries inside each block of running text. blingfire keeps most abbreviations
(Dr., p.o., b.i.d.) intact; the few clinical ones it splits are merged back.
"""

from __future__ import annotations

import bisect
import ctypes
import functools
import itertools
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any

import blingfire
import numpy as np

__all__ = ["Segment", "is_header_text", "segment_text"]


@dataclass(frozen=True, slots=True)
class Segment:
    """A contiguous piece of the input: ``text == document[start:end]``.

    ``kind`` is ``"sentence"``, ``"item"`` (a list item) or ``"header"`` (a header line).
    ``heading`` is set when this segment opens a section: the normalised header name, whether
    the header stands on its own line or leads the sentence ("HOSPITAL COURSE: The patient ...").
    """

    start: int
    end: int
    text: str
    kind: str = "sentence"
    heading: str | None = None


# Segments are built by the hundred per document: set through their slots' descriptors they
# are the same objects as Segment(...) makes (equal, same hash and repr) at about half the
# cost of the frozen dataclass's generated __init__ (issue 27, sixth pass; Segment has no
# __post_init__ to skip, a test keeps it so).
_NEW = object.__new__
_SET_START, _SET_END, _SET_TEXT, _SET_KIND, _SET_HEADING = (
    Segment.__dict__[f].__set__ for f in ("start", "end", "text", "kind", "heading")
)


def _segment(start: int, end: int, text: str, kind: str, heading: str | None) -> Segment:
    """``Segment(start, end, text, kind, heading)``, built faster."""
    seg: Segment = _NEW(Segment)
    _SET_START(seg, start)
    _SET_END(seg, end)
    _SET_TEXT(seg, text)
    _SET_KIND(seg, kind)
    _SET_HEADING(seg, heading)
    return seg


# --- header vocabulary -------------------------------------------------------------------------
# Clinical note sections (MIMIC, MTSamples, H&P templates) and generic report/abstract sections.
_KNOWN_HEADERS = {
    "chief complaint",
    "reason for admission",
    "reason for visit",
    "reason for consultation",
    "history of present illness",
    "hpi",
    "history",
    "past medical history",
    "pmh",
    "past surgical history",
    "psh",
    "social history",
    "family history",
    "medications",
    "current medications",
    "home medications",
    "medications on admission",
    "admission medications",
    "allergies",
    "review of systems",
    "ros",
    "physical examination",
    "physical exam",
    "exam",
    "vital signs",
    "vitals",
    "laboratory data",
    "laboratory",
    "laboratory studies",
    "labs",
    "pertinent results",
    "imaging",
    "radiology",
    "studies",
    "hospital course",
    "brief hospital course",
    "clinical course",
    "course in the hospital",
    "history and hospital course",
    "hospital course by problem",
    "assessment and plan",
    "assessment/plan",
    "assessment",
    "plan",
    "impression",
    "impression and plan",
    "diagnosis",
    "diagnoses",
    "admission diagnosis",
    "admission diagnoses",
    "admitting diagnosis",
    "discharge diagnosis",
    "discharge diagnoses",
    "final diagnosis",
    "final diagnoses",
    "principal diagnosis",
    "secondary diagnoses",
    "procedures",
    "procedures performed",
    "operations",
    "consultations",
    "consults",
    "discharge medications",
    "discharge instructions",
    "discharge disposition",
    "disposition",
    "discharge condition",
    "condition on discharge",
    "condition at discharge",
    "follow-up",
    "followup",
    "follow up",
    "followup instructions",
    "follow-up instructions",
    "date of admission",
    "date of discharge",
    "admission date",
    "discharge date",
    "attending",
    "service",
    "code status",
    "diet",
    "activity",
    "major surgical or invasive procedure",
    "recommendations",
    "problem list",
    # abstracts, reports, reviews
    "abstract",
    "background",
    "introduction",
    "objective",
    "objectives",
    "aim",
    "aims",
    "purpose",
    "methods",
    "method",
    "materials and methods",
    "design",
    "setting",
    "participants",
    "interventions",
    "main outcome measures",
    "results",
    "main results",
    "findings",
    "discussion",
    "conclusion",
    "conclusions",
    "authors' conclusions",
    "summary",
    "search methods",
    "selection criteria",
    "data collection and analysis",
    "rationale",
    "eligibility criteria",
    "outcomes",
    "risk of bias",
    "synthesis methods",
    "included studies",
    "synthesis of results",
    "limitations",
    "funding",
    "registration",
    "key points",
    "context",
    "importance",
    "evidence acquisition",
    "evidence synthesis",
    "recommendation",
    "references",
    "acknowledgements",
    "acknowledgments",
}

_MD_HEADER = re.compile(r"#{1,6}[ \t]+(?P<name>\S.*?)[ \t#]*")
# ALL-CAPS header text: capitals, spaces and a little punctuation, at least one 3-letter word.
_CAPS_HEADER = re.compile(r"(?=.*[A-Z]{3})[A-Z][A-Z0-9 /&,'()#\-]{1,78}")
_TITLE_WORD = r"(?:[A-Z][\w'/\-]*|and|of|or|the|in|on|for|to|&)"
_TITLE_HEADER = re.compile(rf"{_TITLE_WORD}(?: {_TITLE_WORD}){{0,6}}")
# "HEADER: body" or "Known header: body" at the start of a line.
_INLINE_HEADER = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9 /&,'()#\-]{1,60}?)[ \t]*:[ \t]+(?=\S)")
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*•·▪◦‣–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=[ \t]))[ \t]+")
_ONLY_MARKER = re.compile(r"(?:[-*•·▪◦‣–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])")
_CONTINUATION_END = re.compile(
    r"(?:[,(/&\-]|\b(?:and|or|of|the|to|with|in|for|a|an|by|on|at|from|into|per|via|than|"
    r"is|was|were|are))$"
)
_NUMBER = re.compile(r"\d+")
# The text after a block's last sentence end: a candidate run-in header.
_RUN_IN = re.compile(r"[.!?][\"')\]]*\s+(?P<tail>[A-Z][^.!?]*)$")
# "Name: ..." at the start of a line: a section label, a form field or a speaker's turn.
_LABEL = re.compile(r"(?P<name>[A-Za-z][\w .'()/&\-]{0,40}?)[ \t]*:(?=[ \t]|$)")

# Abbreviations after which blingfire's split is wrong when the next piece does not start a
# new sentence (lower case or a digit follows).
#: Titles before a name; the regexes and literal tests below are all built from this list.
_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Prof")
_TITLE_ALT = "|".join(_TITLES)
# Titles are never sentence-final: "Dr. XYZ saw the patient."
_TITLE_END = re.compile(rf"\b(?:{_TITLE_ALT}|Drs)\.$")
# A list marker stranded at the end of a sentence: "DISCHARGE MEDICATIONS: 1.", "b.i.d. 2."
_TRAILING_MARKER = re.compile(r"(?<=[:.;])\s+\(?(?P<n>\d{1,3})[.)]$")
# blingfire reads "Dr. Lee. Troponin ..." as one sentence (the name looks like an initial).
_NAME_END = re.compile(rf"\b(?:{_TITLE_ALT})\.\s+[A-Z][\w'\-]+\.(?=\s+[A-Z])")
#: Literal text that every match of _NAME_END contains (a cheap test before the regex).
_NAME_TITLES = tuple(f"{t}." for t in _TITLES)
#: Where a match of _NAME_END can start (one cannot start inside another: a scan finds all).
_TITLE_AT = re.compile(rf"(?:{_TITLE_ALT})\.")


def _title_positions(chunk: str) -> list[int]:
    """Ascending offsets of every title (``Dr.``, ``Mrs.``, ...) in ``chunk``."""
    # Substring tests first, in a plain loop: each skips through the text in C, where the
    # regex's search tests every character against its first-character class (about half of
    # this step on a block without a title, most blocks; issue 27, sixth pass). Every match
    # of _TITLE_AT is one of these strings.
    for title in _NAME_TITLES:
        if title in chunk:
            return [m.start() for m in _TITLE_AT.finditer(chunk)]
    return []


#: What every match of _TITLE_END ends with.
_TITLE_ENDINGS = (*_NAME_TITLES, "Drs.")
_ABBREV_END = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Prof|St|vs|approx|pt|pts|hx|sx|dx|tx|rx|no|No|fig|Fig|ca|mg|mL|ml|"
    r"e\.g|i\.e|p\.o|b\.i\.d|t\.i\.d|q\.i\.d|q\.h\.s|q\.d|q\.o\.d|p\.r\.n|y\.o|a\.m|p\.m|"
    r"h\.s|q\.\d+h|U\.S|et al)\.)$"
)


@functools.lru_cache(maxsize=4096)
def _normalise_heading(name: str) -> str:
    # Memoised: a document repeats its few labels on many lines (speakers, form fields), and
    # the same names come back from the pins and the clinical profile (issue 27).
    return re.sub(r"\s+", " ", name.strip().strip(":").strip()).upper()


def is_header_text(line: str) -> str | None:
    """Return the normalised section name if ``line`` (one stripped line) is a header."""
    if not line or len(line) > 80:
        return None
    if line[0] == "#" and (m := _MD_HEADER.fullmatch(line)):
        return _normalise_heading(m.group("name"))
    bare = line.rstrip(":").strip()
    if not bare:
        return None
    if bare.lower() in _KNOWN_HEADERS:
        return _normalise_heading(bare)
    words = bare.split()
    if (
        len(words) <= 8
        and _CAPS_HEADER.fullmatch(bare)
        and not bare.endswith((",", "-"))
        and len(_NUMBER.findall(bare)) < 2  # "TEMP 98, HR 72" is a line of values
    ):
        return _normalise_heading(bare)
    if line.endswith(":") and len(words) <= 6 and _TITLE_HEADER.fullmatch(bare):
        return _normalise_heading(bare)
    return None


def _inline_heading(line: str) -> tuple[str, int] | None:
    """``("HISTORY OF PRESENT ILLNESS", 28)`` for ``"HISTORY OF PRESENT ILLNESS: The ..."``."""
    if ":" not in line:  # every match holds one: most lines of running text are skipped
        return None
    m = _INLINE_HEADER.match(line)
    if not m:
        return None
    name = m.group("name").strip()
    if name.lower() in _KNOWN_HEADERS or (
        name.isupper() and len(name.split()) <= 8 and sum(c.isalpha() for c in name) >= 4
    ):
        return _normalise_heading(name), m.end()
    return None


def _known_heading(text: str) -> str | None:
    """The section name if ``text`` is exactly a vocabulary header ("Main results")."""
    bare = text.rstrip(":").strip()
    return _normalise_heading(bare) if bare.lower() in _KNOWN_HEADERS else None


def _speaker_labels(lines: list[_Line | None]) -> tuple[set[str], bool]:
    """Labels that lead three or more lines and are not section names: speakers in a
    transcript ("BRENNAN: ...", "Grad F: ...") or repeated form fields. Section names occur once
    or twice in a document; a speaker's label starts many turns. The second value is True when
    at least two such labels exist: the document is a dialogue, and then no unknown label at
    the start of a line is a section, however rarely its speaker talks."""
    counts: dict[str, int] = {}
    for line in lines:
        if line is not None and (m := _LABEL.match(line.text)):
            name = _normalise_heading(m.group("name"))
            if name.lower() not in _KNOWN_HEADERS:
                counts[name] = counts.get(name, 0) + 1
    speakers = {name for name, c in counts.items() if c >= 3}
    return speakers, len(speakers) >= 2


# --- line structure ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Line:
    start: int  # offset of first non-blank character
    end: int  # offset after last non-blank character
    text: str


def _lines(text: str) -> list[_Line | None]:
    """Stripped lines with offsets; ``None`` marks a blank line."""
    out: list[_Line | None] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        stripped = body.strip()
        if stripped:
            lead = len(body) - len(body.lstrip())
            s = pos + lead
            out.append(_Line(s, s + len(stripped), stripped))
        else:
            out.append(None)
        pos += len(raw)
    return out


def _joins(prev: str, nxt: str, *, starts_afresh: bool | None = None) -> bool:
    """Whether line ``nxt`` continues the text of ``prev`` (a wrapped line) or starts afresh.

    ``starts_afresh``: whether ``nxt`` opens a list item, is a header or leads with an inline
    heading, when the caller has already asked (segment_text asks once per line)."""
    if starts_afresh is None:
        starts_afresh = bool(_LIST_MARKER.match(nxt) or is_header_text(nxt) or _inline_heading(nxt))
    if starts_afresh:
        return False
    first = nxt[0]
    if first.islower():
        return True
    if _LABEL.match(nxt):
        return False  # "Name: ..." starts a speaker's turn or a field, never a wrapped line
    # a title never ends a sentence: "seen by Dr.\nLee today". Both patterns end at the end
    # of the line and match a few characters, so the search starts near it (its \b still sees
    # the character before): a line of running text is otherwise scanned whole, per line.
    tail = max(0, len(prev) - _END_WINDOW)
    return bool(_CONTINUATION_END.search(prev, tail) or _TITLE_END.search(prev, tail))


#: Longer than any match of _CONTINUATION_END or _TITLE_END (both anchored at the end).
_END_WINDOW = 16


def segment_text(text: str, *, max_words: int | None = 150) -> list[Segment]:
    """Split ``text`` into segments whose spans are exact offsets into ``text``.

    >>> [s.text for s in segment_text("CHIEF COMPLAINT:\\nChest pain. Seen by Dr. Lee.")]
    ['CHIEF COMPLAINT:', 'Chest pain.', 'Seen by Dr. Lee.']
    """
    segments: list[Segment] = []
    # A block is a run of lines of running text: (start, end, kind, heading).
    block: list[_Line] = []
    block_kind = "sentence"
    block_heading: str | None = None

    def flush() -> None:
        nonlocal block, block_kind, block_heading
        if block:
            start, end = block[0].start, block[-1].end
            segments.extend(_split_block(text, start, end, block_kind, block_heading, max_words))
        block, block_kind, block_heading = [], "sentence", None

    lines = _lines(text)
    speakers, dialogue = _speaker_labels(lines)

    def is_speaker(name: str) -> bool:
        return name.lower() not in _KNOWN_HEADERS and (dialogue or name in speakers)

    for line in lines:
        if line is None:
            flush()
            continue
        heading = found = is_header_text(line.text)
        if heading is not None and (
            (line.text.endswith(":") and is_speaker(heading))
            # a header longer than max_words is cut like any other text
            or (max_words is not None and len(line.text.split()) > max_words)
        ):
            heading = None
        if heading is not None:
            flush()
            segments.append(Segment(line.start, line.end, line.text, "header", heading))
            continue
        marker = _LIST_MARKER.match(line.text)
        inline = found_inline = _inline_heading(line.text)
        if inline is not None and is_speaker(inline[0]):
            inline = None
        # the header, marker and inline-heading tests of this line, asked once, not again
        # inside _joins (they were a tenth of segmentation)
        afresh = bool(marker or found or found_inline)
        if (
            block
            and not marker
            and not inline
            and _joins(block[-1].text, line.text, starts_afresh=afresh)
        ):
            block.append(line)
            continue
        flush()
        block = [line]
        block_kind = "item" if marker else "sentence"
        block_heading = inline[0] if inline else None
    flush()
    return segments


# A sentence can only end inside a block at terminal punctuation followed by whitespace, or at
# a terminator of a script written without spaces (see _script_end).
_MAYBE_BOUNDARY = re.compile(
    r"[.!?\u2026\u3002][\"')\]\u201d\u2019]*\s|[\u3002\uff01\uff1f\uff61\uff0e\u061f\u06d4\u0964\u0965]"
)
# Its alternatives that ASCII text can match: in an ASCII block the two find the same
# boundaries, and the scan of one small class is about twice as fast (issue 27, sixth pass).
_MAYBE_BOUNDARY_ASCII = re.compile(r"[.!?][\"')\]]*\s")
# Closing quotes and brackets that stay with the sentence they close: 」』）】〕〉》" ' ” ’ ) ]
_CLOSERS = "\u300d\u300f\uff09\u3011\u3015\u3009\u300b\"'\u201d\u2019)\\]"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f"
# Sentence ends that need no space after them. CJK: 。！？ and the half-width ｡; the full-width
# ．only between non-digits (３．５ is a number); ASCII ! and ? directly before CJK text.
# Arabic ؟ and Urdu ۔, Devanagari । and ॥: they never occur inside a word or a number, and
# blingfire does not split at the dandas at all. Thai marks no sentence end (a space separates
# phrases and sentences alike), so it is cut only by max_words. A closing quote followed by a
# quotative particle (「はい。」と言った) continues the sentence.
# The three script patterns are compiled on first use, by a block that is not ASCII: their
# character classes span the CJK blocks and took ~10 ms to compile, most of the module's
# import, which an English document never needs (issue 27, fourth pass).
_SCRIPT_END_PATTERN = (
    rf"(?:[\u3002\uff01\uff1f\uff61\u061f\u06d4\u0964\u0965]|(?<![0-9\uff10-\uff19])\uff0e"
    rf"(?![0-9\uff10-\uff19])|[!?](?=[{_CJK}]))(?![{_CLOSERS}]+[\u3068\u3063])[{_CLOSERS}]*"
)


@functools.cache
def _script_end() -> re.Pattern[str]:
    return re.compile(_SCRIPT_END_PATTERN)


@functools.cache
def _leading_closers() -> re.Pattern[str]:
    return re.compile(rf"[{_CLOSERS}]+")


@functools.cache
def _script_chars() -> re.Pattern[str]:
    """Every character without which ``_script_end()`` cannot match (its [!?] needs CJK
    after it)."""
    return re.compile(rf"[\u3002\uff01\uff1f\uff61\u061f\u06d4\u0964\u0965\uff0e{_CJK}]")


# blingfire needs about 18 bytes of buffers per byte of input: a block of running text longer
# than this (a document without line breaks) is split at sentence ends into pieces.
_PIECE_CHARS = 1 << 18


def _sentence_spans(chunk: str) -> list[tuple[int, int]]:
    """Sentence boundaries as character offsets into ``chunk``, a piece at a time."""
    if len(chunk) <= _PIECE_CHARS:
        return _piece_spans(chunk)
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < len(chunk):
        end = _piece_end(chunk, pos)
        out.extend((pos + a, pos + b) for a, b in _piece_spans(chunk[pos:end]))
        pos = end
    return out


def _piece_end(chunk: str, pos: int) -> int:
    """Where a piece starting at ``pos`` ends: after the last likely sentence end (else the
    last space) in the second half of ``_PIECE_CHARS`` characters."""
    limit = pos + _PIECE_CHARS
    if limit >= len(chunk):
        return len(chunk)
    half = pos + _PIECE_CHARS // 2
    last = None
    for last in _MAYBE_BOUNDARY.finditer(chunk, half, limit):  # noqa: B007 - want the last
        pass
    if last is not None:
        return last.end()
    space = max(chunk.rfind(" ", half, limit), chunk.rfind("\n", half, limit))
    return space + 1 if space != -1 else limit


def _piece_spans(chunk: str) -> list[tuple[int, int]]:
    """blingfire's sentence boundaries as character offsets into ``chunk``.

    ``blingfire.text_to_sentences_and_offsets`` maps byte offsets to characters with a Python
    loop over every byte, which dominated segmentation time; this calls the same C function
    and maps offsets with numpy (or not at all for ASCII text).
    """
    boundary = _MAYBE_BOUNDARY_ASCII if chunk.isascii() else _MAYBE_BOUNDARY
    if not boundary.search(chunk):
        return [(0, len(chunk))]  # one sentence: skip the call (most lines of a transcript)
    fn = _BLINGFIRE_FN
    if fn is None:  # pragma: no cover - other blingfire builds
        return list(blingfire.text_to_sentences_and_offsets(chunk)[1])
    data = chunk.encode("utf-8")
    size = 2 * len(data) + 1
    out, starts, ends = _buffers(size)
    # The buffers' size for this chunk, not the (reused, larger) buffers': blingfire's time
    # grows with the size it is given (half of a short block's call). Its output is the
    # chunk with line breaks at sentence ends and a NUL; should it ask for more, the call is
    # made again with everything there is, as before.
    n_out = fn(data, len(data), out, starts, ends, size)
    if n_out > size:
        n_out = fn(data, len(data), out, starts, ends, len(out))
    if n_out <= 0 or n_out > len(out):
        return [(0, len(chunk))]
    k = out.value.count(b"\n") + 1
    if len(data) == len(chunk):  # ASCII: byte offsets are character offsets
        return [(a, b + 1) for a, b in zip(starts[:k], ends[:k], strict=True)]
    # character index of every byte offset: count the bytes that start a character
    raw = np.frombuffer(data, dtype=np.uint8)
    char_of = np.concatenate(([0], np.cumsum((raw & 0xC0) != 0x80)))
    a = char_of[np.asarray(starts[:k], dtype=np.int64)]
    b = char_of[np.minimum(np.asarray(ends[:k], dtype=np.int64) + 1, len(data))]
    return list(zip(a.tolist(), b.tolist(), strict=True))


_BLINGFIRE_FN = getattr(getattr(blingfire, "blingfire", None), "TextToSentencesWithOffsets", None)
_LOCAL = threading.local()


def _buffers(size: int) -> tuple[ctypes.Array[ctypes.c_char], Any, Any]:
    """Output buffers for blingfire, reused per thread (allocation cost more than the call)."""
    cached = getattr(_LOCAL, "buffers", None)
    if cached is None or len(cached[0]) < size:
        size = max(size, 1 << 14)
        cached = (
            ctypes.create_string_buffer(size),
            (ctypes.c_int32 * size)(),
            (ctypes.c_int32 * size)(),
        )
        _LOCAL.buffers = cached
    return cached


def _split_block(
    text: str, start: int, end: int, kind: str, heading: str | None, max_words: int | None
) -> list[Segment]:
    chunk = text[start:end]
    offsets = _sentence_spans(chunk)
    spans = []
    # "Dr. Lee." is looked for only where a title occurs: every match of _NAME_END starts at
    # one (found by substring tests, then one scan for their positions), so a block without
    # one is skipped, and only the sentences that hold one are searched, each as before.
    titles = _title_positions(chunk)
    names = bool(titles) and any(_NAME_END.match(chunk, p) for p in titles)
    search = _NON_SPACE.search
    if not names:  # most blocks: keep the sentences that hold text, nothing to cut
        # (a sentence that starts with text holds some: the search only for the others)
        spans = [
            (a, b) for a, b in offsets if a < b and (not chunk[a].isspace() or search(chunk, a, b))
        ]
        offsets = []
    for a, b in offsets:
        if not search(chunk, a, b):
            continue
        held = names and bisect.bisect_left(titles, b) > bisect.bisect_left(titles, a)
        for name_end in _NAME_END.finditer(chunk, a, b) if held else ():
            cut = name_end.end()
            # searches, not slices: a sentence of many "Dr. Lee." would be quadratic
            after = _NON_SPACE.search(chunk, cut, b)
            if after is not None and _NON_SPACE.search(chunk, a, cut):
                spans.append((a, cut))
                a = after.start()
        spans.append((a, b))
    if not spans:
        spans = [(0, len(chunk))]
    scripts = not chunk.isascii() and _script_chars().search(chunk)  # isascii: one fast pass
    if scripts or (len(spans) > 1 and any(p[1] == q[0] for p, q in itertools.pairwise(spans))):
        # Only a block with such a sentence end, or with sentences that touch (a closing
        # quote blingfire split off), has anything to split or give back.
        spans = _split_script_ends(chunk, spans)
    spans = [_trim(chunk, a, b) for a, b in _repair_spans(chunk, spans)]
    # A vocabulary header run into the end of the block's last line, after a sentence:
    # "... last updated in 2017. Objectives\nTo assess ..." (a lost line break).
    la, lb = spans[-1]
    run_in = _known_heading(chunk[la:lb]) if len(spans) > 1 else None
    if run_in is None and (m := _RUN_IN.search(chunk, la, lb)):
        head = chunk[la : m.start("tail")].strip()
        # not "1. Introduction" (a numbered heading) nor "see e.g. Methods"
        if not _ONLY_MARKER.fullmatch(head) and not _ABBREV_END.search(head):
            run_in = _known_heading(m.group("tail"))
        if run_in is not None:
            spans[-1:] = [_trim(chunk, la, m.start("tail")), (m.start("tail"), lb)]
    out: list[Segment] = []
    short = 2 * max_words if max_words is not None else len(chunk)  # what _cap_words never cuts
    for i, (a, b) in enumerate(spans):
        seg_heading = heading if i == 0 else None
        seg_kind = kind if i == 0 else "sentence"
        if run_in is not None and i == len(spans) - 1:
            seg_heading, seg_kind = run_in, "header"
        if b - a <= short:  # most sentences: no call
            out.append(_segment(start + a, start + b, chunk[a:b], seg_kind, seg_heading))
            continue
        for sa, sb in _cap_words(chunk, a, b, max_words):
            out.append(
                Segment(
                    start + sa,
                    start + sb,
                    chunk[sa:sb],
                    seg_kind if sa == a else "sentence",
                    seg_heading if sa == a else None,
                )
            )
    return out


def _split_script_ends(chunk: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cut spans after the sentence ends of scripts written without spaces (``_script_end()``),
    and give back to the previous sentence the closing quote blingfire split from it
    ("「はい。" + "」と言った。")."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and out[-1][1] == a and (m := _leading_closers().match(chunk, a, b)):
            if chunk[m.end() : m.end() + 1] in ("\u3068", "\u3063"):
                a = out.pop()[0]  # a quotative particle: one sentence
            else:
                out[-1] = (out[-1][0], m.end())
                a = m.end()
                if not _NON_SPACE.search(chunk, a, b):
                    continue
        for end in _script_end().finditer(chunk, a, b):
            nxt = _NON_SPACE.search(chunk, end.end(), b)
            if nxt is None:
                break
            out.append((a, end.end()))
            a = nxt.start()
        out.append((a, b))
    return out


def _trim(chunk: str, a: int, b: int) -> tuple[int, int]:
    """Shrink a span to its non-space text (blingfire keeps e.g. U+2028 inside a sentence)."""
    if a < b and not chunk[a].isspace() and not chunk[b - 1].isspace():
        return a, b  # most spans: nothing to trim
    while a < b and chunk[a].isspace():
        a += 1
    while b > a and chunk[b - 1].isspace():
        b -= 1
    return a, b


def _repair_spans(chunk: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge blingfire splits that cut a list marker or a clinical abbreviation from its text,
    and make spans cover the block without gaps of non-space text.

    A merged span can grow to the whole block ("Dr. Dr. Dr. ..."), so every test looks only at
    its end (each pattern is anchored there): the work per span is bounded by the length of the
    span added, and the whole repair is linear in the block.
    """
    merged: list[tuple[int, int]] = []
    numbered = _ListNumbers(chunk)
    for a, b in spans:
        if (
            merged
            and (m := _trailing_marker(chunk, merged[-1][0], merged[-1][1]))
            and numbered.numbers_list(m.start(), int(m.group("n")))
        ):
            # move the marker to the item it numbers
            pa, _ = merged[-1]
            merged[-1] = (pa, m.start())
            merged.append((m.start() + len(m.group()) - len(m.group().lstrip()), b))
            continue
        if merged:
            pa, pb = merged[-1]
            prev = _tail(chunk, pa, pb)
            if a < b and not chunk[a].isspace():  # most spans start at their first character
                nxt = chunk[a]
            else:
                first = _NON_SPACE.search(chunk, a, b)
                nxt = first.group() if first is not None else ""
            if (
                # blingfire dropped text: keep it inside a span (str.isspace is the test \S
                # negates, and an empty gap has no text)
                (pb < a and not chunk[pb:a].isspace())
                # a list marker alone is at most 5 characters ("(123)")
                or (len(prev) <= _MARKER_CHARS and _ONLY_MARKER.fullmatch(prev))
                # the cheap tests first: most spans end in neither a title nor an abbreviation
                # before a capital (each regex scans the whole tail)
                or (prev.endswith(_TITLE_ENDINGS) and _TITLE_END.search(prev))
                or ((nxt.islower() or nxt.isdigit()) and _ABBREV_END.search(prev))
            ):
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    # Text blingfire left before the first or after the last span belongs to its neighbour.
    fa, fb = merged[0]
    if chunk[:fa].strip():
        merged[0] = (0, fb)
    la, lb = merged[-1]
    if chunk[lb:].strip():
        merged[-1] = (la, len(chunk.rstrip()))
    return merged


_NON_SPACE = re.compile(r"\S")
#: The longest match of _ONLY_MARKER ("(123" and a "." or ")").
_MARKER_CHARS = 5
_MARKER_ENDS = (".", ")")
_MARKER_ENDS_LF = (".\n", ")\n")
# Longer than any match of _TITLE_END, _ABBREV_END or _ONLY_MARKER, so that a tail of this many
# characters gives the same answers as the whole span.
_TAIL = 64


def _tail(chunk: str, a: int, b: int) -> str:
    """``chunk[a:b].rstrip()``, cut to its last ``_TAIL`` characters."""
    while b > a and chunk[b - 1].isspace():
        b -= 1
    return chunk[max(a, b - _TAIL) : b]


def _trailing_marker(chunk: str, a: int, b: int) -> re.Match[str] | None:
    """``_TRAILING_MARKER.search(chunk, a, b)`` without scanning the whole span: a match is a
    run of spaces and a number at the very end, so the search starts just before that run."""
    # a match ends with "." or ")" at the span's end, or before a final line break (``$``)
    if chunk[b - 1 : b] not in _MARKER_ENDS and chunk[b - 2 : b] not in _MARKER_ENDS_LF:
        return None
    lo = max(a, b - 8)  # "\n(123)." is the longest non-space end a match can have
    while lo > a and chunk[lo - 1].isspace():
        lo -= 1
    return _TRAILING_MARKER.search(chunk, lo, b)


class _ListNumbers:
    """Where each list number ``n.`` first occurs in a block, found in one pass on first use."""

    _MARKER = re.compile(r"(?<!\S)\(?(\d+)[.)]\s")

    def __init__(self, chunk: str) -> None:
        self.chunk = chunk
        self._first_end: dict[str, int] | None = None

    def numbers_list(self, pos: int, n: int) -> bool:
        """Whether a stranded ``n.`` at ``pos`` numbers a list item. After a sentence
        ("b.i.d. 2.") it does; after a label it may be the label's value ("Pain score: 3. He is
        comfortable."), so there it must start a list (1) or count on from an earlier
        ``n - 1.``."""
        if self.chunk[pos - 1] != ":" or n == 1:
            return True
        if self._first_end is None:
            # one scan instead of a search from the block's start per marker (quadratic)
            self._first_end = {}
            for m in self._MARKER.finditer(self.chunk):
                self._first_end.setdefault(m.group(1), m.end())
        end = self._first_end.get(str(n - 1))
        return end is not None and end <= pos + 1


_WORD_END = re.compile(r"\S+")


@functools.cache
def _long_word(limit: int) -> re.Pattern[str]:
    """A run of at least ``limit`` non-space characters (a word _cap_words must cut)."""
    return re.compile(rf"\S{{{limit}}}")


def _cap_words(chunk: str, a: int, b: int, max_words: int | None) -> list[tuple[int, int]]:
    """Cut a very long sentence (a table row dump, an unpunctuated transcript) into pieces of at
    most ``max_words`` words, so that no segment is absurdly larger than a typical budget.

    A run of ``2 * max_words`` or more characters without a space (CJK or Thai text with no
    sentence end, a base64 blob) is one "word" only in name: it is cut into pieces of that
    many characters, each its own segment, never before a combining mark.
    """
    if max_words is None or b - a <= 2 * max_words:  # n words need at least 2n - 1 chars
        return [(a, b)]
    limit = 2 * max_words
    # Most long sentences have few enough words and no over-long one: counted in C (findall),
    # not in the loop below, which gives the same answer for them.
    if len(_WORD_END.findall(chunk, a, b)) <= max_words and not _long_word(limit).search(
        chunk, a, b
    ):
        return [(a, b)]
    words: list[tuple[int, int]] = []
    for w in _WORD_END.finditer(chunk, a, b):
        ws, we = w.span()
        while we - ws > limit:
            cut = _grapheme_cut(chunk, ws, ws + limit)
            words.append((ws, cut))
            ws = cut
        words.append((ws, we))
    if len(words) <= max_words and all(we - ws < limit for ws, we in words):
        return [(a, b)]
    pieces: list[tuple[int, int]] = []
    group: list[tuple[int, int]] = []
    for ws, we in words:
        if we - ws >= limit or len(group) == max_words:
            if group:
                pieces.append((group[0][0], group[-1][1]))
            group = []
        if we - ws >= limit:
            pieces.append((ws, we))
        else:
            group.append((ws, we))
    if group:
        pieces.append((group[0][0], group[-1][1]))
    return pieces


def _grapheme_cut(chunk: str, start: int, cut: int) -> int:
    """``cut`` moved back (at most 8 characters) so as not to separate a character from its
    combining marks, a zero-width joiner or a variation selector."""
    c = cut
    while c > max(start + 1, cut - 8) and _attaches(chunk[c]):
        c -= 1
    return cut if _attaches(chunk[c]) else c


def _attaches(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M" or ch in "\u200d\ufe0e\ufe0f"
