"""Section detection and the Section unitizer: which lines open a section, which must not."""

from __future__ import annotations

import pytest

from budgetctx.unitizers import SectionUnitizer, SentenceUnitizer
from budgetctx.unitizers._sentence import section_labels
from tests.unitizers._invariants import assert_segmentation_valid


def sections(text: str) -> list[tuple[str, str | None]]:
    """(segment text, section) for every segment the Section unitizer labels; its units
    group a header with the sentence it introduces (see test_header_joins_its_sentence)."""
    result = SectionUnitizer().unitize(text)
    assert_segmentation_valid(text, result)
    labels = section_labels(result.segments)
    for unit in result.units:
        assert unit.section == labels[unit.segments[0]]
    return [(seg.text, label) for seg, label in zip(result.segments, labels, strict=True)]


def test_header_joins_its_sentence() -> None:
    result = SectionUnitizer().unitize("CHIEF COMPLAINT\nChest pain.\nPLAN\n\nRest. Fluids.")
    assert [(u.segments, u.text, u.kind, u.section) for u in result.units] == [
        ((0, 1), "CHIEF COMPLAINT Chest pain.", "sentence", "CHIEF COMPLAINT"),
        ((2, 3), "PLAN Rest.", "sentence", "PLAN"),
        ((4,), "Fluids.", "sentence", "PLAN"),
    ]
    trailing = SectionUnitizer().unitize("Stable.\nFOLLOW-UP")
    assert [(u.segments, u.kind) for u in trailing.units] == [((0,), "sentence"), ((1,), "header")]


def section_after(header_line: str) -> str | None:
    """The section of a sentence that follows ``header_line`` on the next line."""
    return sections(f"{header_line}\nThe patient is stable.")[-1][1]


# --- headers on their own line ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("CHIEF COMPLAINT", "CHIEF COMPLAINT"),
        ("CHIEF COMPLAINT:", "CHIEF COMPLAINT"),
        ("HISTORY OF PRESENT ILLNESS", "HISTORY OF PRESENT ILLNESS"),
        ("HOSPITAL COURSE:", "HOSPITAL COURSE"),
        ("DISCHARGE MEDICATIONS", "DISCHARGE MEDICATIONS"),
        ("ASSESSMENT AND PLAN:", "ASSESSMENT AND PLAN"),
        ("Hospital Course:", "HOSPITAL COURSE"),
        ("Hospital Course", "HOSPITAL COURSE"),
        ("Assessment and Plan", "ASSESSMENT AND PLAN"),
        ("Discharge medications:", "DISCHARGE MEDICATIONS"),
        ("PHYSICAL EXAMINATION ON ADMISSION", "PHYSICAL EXAMINATION ON ADMISSION"),
        ("  CHIEF COMPLAINT:  ", "CHIEF COMPLAINT"),
    ],
)
def test_clinical_header_lines(line: str, expected: str) -> None:
    assert section_after(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("## Methods", "METHODS"),
        ("# Results", "RESULTS"),
        ("### Discussion ###", "DISCUSSION"),
        ("## Adverse events in children", "ADVERSE EVENTS IN CHILDREN"),
    ],
)
def test_markdown_headings(line: str, expected: str) -> None:
    assert section_after(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Background", "BACKGROUND"),
        ("Objectives", "OBJECTIVES"),
        ("Methods", "METHODS"),
        ("Results", "RESULTS"),
        ("Main results", "MAIN RESULTS"),
        ("Conclusions", "CONCLUSIONS"),
        ("Authors' conclusions", "AUTHORS' CONCLUSIONS"),
        ("Search methods", "SEARCH METHODS"),
        ("Data collection and analysis", "DATA COLLECTION AND ANALYSIS"),
        ("Background:", "BACKGROUND"),
    ],
)
def test_abstract_headings_on_their_own_line(line: str, expected: str) -> None:
    assert section_after(line) == expected


def test_header_line_is_a_unit_labelled_with_its_own_section() -> None:
    assert sections("CHIEF COMPLAINT\nChest pain.") == [
        ("CHIEF COMPLAINT", "CHIEF COMPLAINT"),
        ("Chest pain.", "CHIEF COMPLAINT"),
    ]


