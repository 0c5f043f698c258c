"""Reading a label (PubMedQA yes/no/maybe) out of a model's free-text reply.

Rules, in order; the first that decides wins:

1. the whole reply is a JSON object with an ``answer`` (``final_answer``, ``label``,
   ``final_decision``) key: its value, or None when that value is not a label;
2. an explicit ``final answer`` marker, else ``answer`` markers (``Answer: yes``,
   ``The answer is maybe``, ``**Answer:** No``): the label right after it; several plain
   ``answer`` markers that disagree give None;
3. the reply's first word (``YES - because ...``, ``**No**``);
4. the only label that occurs as a whole word (``The evidence suggests yes.``).

Echoed option lists (``yes or no``, ``yes/no/maybe``) are ignored, and a label after "not"
makes rule 4 give up. Anything else is None: an unparseable reply is never mapped to a default
label, so the caller counts it rather than silently scoring it as "maybe".

>>> parse_label("Answer: Yes."), parse_label("**No**"), parse_label("yes or no?")
('yes', 'no', None)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from budgetctx._core.validation import Predicate, check
from budgetctx._errors import InvalidParameterError

__all__ = ["DEFAULT_LABELS", "parse_label"]

DEFAULT_LABELS: tuple[str, ...] = ("yes", "no", "maybe")

_JSON_KEYS = ("final_answer", "answer", "final_decision", "label", "decision")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
# "Answer:", "Final answer -", "The answer is", "**Answer (yes/no/maybe):**", '"answer": '
_MARKER = re.compile(
    r"\b(final[\s_]+)?answer\b[\s\"'*_]*(?:\([^)\n]*\))?[\s\"'*_]*(?:\bis\b|:|=|-)?",
    re.IGNORECASE,
)
# characters that may sit between a marker (or the start) and the label itself
_LEAD = " \t\r\n*_`\"'([{:>#-."
_NEGATED = re.compile(r"(?:\bnot|n't)\s*$", re.IGNORECASE)


def _distinct_labels(labels: Any) -> bool:
    if isinstance(labels, str | bytes):
        return False
    labs = list(labels)
    if not labs or not all(isinstance(lab, str) and lab.strip() for lab in labs):
        return False
    return len({lab.strip().lower() for lab in labs}) == len(labs)


_LABELS = Predicate(
    _distinct_labels,
    "a non-empty sequence of distinct (ignoring case), non-empty str",
    fix="pass labels=('yes', 'no', 'maybe').",
)


def _check_labels(labels: Sequence[str]) -> tuple[str, ...]:
    return tuple(check("parse_label", "labels", labels, _LABELS))


def _label_pattern(labels: tuple[str, ...]) -> str:
    # longest first, so "no change" wins over "no" where both are labels
    alternatives = sorted((re.escape(lab.strip()) for lab in labels), key=len, reverse=True)
    # letters and digits bound a label, underscores do not (markdown "_yes_")
    return r"(?<![^\W_])(?:" + "|".join(alternatives) + r")(?![^\W_])"


def _starts_with_label(text: str, start_re: re.Pattern[str], canon: dict[str, str]) -> str | None:
    match = start_re.match(text.lstrip(_LEAD))
    return canon[match.group(0).lower()] if match else None


def _from_json(text: str, canon: dict[str, str]) -> tuple[bool, str | None]:
    """(decided, label): decided is True when the reply is a JSON object with an answer key."""
    if not text.startswith("{"):
        return False, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return False, None
    if not isinstance(data, dict):
        return False, None
    keys = {str(k).lower(): v for k, v in data.items()}
    for key in _JSON_KEYS:
        if key in keys:
            value = keys[key]
            if not isinstance(value, str):
                return True, None
            return True, canon.get(value.strip().strip(".!").strip().lower())
    return False, None


def parse_label(text: str, labels: Sequence[str] = DEFAULT_LABELS) -> str | None:
    """The label a reply commits to (as spelled in ``labels``), or None when it commits to
    none or to several.

    >>> parse_label("The answer is maybe"), parse_label('{"answer": "no"}')
    ('maybe', 'no')
    >>> parse_label("Not sure") is None
    True
    """
    labs = _check_labels(labels)
    if not isinstance(text, str):
        # written out: _validation.check would quote the value, and a reply may be PHI
        raise InvalidParameterError(
            f"The 'text' parameter of parse_label must be a str. Got a {type(text).__name__} "
            "instead; pass generation.text.",
            parameter="text",
            value=type(text).__name__,
        )
    canon = {lab.strip().lower(): lab for lab in labs}
    pattern = _label_pattern(labs)
    label_re = re.compile(pattern, re.IGNORECASE)
    start_re = re.compile(pattern, re.IGNORECASE)
    # an echoed option list ("yes or no", "yes/no/maybe", "yes, no, or maybe") is no answer
    choices_re = re.compile(
        pattern + r"(?:[ \t]*(?:/|\||,[ \t]*or\b|,|\bor\b)[ \t]*" + pattern + ")+",
        re.IGNORECASE,
    )

    body = _THINK.sub(" ", text).strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        return None

    decided, label = _from_json(body, canon)
    if decided:
        return label

    # ... but one label repeated ("No, no.", "yes, yes, yes") is that answer, said twice.
    def _drop_options(m: re.Match[str]) -> str:
        said = {x.lower() for x in label_re.findall(m.group(0))}
        return " " if len(said) > 1 else m.group(0)

    body = choices_re.sub(_drop_options, body)

    final: list[str] = []
    plain: list[str] = []
    for marker in _MARKER.finditer(body):
        found = _starts_with_label(body[marker.end() :], start_re, canon)
        if found is not None:
            (final if marker.group(1) else plain).append(found)
    if final:
        return final[-1]
    if plain:
        return plain[0] if len(set(plain)) == 1 else None

    first = _starts_with_label(body, start_re, canon)
    if first is not None:
        return first

    found_labels: set[str] = set()
    for match in label_re.finditer(body):
        if _NEGATED.search(body[: match.start()]):
            return None
        found_labels.add(canon[match.group(0).lower()])
    return found_labels.pop() if len(found_labels) == 1 else None
