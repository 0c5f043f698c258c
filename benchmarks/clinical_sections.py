"""Do the safety-critical sections of a clinical note survive condensing? (issue 22)

For each MTSamples note (validation and test splits; the document the harness condenses, the
hospital course being the reference) and each written note below, and for each of the
sections allergies / discharge medications / diagnoses that the note has (recognised by the
clinical profile's headers and synonyms), a section *survives* when every unit of it is in
the context. Prints the share of notes whose section survives at each budget, without a
profile (``profile=None``, what budgetctx did before issue 22) and with the default
(``profile="auto"``), and the mean ROUGE-1 F1 against the reference, both ways.

    PYTHONPATH=src .venv/bin/python benchmarks/clinical_sections.py
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import defaultdict
from pathlib import Path

from budgetctx import BudgetCtxWarning, prepare
from budgetctx.profiles import CLINICAL

SECTIONS = ("ALLERGIES", "DISCHARGE MEDICATIONS", "DISCHARGE DIAGNOSES")
BUDGETS = (256, 512)

# Notes written for this benchmark (no real patient), with headers the way different sites
# spell them, longer than the budgets.
WRITTEN = [
    """DISCHARGE SUMMARY
Patient: [name]    MRN: 0000000
Admission date: 04/11/2024    Discharge date: 04/16/2024
Attending: Dr. K. Brennan
REASON FOR ADMISSION: Fever and productive cough for five days.
HISTORY OF PRESENT ILLNESS: A 58-year-old man with COPD (FEV1 45% predicted) and type 2
diabetes presented with five days of fever to 39.2 C, purulent sputum and worsening dyspnea.
He had used his rescue inhaler every two hours for two days. In the emergency department he
was hypoxic to 86% on room air and tachypneic to 30. Chest radiograph showed a right lower
lobe consolidation. White count was 17.9 with a left shift and lactate was 2.4.
HOSPITAL COURSE: He was treated for community-acquired pneumonia with a COPD exacerbation.
He received ceftriaxone and azithromycin, prednisone 40 mg daily and scheduled nebulizers.
Blood cultures were negative; sputum grew Haemophilus influenzae sensitive to amoxicillin-
clavulanate. Oxygen was weaned to room air on day four. Glucose rose on steroids and was
managed with a correction scale. He walked 150 meters without desaturation before discharge.
ALLERGY: Penicillin (hives as a child; tolerated ceftriaxone).
DISCHARGE MEDS:
1. Amoxicillin-clavulanate 875 mg p.o. b.i.d. for 3 more days.
2. Prednisone 40 mg p.o. daily for 2 more days, then stop.
3. Tiotropium 18 mcg inhaled daily.
4. Albuterol 2 puffs every 4 hours as needed.
5. Metformin 1000 mg p.o. b.i.d.
FINAL DIAGNOSES: Right lower lobe pneumonia; acute exacerbation of COPD; steroid-induced
hyperglycemia.
CODE STATUS: Full code.
FOLLOW-UP: Pulmonology in 2 weeks; primary care in 1 week with a glucose log.
""",
    """Hospital Discharge Note
Service: Orthopedics. Attending physician: Dr. L. Ferreira.
Date of admission: 09/03/2023. Date of discharge: 09/07/2023.
Brief history: An 81-year-old woman slipped on a wet floor at home and could not bear weight
on her left leg. Radiographs showed a displaced left femoral neck fracture. She lives alone,
uses a cane, and has atrial fibrillation on warfarin, hypertension and mild cognitive
impairment.
Course: Warfarin was reversed with vitamin K and prothrombin complex concentrate, and she
underwent a left hemiarthroplasty on hospital day 2 without complication. Post-operative
hemoglobin fell to 8.9 and she received one unit of red cells. She had one night of delirium
managed with reorientation and without sedatives. Physical therapy progressed her to walking
with a frame. Warfarin was restarted on day 3 with enoxaparin bridging until the INR is 2.
Allergies and adverse reactions: Codeine (confusion); latex.
Medications on discharge: Warfarin 3 mg p.o. nightly (INR check on 09/10); enoxaparin 40 mg
subcutaneously daily until INR above 2; paracetamol 1 g p.o. q.i.d.; amlodipine 5 mg daily.
Discharge diagnosis: Left femoral neck fracture after a fall, status post hemiarthroplasty;
post-operative anemia; delirium, resolved.
Follow up: Orthopedic clinic in 2 weeks for wound review; anticoagulation clinic on 09/10.
""",
]


def _section_units(doc: object, name: str) -> list[int]:
    """The units of section ``name`` as the profile recognises them (headings, and units that
    open with a header the unitizer did not take for one)."""
    sections = doc.unit_sections  # type: ignore[attr-defined]
    texts = [u.text for u in doc.local_units]  # type: ignore[attr-defined]
    return [
        u
        for u, (labs, text) in enumerate(zip(sections, texts, strict=True))
        if any(CLINICAL.canonical(s) == name for s in labs | {CLINICAL._opening(text) or ""})
    ]


def run(data_dir: str, splits: list[str]) -> None:
    from budgetctx.eval.datasets import load_dataset
    from budgetctx.eval.metrics import Rouge

    rouge = Rouge(use_stemmer=True)
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for split in splits:
        exs = load_dataset("mtsamples", split=split, data_dir=data_dir)
        groups[f"mtsamples {split}"] = [(e.document, e.reference) for e in exs]
    groups["written notes"] = [(t, None) for t in WRITTEN]
    for group, items in groups.items():
        has: dict[str, int] = defaultdict(int)
        kept: dict[tuple[str, str, int], int] = defaultdict(int)
        scores: dict[tuple[str, int], list[float]] = defaultdict(list)
        for text, ref in items:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BudgetCtxWarning)
                docs = {"before": prepare(text, profile=None), "after": prepare(text)}
            units = {s: _section_units(docs["before"], s) for s in SECTIONS}
            for s, us in units.items():
                has[s] += bool(us)
            for when, doc in docs.items():
                for b in BUDGETS:
                    ctx = doc.select(b)
                    assert ctx.tokens_used <= b
                    ids = set(ctx.kept_ids)
                    for s, us in units.items():
                        kept[(when, s, b)] += bool(us) and set(us) <= ids
                    if ref is not None:
                        f = rouge.score(ctx.text, ref).to_dict()["rouge1"]["f"]
                        scores[(when, b)].append(float(f))
        print(f"\n{group}: {len(items)} notes")
        print(
            "  section                 notes   "
            + "   ".join(f"{b} before -> after" for b in BUDGETS)
        )
        for s in SECTIONS:
            cells = []
            for b in BUDGETS:
                n = max(has[s], 1)
                bef, aft = kept[("before", s, b)], kept[("after", s, b)]
                cells.append(
                    f"{bef:>3d} ({100 * bef / n:3.0f}%) -> {aft:>3d} ({100 * aft / n:3.0f}%)"
                )
            print(f"  {s:<22s} {has[s]:>5d}   " + "   ".join(cells))
        if scores:
            r = "   ".join(
                f"{b}: {sum(scores[('before', b)]) / len(scores[('before', b)]):.4f} -> "
                f"{sum(scores[('after', b)]) / len(scores[('after', b)]):.4f}"
                for b in BUDGETS
            )
            print(f"  ROUGE-1 F1 (mmr, hospital course as reference)  {r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument("--splits", nargs="+", default=["validation", "test"])
    args = ap.parse_args()
    if not Path(args.data_dir).is_dir():
        print(f"no data at {args.data_dir}; pass --data-dir", file=sys.stderr)
        return
    run(args.data_dir, args.splits)


if __name__ == "__main__":
    main()