# --- inline headers -------------------------------------------------------------------------------


def test_inline_caps_header_leads_its_sentence() -> None:
    text = "HISTORY OF PRESENT ILLNESS: The patient is a 67 y.o. male. He has chest pain."
    assert sections(text) == [
        (
            "HISTORY OF PRESENT ILLNESS: The patient is a 67 y.o. male.",
            "HISTORY OF PRESENT ILLNESS",
        ),
        ("He has chest pain.", "HISTORY OF PRESENT ILLNESS"),
    ]


def test_inline_title_case_known_header() -> None:
    assert sections("Hospital Course: The patient did well.") == [
        ("Hospital Course: The patient did well.", "HOSPITAL COURSE")
    ]


def test_inline_exam_subheaders_each_open_a_section() -> None:
    assert sections("HEENT: Normocephalic.\nLUNGS: Clear.\nABDOMEN: Soft, nontender.") == [
        ("HEENT: Normocephalic.", "HEENT"),
        ("LUNGS: Clear.", "LUNGS"),
        ("ABDOMEN: Soft, nontender.", "ABDOMEN"),
    ]


def test_numbered_problem_headers() -> None:
    text = "PROBLEM #1: Severe nausea, resolved.\nPROBLEM #2: Gastritis, stable."
    assert sections(text) == [
        ("PROBLEM #1: Severe nausea, resolved.", "PROBLEM #1"),
        ("PROBLEM #2: Gastritis, stable.", "PROBLEM #2"),
    ]


def test_header_run_into_the_previous_paragraph_line() -> None:
    # Cochrane abstracts sometimes lose the line break before a heading
    text = "Background\nSome text. Last updated in 2017. Objectives\nTo assess effects."
    assert sections(text) == [
        ("Background", "BACKGROUND"),
        ("Some text.", "BACKGROUND"),
        ("Last updated in 2017.", "BACKGROUND"),
        ("Objectives", "OBJECTIVES"),
        ("To assess effects.", "OBJECTIVES"),
    ]


def test_run_in_header_after_an_abbreviation_blingfire_keeps() -> None:
    text = "We searched ClinicalTrials.gov. Selection criteria\nWe included RCTs."
    assert sections(text) == [
        ("We searched ClinicalTrials.gov.", None),
        ("Selection criteria", "SELECTION CRITERIA"),
        ("We included RCTs.", "SELECTION CRITERIA"),
    ]


@pytest.mark.parametrize("line", ["1. Results", "I. Introduction", "See e.g. Methods"])
def test_header_word_after_a_marker_or_abbreviation_is_not_cut_off(line: str) -> None:
    assert sections(f"{line}\nText.") == [(line, None), ("Text.", None)]


def test_known_header_words_ending_a_sentence_are_not_run_in_headers() -> None:
    assert sections("We discussed the results.\nThey were good.") == [
        ("We discussed the results.", None),
        ("They were good.", None),
    ]


# --- negative cases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("BP: 120/80, HR 72.", id="short-vital-label"),
        pytest.param("Professor E: So . OK . Yeah .", id="meeting-turn"),
        pytest.param("The following medications were given:\nAspirin.", id="sentence-colon"),
        pytest.param("FIG. 1\nThe plot shows mortality.", id="figure-line"),
        pytest.param("FIG. 1: The plot shows mortality.", id="figure-inline"),
        pytest.param("TEMP 98, HR 72\nThe patient is stable.", id="caps-values"),
        pytest.param("Results of the trial were positive.", id="header-word-in-sentence"),
        pytest.param("Dear Dr. Smith:\nThank you.", id="salutation"),
        pytest.param("Title Case Line Without Colon\nText.", id="title-case-no-colon"),
        pytest.param("Chest pain.\nNa 135, K 4.1, Cl 101.", id="lab-line"),
    ],
)
def test_not_a_header(text: str) -> None:
    assert all(section is None for _, section in sections(text))


def test_caps_speaker_turns_of_a_transcript_are_not_sections() -> None:
    text = (
        "BRENNAN: The detention facility has visiting areas.\n"
        "BOOTH: Look, Bones, all I'm saying is that she went through a lot.\n"
        "BRENNAN: I know.\n"
        "BOOTH: Then go.\n"
        "CAROLINE: People!\n"
        "BRENNAN: Fine.\n"
        "BOOTH: Good."
    )
    assert all(section is None for _, section in sections(text))


