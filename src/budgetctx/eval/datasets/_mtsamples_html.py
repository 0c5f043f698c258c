"""Plain-text extraction of a cached mtsamples.com sample page (standard library only).

Rules (the ones the shared ``discharge_summaries.derived.jsonl`` was made with): the report
body runs from "(Medical Transcription Sample Report)<hr>" to the bottom ad block; every
``<B>...</B>`` starts a section whose header loses its trailing colon; text before the first
bold header gets header ""; ``<br>`` becomes a newline, other tags are dropped, entities are
unescaped, runs of whitespace become one space, blank lines and line-leading spaces go.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["note_text", "parse_page", "records_to_jsonl"]

# Pages are latin-1/ASCII; this is how they are decoded before parsing.
PAGE_ENCODING = "latin-1"

_BODY_START = re.compile(
    r"\(Medical Transcription Sample Report\)\s*(?:<br\s*/?>\s*)*<hr\s*/?>", re.IGNORECASE
)
_BODY_END = re.compile(r"<!--\s*Ezoic - MTSam Sample Bottom", re.IGNORECASE)
_BOLD = re.compile(r"<b>(.*?)</b>", re.IGNORECASE | re.DOTALL)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


class PageError(ValueError):
    """The page does not have the layout of an mtsamples.com sample page."""


def _clean(fragment: str) -> str:
    # Source line breaks are layout, <br> is content: collapse the first, then keep the second.
    text = re.sub(r"\s+", " ", fragment)
    text = _TAG.sub("", _BREAK.sub("\n", text))
    text = html.unescape(text)
    # Drop blank lines and spaces at line starts; spaces before a break stay as they were.
    text = re.sub(r"\n[\n ]*", "\n", text)
    return text.strip()


def _labelled(page: str, label: str) -> str:
    """The text after ``<b>Label:</b>`` up to the next tag ("" when the label is absent)."""
    match = re.search(rf"<b>\s*{re.escape(label)}:?\s*</b>([^<]*)", page, re.IGNORECASE)
    return html.unescape(match.group(1)).strip() if match else ""


def parse_page(page: str, *, cache_key: str, url: str) -> dict[str, Any]:
    """One page as a record: header fields, ``sections`` and the rendered ``text``.

    >>> page = ('<b>Sample Name:</b> DS - 1 </H1>(Medical Transcription Sample Report)<br><hr>'
    ...         '<B>HOSPITAL COURSE: </B> Stable.<br><br>Home.<!-- Ezoic - MTSam Sample Bottom')
    >>> parse_page(page, cache_key="k", url="u")["sections"]
    [{'header': 'HOSPITAL COURSE', 'text': 'Stable.\\nHome.'}]
    """
    start = _BODY_START.search(page)
    if start is None:
        raise PageError("no '(Medical Transcription Sample Report)<hr>' marker")
    end = _BODY_END.search(page, start.end())
    body = page[start.end() : end.start() if end else len(page)]
    parts = _BOLD.split(body)
    sections: list[dict[str, str]] = []
    lead = _clean(parts[0])
    if lead:
        sections.append({"header": "", "text": lead})
    for i in range(1, len(parts), 2):
        header = _clean(parts[i]).rstrip(":").strip()
        sections.append({"header": header, "text": _clean(parts[i + 1])})
    tail = page[start.end() :]
    return {
        "cache_key": cache_key,
        "url": url,
        "medical_specialty": _labelled(page, "Sample Type / Medical Specialty"),
        "sample_name": _labelled(page, "Sample Name"),
        "description": _labelled(page, "Description"),
        # The keywords block sits below the ad block, after the report.
        "keywords": _labelled(tail, "Keywords"),
        "sections": sections,
        "text": note_text(sections),
    }


def note_text(sections: Iterable[Mapping[str, str]]) -> str:
    """Sections rendered as ``HEADER: text`` lines (a headerless section is its text alone)."""
    return "\n".join(f"{s['header']}: {s['text']}" if s["header"] else s["text"] for s in sections)


def records_to_jsonl(records: Iterable[Mapping[str, Any]]) -> bytes:
    """JSON Lines exactly as in the shared copy (UTF-8, non-ASCII kept, one record a line)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
