"""Every unitizer on real documents: MTSamples discharge summaries, Cochrane abstracts, L-Eval.

Spans must be exact, segments ordered and non-overlapping, and no non-whitespace character may
be lost. Section headers that the documents plainly contain must be found.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from budgetctx.unitizers import get_unitizer, list_unitizers, segment_text
from tests.unitizers._invariants import assert_segmentation_valid, assert_segments_exact

# the cluster unitizer fits a TF-IDF model per document: a few seconds per corpus
UNITIZERS = [
    pytest.param(name, marks=pytest.mark.slow) if name == "cluster" else name
    for name in sorted(list_unitizers())
]


@pytest.fixture(scope="session")
def cochrane_abstracts(shared_data: Path) -> list[str]:
    folder = shared_data / "cochrane" / "tsar2025_cochrane_abstracts"
    paths = sorted(folder.glob("*.json"))
    if not paths:
        pytest.skip(f"no Cochrane abstracts in {folder}")
    return [json.loads(p.read_text(encoding="utf-8"))["abstract"] for p in paths]


@pytest.fixture(scope="session")
def mtsamples_records(shared_data: Path) -> list[dict[str, object]]:
    path = shared_data / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _sections_found(text: str) -> set[str]:
    result = get_unitizer("section").unitize(text)
    return {u.section for u in result.units if u.section is not None}


# --- span exactness and coverage --------------------------------------------------------------


@pytest.mark.parametrize("name", UNITIZERS)
def test_mtsamples_segmentations_are_exact_and_complete(
    name: str, mtsamples_notes: list[str]
) -> None:
    assert len(mtsamples_notes) > 50
    unitizer = get_unitizer(name)
    for note in mtsamples_notes:
        assert_segmentation_valid(note, unitizer.unitize(note))


@pytest.mark.parametrize("name", UNITIZERS)
def test_cochrane_segmentations_are_exact_and_complete(
    name: str, cochrane_abstracts: list[str]
) -> None:
    assert len(cochrane_abstracts) > 50
    unitizer = get_unitizer(name)
    for abstract in cochrane_abstracts:
        assert_segmentation_valid(abstract, unitizer.unitize(abstract))


@pytest.mark.parametrize("name", UNITIZERS)
def test_leval_segmentations_are_exact_and_complete(
    name: str, leval_docs: dict[str, list[str]]
) -> None:
    """The first document of every L-Eval task (transcripts, papers, patents, reports)."""
    assert leval_docs
    unitizer = get_unitizer(name)
    for task, docs in leval_docs.items():
        doc = docs[0]
        result = unitizer.unitize(doc)
        assert result.units, task
        assert_segmentation_valid(doc, result)


@pytest.mark.slow
def test_more_leval_documents_segment_exactly(leval_docs: dict[str, list[str]]) -> None:
    """Four documents of every task (a fifth of the corpus, about 1.3 MB) at the segment
    level, which every unitizer builds on."""
    for docs in leval_docs.values():
        for doc in docs[1:5]:
            assert_segments_exact(doc, segment_text(doc))


# --- headers found in real documents --------------------------------------------------------------


@pytest.mark.parametrize(
    "header", ["HOSPITAL COURSE", "DISCHARGE DIAGNOSES", "HISTORY OF PRESENT ILLNESS"]
)
def test_mtsamples_headers_are_found(header: str, mtsamples_notes: list[str]) -> None:
    """Every note with the header at the start of a line gets a section of that name."""
    line_start = re.compile(rf"^[ \t]*{header}[ \t]*(?::|$)", re.MULTILINE)
    notes = [note for note in mtsamples_notes if line_start.search(note)]
    assert len(notes) >= 10, f"too few notes contain {header!r} for a meaningful test"
    missed = [note[:80] for note in notes if header not in _sections_found(note)]
    assert missed == []


def test_mtsamples_section_recall_against_the_source_headers(
    mtsamples_records: list[dict[str, object]],
) -> None:
    """MTSamples lists each note's section headers; nearly all must be detected (the misses
    are numbered sub-headings such as "PROBLEM #1:" and a 3-letter "CNS:")."""
    expected = found = 0
    for record in mtsamples_records:
        sections = record["sections"]
        assert isinstance(sections, list)
        truth = Counter(" ".join(str(s["header"]).split()).upper() for s in sections if s["header"])
        text = record["text"]
        assert isinstance(text, str)
        got = Counter(seg.heading for seg in segment_text(text) if seg.heading is not None)
        expected += sum(truth.values())
        found += sum((truth & got).values())
    assert expected > 500
    assert found / expected >= 0.98, f"found {found} of {expected} MTSamples headers"


def test_cochrane_background_and_main_results_are_found(cochrane_abstracts: list[str]) -> None:
    """Abstracts in the classic format (Background ... Main results ...) get both sections,
    also where the source lost the line break before a heading ("... in 2017. Objectives")."""
    classic = [a for a in cochrane_abstracts if a.startswith("Background")]
    assert len(classic) >= 50
    for abstract in classic:
        found = _sections_found(abstract)
        assert "BACKGROUND" in found, abstract[:80]
        assert {"OBJECTIVES", "SEARCH METHODS", "MAIN RESULTS", "AUTHORS' CONCLUSIONS"} <= found, (
            abstract[:80],
            sorted(found),
        )


def test_cochrane_new_format_sections_are_found(cochrane_abstracts: list[str]) -> None:
    new_format = [a for a in cochrane_abstracts if a.startswith("Rationale")]
    assert new_format, "the data set has abstracts in the 2024 format"
    for abstract in new_format:
        found = _sections_found(abstract)
        assert {"RATIONALE", "OBJECTIVES", "SEARCH METHODS", "AUTHORS' CONCLUSIONS"} <= found


def test_cochrane_every_sentence_after_the_first_heading_has_a_section(
    cochrane_abstracts: list[str],
) -> None:
    for abstract in cochrane_abstracts[:20]:
        units = get_unitizer("section").unitize(abstract).units
        assert units[0].section is not None, abstract[:80]
        assert all(u.section is not None for u in units)


_LABEL = re.compile(r"^([A-Z][A-Za-z .']{0,30}?) ?:", re.MULTILINE)


@pytest.mark.parametrize("task", ["tv_show_summ", "meeting_summ"])
def test_transcript_speakers_are_not_sections(task: str, leval_docs: dict[str, list[str]]) -> None:
    """A label that starts three or more turns is a speaker, never a section name."""
    docs = leval_docs.get(task)
    if not docs:
        pytest.skip(f"L-Eval task {task} is missing")
    for doc in docs[:6]:
        counts = Counter(" ".join(m.group(1).split()).upper() for m in _LABEL.finditer(doc))
        speakers = {name for name, c in counts.items() if c >= 3}
        assert not speakers & _sections_found(doc)