def test_title_case_speaker_labels_on_their_own_line_are_not_sections() -> None:
    text = (
        "Professor D:\nOK , let 's start .\nGrad F: Yeah .\nProfessor D: Right .\n"
        "Grad F: Sure .\nProfessor D: So .\nGrad F: OK ."
    )
    assert all(section is None for _, section in sections(text))


def test_known_headers_survive_in_a_transcript() -> None:
    text = (
        "Summary\nA short talk.\n"
        "ANNA: Hello there.\nBOB: Hi.\nANNA: How are you?\nBOB: Fine.\nANNA: Good.\nBOB: Bye."
    )
    labels = [section for _, section in sections(text)]
    assert labels == ["SUMMARY"] * 8


def test_repeated_known_header_is_still_a_header() -> None:
    text = "ASSESSMENT: Stable.\nASSESSMENT: Improving.\nASSESSMENT: Ready for discharge."
    assert [section for _, section in sections(text)] == ["ASSESSMENT"] * 3


# --- the Section unitizer -------------------------------------------------------------------------


def test_sections_label_every_sentence_until_the_next_header() -> None:
    text = (
        "Patient seen on the ward.\n"
        "CHIEF COMPLAINT\n"
        "Chest pain.\n"
        "HOSPITAL COURSE: Stable. Discharged home.\n"
        "DISCHARGE MEDICATIONS:\n"
        "1. Aspirin 81 mg p.o. daily.\n"
        "2. Lisinopril 10 mg daily"
    )
    assert sections(text) == [
        ("Patient seen on the ward.", None),
        ("CHIEF COMPLAINT", "CHIEF COMPLAINT"),
        ("Chest pain.", "CHIEF COMPLAINT"),
        ("HOSPITAL COURSE: Stable.", "HOSPITAL COURSE"),
        ("Discharged home.", "HOSPITAL COURSE"),
        ("DISCHARGE MEDICATIONS:", "DISCHARGE MEDICATIONS"),
        ("1. Aspirin 81 mg p.o. daily.", "DISCHARGE MEDICATIONS"),
        ("2. Lisinopril 10 mg daily", "DISCHARGE MEDICATIONS"),
    ]


def test_markdown_sections() -> None:
    text = "## Methods\nWe randomised 40 patients.\n\n## Results\nMortality fell. Costs rose."
    assert sections(text) == [
        ("## Methods", "METHODS"),
        ("We randomised 40 patients.", "METHODS"),
        ("## Results", "RESULTS"),
        ("Mortality fell.", "RESULTS"),
        ("Costs rose.", "RESULTS"),
    ]


def test_abstract_sections() -> None:
    text = (
        "Background\nFalls are common.\n\nObjectives\nTo assess exercise.\n\n"
        "Main results\nWe included 12 trials.\n\nAuthors' conclusions\nExercise helps."
    )
    assert [section for _, section in sections(text)] == [
        "BACKGROUND",
        "BACKGROUND",
        "OBJECTIVES",
        "OBJECTIVES",
        "MAIN RESULTS",
        "MAIN RESULTS",
        "AUTHORS' CONCLUSIONS",
        "AUTHORS' CONCLUSIONS",
    ]


def test_document_without_headers_falls_back_to_sentence_units() -> None:
    text = "The patient is a 67 y.o. male. He has chest pain.\nHe was given aspirin 81 mg p.o."
    by_section = SectionUnitizer().unitize(text)
    by_sentence = SentenceUnitizer().unitize(text)
    assert [u.section for u in by_section.units] == [None, None, None]
    strip = [(u.id, u.segments, u.spans, u.text, u.kind) for u in by_section.units]
    assert strip == [(u.id, u.segments, u.spans, u.text, u.kind) for u in by_sentence.units]
    assert by_section.segments == by_sentence.segments


def test_empty_document_has_no_units() -> None:
    result = SectionUnitizer().unitize("")
    assert result.units == ()
    assert result.segments == ()
