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

import re
from dataclasses import dataclass

import blingfire

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
_CAPS_HEADER = re.compile(r"(?=.*[A-Z]{3})[A-Z][A-Z0-9 /&,'()\-]{1,78}")
_TITLE_WORD = r"(?:[A-Z][\w'/\-]*|and|of|or|the|in|on|for|to|&)"
_TITLE_HEADER = re.compile(rf"{_TITLE_WORD}(?: {_TITLE_WORD}){{0,6}}")
# "HEADER: body" or "Known header: body" at the start of a line.
_INLINE_HEADER = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9 /&,'()\-]{1,60}?)[ \t]*:[ \t]+(?=\S)")
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*•·▪◦‣–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=[ \t]))[ \t]+")
_ONLY_MARKER = re.compile(r"(?:[-*•·▪◦‣–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])")
_CONTINUATION_END = re.compile(r"(?:[,(/&\-]|\b(?:and|or|of|the|to|with|in|for|a|an))$")

# Abbreviations after which blingfire's split is wrong when the next piece does not start a
# new sentence (lower case or a digit follows).
# Titles are never sentence-final: "Dr. XYZ saw the patient."
_TITLE_END = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|Drs)\.$")
# A list marker stranded at the end of a sentence: "DISCHARGE MEDICATIONS: 1.", "b.i.d. 2."
_TRAILING_MARKER = re.compile(r"(?<=[:.;])\s+\(?\d{1,3}[.)]$")
# blingfire reads "Dr. Lee. Troponin ..." as one sentence (the name looks like an initial).
_NAME_END = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof)\.\s+[A-Z][\w'\-]+\.(?=\s+[A-Z])")
_ABBREV_END = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Prof|St|vs|approx|pt|pts|hx|sx|dx|tx|rx|no|No|fig|Fig|ca|mg|mL|ml|"
    r"e\.g|i\.e|p\.o|b\.i\.d|t\.i\.d|q\.i\.d|q\.h\.s|q\.d|q\.o\.d|p\.r\.n|y\.o|a\.m|p\.m|"
    r"h\.s|q\.\d+h|U\.S|et al)\.)$"
)


def _normalise_heading(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip().strip(":").strip()).upper()


def is_header_text(line: str) -> str | None:
    """Return the normalised section name if ``line`` (one stripped line) is a header."""
    if not line or len(line) > 80:
        return None
    if m := _MD_HEADER.fullmatch(line):
        return _normalise_heading(m.group("name"))
    bare = line.rstrip(":").strip()
    if not bare:
        return None
    if bare.lower() in _KNOWN_HEADERS:
        return _normalise_heading(bare)
    words = bare.split()
    if len(words) <= 8 and _CAPS_HEADER.fullmatch(bare) and not bare.endswith((",", "-")):
        return _normalise_heading(bare)
    if line.endswith(":") and len(words) <= 6 and _TITLE_HEADER.fullmatch(bare):
        return _normalise_heading(bare)
    return None


def _inline_heading(line: str) -> tuple[str, int] | None:
    """``("HISTORY OF PRESENT ILLNESS", 28)`` for ``"HISTORY OF PRESENT ILLNESS: The ..."``."""
    m = _INLINE_HEADER.match(line)
    if not m:
        return None
    name = m.group("name").strip()
    lowered = name.lower()
    letters = sum(c.isalpha() for c in name)
    if lowered in _KNOWN_HEADERS or (name.isupper() and letters >= 4 and len(name.split()) <= 8):
        return _normalise_heading(name), m.end()
    return None


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


def _joins(prev: str, nxt: str) -> bool:
    """Whether line ``nxt`` continues the text of ``prev`` (a wrapped line) or starts afresh."""
    if _LIST_MARKER.match(nxt) or is_header_text(nxt) or _inline_heading(nxt):
        return False
    first = nxt[0]
    if first.islower():
        return True
    return bool(_CONTINUATION_END.search(prev))


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

    for line in _lines(text):
        if line is None:
            flush()
            continue
        heading = is_header_text(line.text)
        if heading is not None:
            flush()
            segments.append(Segment(line.start, line.end, line.text, "header", heading))
            continue
        marker = _LIST_MARKER.match(line.text)
        inline = _inline_heading(line.text)
        if block and not marker and not inline and _joins(block[-1].text, line.text):
            block.append(line)
            continue
        flush()
        block = [line]
        block_kind = "item" if marker else "sentence"
        block_heading = inline[0] if inline else None
    flush()
    return segments


def _split_block(
    text: str, start: int, end: int, kind: str, heading: str | None, max_words: int | None
) -> list[Segment]:
    chunk = text[start:end]
    _, offsets = blingfire.text_to_sentences_and_offsets(chunk)
    spans = []
    for a, b in offsets:
        if not chunk[a:b].strip():
            continue
        for m in _NAME_END.finditer(chunk, a, b):
            cut = m.end()
            if chunk[a:cut].strip() and chunk[cut:b].strip():
                spans.append((a, cut))
                a = cut + len(chunk[cut:b]) - len(chunk[cut:b].lstrip())
        spans.append((a, b))
    if not spans:
        spans = [(0, len(chunk))]
    spans = _repair_spans(chunk, spans)
    out: list[Segment] = []
    for i, (a, b) in enumerate(spans):
        for sa, sb in _cap_words(chunk, a, b, max_words):
            seg_kind = kind if i == 0 and sa == a else "sentence"
            out.append(
                Segment(
                    start + sa,
                    start + sb,
                    chunk[sa:sb],
                    seg_kind,
                    heading if (i == 0 and sa == a) else None,
                )
            )
    return out


def _repair_spans(chunk: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge blingfire splits that cut a list marker or a clinical abbreviation from its text,
    and make spans cover the block without gaps of non-space text."""
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and (m := _TRAILING_MARKER.search(chunk, merged[-1][0], merged[-1][1])):
            # move the marker to the item it numbers
            pa, _ = merged[-1]
            merged[-1] = (pa, m.start())
            merged.append((m.start() + len(m.group()) - len(m.group().lstrip()), b))
            continue
        if merged:
            pa, pb = merged[-1]
            prev = chunk[pa:pb].rstrip()
            nxt = chunk[a:b].lstrip()
            gap = chunk[pb:a]
            if (
                gap.strip()  # blingfire dropped text: keep it inside a span
                or _ONLY_MARKER.fullmatch(prev)
                or _TITLE_END.search(prev)
                or (_ABBREV_END.search(prev) and nxt[:1].islower() | nxt[:1].isdigit())
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


_WORD_END = re.compile(r"\S+")


def _cap_words(chunk: str, a: int, b: int, max_words: int | None) -> list[tuple[int, int]]:
    """Cut a very long sentence (a table row dump, an unpunctuated transcript) into pieces of at
    most ``max_words`` words, so that no segment is absurdly larger than a typical budget."""
    if max_words is None:
        return [(a, b)]
    words = list(_WORD_END.finditer(chunk, a, b))
    if len(words) <= max_words:
        return [(a, b)]
    pieces = []
    for i in range(0, len(words), max_words):
        group = words[i : i + max_words]
        pieces.append((group[0].start(), group[-1].end()))
    return pieces
