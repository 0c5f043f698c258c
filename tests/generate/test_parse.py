from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from budgetctx._errors import InvalidParameterError
from budgetctx.generate._parse import DEFAULT_LABELS, parse_label

CASES: list[tuple[str, str | None]] = [
    # plain and first-word replies
    ("yes", "yes"),
    ("No", "no"),
    ("MAYBE", "maybe"),
    ("no.", "no"),
    # one label repeated is an answer, not an echoed option list (seen from SmolLM2)
    ("No, no.", "no"),
    ("yes, yes, yes", "yes"),
    ("yes, yes, yes, yes, yes, yes, yes, ", "yes"),
    ("yes, yes, no, or maybe, no, no, maybe", None),
    ('"yes"', "yes"),
    ("**No**", "no"),
    ("YES - because the trial met its endpoint.", "yes"),
    ("Yes, but no effect was seen in children.", "yes"),
    ("Maybe, the data are mixed.", "maybe"),
    ("  \n  yes\n", "yes"),
    # explicit markers
    ("Answer: Yes.", "yes"),
    ("Answer:\n no", "no"),
    ("The answer is maybe", "maybe"),
    ("I think the answer is: **no**", "no"),
    ("**Answer:** Maybe", "maybe"),
    ("Answer (yes/no/maybe): yes", "yes"),
    ("Final answer: no", "no"),
    ("final_answer = yes", "yes"),
    ("No clear effect at first. Answer: yes", "yes"),
    ("Answer: yes\nFinal Answer: no", "no"),
    ("Reasoning: mixed results.\nAnswer - maybe", "maybe"),
    # JSON
    ('{"answer": "no"}', "no"),
    ('{"Answer": "Yes."}', "yes"),
    ('```json\n{"answer": "maybe"}\n```', "maybe"),
    ('{"reasoning": "yes and no", "final_decision": "no"}', "no"),
    # a unique whole-word label
    ("The evidence suggests yes.", "yes"),
    ("Based on the excerpts, probably maybe.", "maybe"),
    # reasoning blocks are skipped
    ("<think>maybe no</think>Yes", "yes"),
    # unparseable: nothing to commit to, or conflicting without a marker
    ("", None),
    ("   ", None),
    ("Not sure", None),
    ("yes or no?", None),
    ("Yes/No/Maybe", None),
    ("yes, no, or maybe", None),
    ("It could be yes but also no", None),
    ("The answer is not yes", None),
    ("Answer: yes. Answer: no", None),
    ('{"answer": "perhaps"}', None),
    ('{"answer": 1}', None),
    ("Answer: unclear", None),
    ("yesterday nobody came", None),
    ("Insufficient information.", None),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse_label_cases(text: str, expected: str | None) -> None:
    assert parse_label(text) == expected


def test_never_defaults_to_a_label() -> None:
    # the paper's own script mapped unparseable replies to "maybe"; we must not
    for text in ("", "???", "I cannot determine this.", "Yes or no."):
        assert parse_label(text) is None


def test_custom_labels_returned_as_spelled() -> None:
    labels = ("Positive", "Negative", "Neutral")
    assert parse_label("answer: negative", labels) == "Negative"
    assert parse_label("NEUTRAL.", labels) == "Neutral"
    assert parse_label("positive or negative", labels) is None


def test_longest_label_wins() -> None:
    labels = ("no", "no change", "increase")
    assert parse_label("Answer: no change observed", labels) == "no change"
    assert parse_label("Answer: no.", labels) == "no"


@pytest.mark.parametrize("labels", [(), ("yes", "YES"), ("yes", ""), "yes"])
def test_bad_labels_rejected(labels: object) -> None:
    with pytest.raises(InvalidParameterError, match="'labels' parameter of parse_label") as info:
        parse_label("yes", labels)  # type: ignore[arg-type]
    assert info.value.parameter == "labels"


def test_non_string_text_rejected() -> None:
    with pytest.raises(InvalidParameterError, match=r"generation\.text"):
        parse_label(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError) as info:
        parse_label(["Mr. Quimby, MRN 8675309"])  # type: ignore[arg-type]
    assert "Quimby" not in str(info.value)  # a reply is never quoted in the message


_no_answer = st.text().filter(lambda s: "answer" not in s.lower())


@given(
    label=st.sampled_from(DEFAULT_LABELS),
    case=st.sampled_from([str.lower, str.upper, str.title]),
    sep=st.sampled_from(["\n", ". ", ".\n", " - ", "! ", "\n\n"]),
    tail=_no_answer,
)
def test_answer_marker_then_anything(label: str, case: object, sep: str, tail: str) -> None:
    text = f"Answer: {case(label)}{sep}{tail}"  # type: ignore[operator]
    assert parse_label(text) == label


@given(label=st.sampled_from(DEFAULT_LABELS), head=st.text(alphabet=" \n*_\"'"))
def test_bare_label_with_markdown(label: str, head: str) -> None:
    assert parse_label(f"{head}{label}{head[::-1]}") == label


@given(text=st.text())
def test_result_is_a_label_or_none(text: str) -> None:
    result = parse_label(text)
    assert result is None or result in DEFAULT_LABELS
    if result is not None:
        # a label is only returned when the reply contains it as a word
        assert re.search(rf"(?<![^\W_]){result}(?![^\W_])", text, re.IGNORECASE)
