"""Profiles: what a kind of reader must not lose, applied when a document has it.

The ``clinical`` profile pins the safety-critical sections of a clinical note (allergies, code
status, discharge medications, discharge diagnoses, follow-up), recognised by their headers
and the usual synonyms, and takes relevance away from units that only identify (attending,
dates, medical record numbers): "Attending: Dr. R. Alvarez" says who, not what.

``profile="auto"`` (the default of :func:`~budgetctx.build_context`) applies the clinical
profile when at least one pinned section is recognised, and nothing otherwise; so a report, a
meeting or an abstract is condensed exactly as without a profile. ``profile=None`` turns it
off. Why on by default: a clinician who sees the allergy list dropped stops trusting the tool,
and a note that has an ALLERGIES header is a clinical note whatever the caller forgot to say;
the price, measured on MTSamples (docs/results.md, issue 22), is some ROUGE-1 against the
hospital course, which is not what those sections are for.

Pinned units come off the budget first, in the profile's order (allergies before follow-up),
while they take at most 90% of it (50% with a query: what the reader asked about needs room);
the rest are left to the selector, and ``Context.notes`` says so.

>>> p = get_profile("clinical")
>>> p.canonical("Drug Allergies")
'ALLERGIES'
>>> p.canonical("Meds on discharge")
'DISCHARGE MEDICATIONS'
>>> from dataclasses import replace
>>> mine = replace(p, pinned=(("ALLERGIES", ("ALLERGIES", "ALLERGY")),))  # overridable
>>> mine.canonical("DISCHARGE MEDICATIONS") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from budgetctx._errors import InvalidParameterError

__all__ = ["CLINICAL", "ClinicalProfile", "Profile", "get_profile", "list_profiles"]


def _norm(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.strip().strip(":").strip()).upper()


#: Safety-critical sections, most critical first, each with the headers that name it.
CLINICAL_PINNED: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "ALLERGIES",
        (
            "ALLERGIES",
            "ALLERGY",
            "DRUG ALLERGIES",
            "ALLERGIES/ADVERSE REACTIONS",
            "ALLERGIES AND ADVERSE REACTIONS",
            "ADVERSE DRUG REACTIONS",
            "MEDICATION ALLERGIES",
            "NKDA",
        ),
    ),
    (
        "CODE STATUS",
        ("CODE STATUS", "RESUSCITATION STATUS", "ADVANCE DIRECTIVES", "DNR STATUS", "CODE"),
    ),
    (
        "DISCHARGE MEDICATIONS",
        (
            "DISCHARGE MEDICATIONS",
            "DISCHARGE MEDICATION",
            "DISCHARGE MEDS",
            "MEDICATIONS ON DISCHARGE",
            "MEDS ON DISCHARGE",
            "MEDICATIONS AT DISCHARGE",
            "DISCHARGE PRESCRIPTIONS",
            "MEDICATIONS",  # only in notes that have no admission list of their own: see below
        ),
    ),
    (
        "DISCHARGE DIAGNOSES",
        (
            "DISCHARGE DIAGNOSES",
            "DISCHARGE DIAGNOSIS",
            "FINAL DIAGNOSIS",
            "FINAL DIAGNOSES",
            "PRINCIPAL DIAGNOSIS",
            "PRIMARY DIAGNOSIS",
            "DIAGNOSES",
            "DIAGNOSIS",
            "ASSESSMENT",
            "IMPRESSION",
        ),
    ),
    (
        "FOLLOW-UP",
        (
            "FOLLOW-UP",
            "FOLLOW UP",
            "FOLLOWUP",
            "FOLLOW-UP APPOINTMENTS",
            "FOLLOW-UP INSTRUCTIONS",
            "FOLLOW UP INSTRUCTIONS",
            "FOLLOW-UP CARE",
        ),
    ),
)

#: Sections whose units only identify a person, a date or a place of care.
CLINICAL_IDENTIFIERS: tuple[str, ...] = (
    "ATTENDING",
    "ATTENDING PHYSICIAN",
    "ADMITTING PHYSICIAN",
    "REFERRING PHYSICIAN",
    "PRIMARY CARE PHYSICIAN",
    "PCP",
    "DICTATED BY",
    "TRANSCRIBED BY",
    "CC",
    "ADMISSION DATE",
    "DISCHARGE DATE",
    "DATE OF ADMISSION",
    "DATE OF DISCHARGE",
    "DATE OF SERVICE",
    "DATE OF BIRTH",
    "DOB",
    "MRN",
    "MEDICAL RECORD NUMBER",
    "SERVICE",
)

# What is left of an identifier unit once its label is gone, token by token: numbers and dates,
# placeholders, initials, titles and capitalised names ("Dr. R. Alvarez", "AB CD, M.D.").
_ID_TOKEN = re.compile(
    r"[\d/.,:;()\-]+|(?:MM|DD|YYYY)(?:/(?:MM|DD|YYYY))*[.,]?|M\.D\.[,.]?|D\.O\.[,.]?|Dr\.?"
    r"|[A-Z][a-z]*[.,:]?|[A-Z]{1,3}[.,]?"
)


_OPENING = re.compile(r"\s*([A-Za-z][A-Za-z /&\-]{2,48}?)\s*:")


#: Headers remembered per profile before the memo starts over.
_MEMO_SIZE = 4096


def _identifies_only(text: str) -> bool:
    words = text.split()
    return 0 < len(words) <= 16 and all(_ID_TOKEN.fullmatch(w) for w in words)


@dataclass(frozen=True)
class ClinicalProfile:
    """The clinical profile: which sections to pin (in priority order, with synonyms) and which
    sections only identify. Override either with :func:`dataclasses.replace`.

    ``MEDICATIONS`` alone counts as discharge medications only in a note that has no admission
    medication list (``admission`` headers), since a note with both means the admission list.
    """

    pinned: tuple[tuple[str, tuple[str, ...]], ...] = CLINICAL_PINNED
    identifiers: tuple[str, ...] = CLINICAL_IDENTIFIERS
    name: str = "clinical"
    _lookup: dict[str, str] = field(init=False, repr=False, compare=False)
    # header -> canonical(header): a note repeats its few headers on many units, and _norm's
    # regex per unit and label was a tenth of a 2k-token build (issue 27)
    _memo: dict[str, str | None] = field(init=False, repr=False, compare=False)
    _opening_memo: dict[str, str | None] = field(init=False, repr=False, compare=False)
    # what plan() reads on every call, normalised once (a regex per name: ~0.07x the floor
    # of a 2k-token build, issue 27)
    _order: dict[str, int] = field(init=False, repr=False, compare=False)
    _ident: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lookup: dict[str, str] = {}
        for canonical, names in self.pinned:
            for n in (canonical, *names):
                lookup.setdefault(_norm(n), _norm(canonical))
        object.__setattr__(self, "_lookup", lookup)
        object.__setattr__(self, "_order", {_norm(c): k for k, (c, _) in enumerate(self.pinned)})
        ident = frozenset({_norm(n) for n in self.identifiers} | {"DISCHARGE SUMMARY"})
        object.__setattr__(self, "_ident", ident)
        object.__setattr__(self, "_memo", {})
        object.__setattr__(self, "_opening_memo", {})

    def canonical(self, header: str) -> str | None:
        """The pinned section a header names, or None."""
        memo = self._memo
        if header in memo:
            return memo[header]
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[header] = found = self._canonical(header)
        return found

    def _canonical(self, header: str) -> str | None:
        name = _norm(header)
        hit = self._lookup.get(name)
        if hit is None:
            for word in ("ON DISCHARGE", "AT DISCHARGE"):  # "MEDS ON DISCHARGE" variants
                if name.endswith(word) and "MED" in name:
                    return self._lookup.get("DISCHARGE MEDICATIONS")
        return hit

    def _opening(self, text: str) -> str | None:
        """The header a unit opens with (``"Medications on discharge:"``), if it names a
        pinned section."""
        if ":" not in text:  # every match ends at one: most units are skipped unscanned
            return None
        m = _OPENING.match(text)
        if m is None:
            return None
        key = m.group(1)
        memo = self._opening_memo
        if key not in memo:
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            name = _norm(key)
            memo[key] = name if self.canonical(name) is not None else None
        return memo[key]

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "pinned": [c for c, _ in self.pinned]}

    def plan(
        self, sections: Sequence[frozenset[str]], texts: Sequence[str]
    ) -> tuple[list[int], list[str], list[int]]:
        """``(pinned unit ids in priority order, pinned section names, identifier unit ids)``
        for one document's units (``sections``: each unit's normalised section names)."""
        order = self._order
        every = {s for labs in sections for s in labs}
        has_admission_list = any("ADMISSION" in s and "MED" in s for s in every)
        best: list[tuple[int, int]] = []
        found: dict[str, None] = {}
        for u, labs in enumerate(sections):
            ranks = []
            opening = self._opening(texts[u])
            if opening is not None and opening not in labs:
                # "Allergies and adverse reactions: codeine" that the unitizer did not take
                # for a heading: the unit itself names the section
                labs = labs | {opening}
            for s in labs:
                c = self.canonical(s)
                if c is None or (s == "MEDICATIONS" and has_admission_list):
                    continue
                ranks.append(order.get(c, len(order)))
                found.setdefault(c, None)
            if ranks:
                best.append((min(ranks), u))
        pinned = [u for _, u in sorted(best)]
        ident = self._ident
        ids = [
            u
            for u, (labs, text) in enumerate(zip(sections, texts, strict=True))
            if labs and labs <= ident and _identifies_only(_strip_labels(text, labs))
        ]
        names = sorted(found, key=lambda c: order.get(c, len(order)))
        return pinned, names, ids


def _strip_labels(text: str, labels: frozenset[str]) -> str:
    out = text
    for lab in sorted(labels, key=len, reverse=True):
        out = re.sub(re.escape(lab) + r"\s*:?", " ", out, flags=re.IGNORECASE)
    return out


Profile = ClinicalProfile
CLINICAL = ClinicalProfile()
_PROFILES: dict[str, ClinicalProfile] = {"clinical": CLINICAL}


def list_profiles() -> list[str]:
    """Names accepted by ``profile=`` besides ``"auto"`` and None.

    >>> list_profiles()
    ['clinical']
    """
    return sorted(_PROFILES)


def get_profile(spec: str | ClinicalProfile) -> ClinicalProfile:
    """A profile from its name, or the instance given."""
    if isinstance(spec, ClinicalProfile):
        return spec
    found = _PROFILES.get(spec.strip().lower()) if isinstance(spec, str) else None
    if found is None:
        raise InvalidParameterError(
            f"Unknown profile {spec!r}; known: {list_profiles()}, 'auto' (clinical when its "
            "sections are present) or None. Pass e.g. profile='clinical'.",
            parameter="profile",
            value=spec if isinstance(spec, str) else type(spec).__name__,
        )
    return found
