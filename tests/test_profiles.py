"""The clinical profile: safety-critical sections kept, identifiers without relevance
(issue 22)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import InvalidParameterError, build_context, prepare
from budgetctx.data import sample_note
from budgetctx.profiles import CLINICAL, get_profile

NOTE = sample_note()

SHORT = """DISCHARGE SUMMARY
Attending: Dr. Q. Novak
Date of admission: 01/02/2024
HISTORY OF PRESENT ILLNESS: The patient is a 64 year old man admitted with pneumonia. He was
treated with ceftriaxone and azithromycin and improved over four days. Sputum culture grew
Streptococcus pneumoniae sensitive to penicillin. He was weaned off oxygen on day three.
DRUG ALLERGIES: Sulfa (rash).
MEDS ON DISCHARGE: Amoxicillin 1 g p.o. t.i.d. for 3 more days.
FINAL DIAGNOSIS: Community-acquired pneumonia, right lower lobe.
CODE STATUS: Full code.
FOLLOW UP: Primary care in one week with a chest x-ray in six weeks.
"""


@pytest.mark.parametrize("budget", [128, 256, 512])
def test_sample_note_keeps_the_allergies_and_discharge_medications(budget: int) -> None:
    ctx = build_context(NOTE, budget, unitizer="section")
    assert "ALLERGIES: Lisinopril (angioedema)." in ctx.text
    assert "1. Torsemide 40 mg" in ctx.text
    assert "Attending: Dr. R. Alvarez" not in ctx.text
    assert ctx.tokens_used <= budget
    assert ctx.params["profile"]["name"] == "clinical"
    assert any(n.startswith("clinical profile: pinned ALLERGIES") for n in ctx.notes)
    if budget >= 256:
        assert "DISCHARGE DIAGNOSES:" in ctx.text and "FOLLOW-UP:" in ctx.text


def test_profile_none_is_the_selection_without_a_profile() -> None:
    off = build_context(NOTE, 256, unitizer="section", profile=None)
    assert "ALLERGIES" not in off.text  # what issue 22 found: the allergy list dropped
    assert "profile" not in off.params and not any("profile" in n for n in off.notes)


def test_synonyms_and_priority_at_a_tight_budget() -> None:
    ctx = build_context(SHORT, 24)
    # most critical first: allergies, then code status, within the profile's share
    assert "DRUG ALLERGIES: Sulfa (rash)." in ctx.text
    assert "CODE STATUS: Full code." in ctx.text
    assert ctx.tokens_used <= 24
    pins, names, ids = CLINICAL.plan(
        prepare(SHORT).unit_sections, [u.text for u in prepare(SHORT).local_units]
    )
    assert names == [
        "ALLERGIES",
        "CODE STATUS",
        "DISCHARGE MEDICATIONS",
        "DISCHARGE DIAGNOSES",
        "FOLLOW-UP",
    ]
    units = prepare(SHORT).local_units
    assert [units[i].text.split(":")[0] for i in ids] == [
        "DISCHARGE SUMMARY Attending",
        "Date of admission",
    ]
    assert "DRUG ALLERGIES" in units[pins[0]].text


def test_identifiers_carry_no_relevance_and_auto_leaves_other_text_alone() -> None:
    doc = prepare(SHORT)
    off = prepare(SHORT, profile=None)
    r, r0 = doc.features.relevance, off.features.relevance
    ident = [i for i, u in enumerate(doc.local_units) if "Attending" in u.text or "Date" in u.text]
    assert ident and (r[ident] == 0).all() and (r0[ident] > 0).all()
    plain = "The committee met on Monday. The budget was approved. Roads will be repaired."
    a, b = prepare(plain), prepare(plain, profile=None)
    assert a.profile_pins == () and a.params == b.params
    assert a.features.relevance.tobytes() == b.features.relevance.tobytes()


def test_profile_is_overridable_and_unknown_names_fail_clearly() -> None:
    mine = replace(CLINICAL, pinned=(("FOLLOW-UP", ("FOLLOW UP",)),))
    ctx = build_context(SHORT, 40, profile=mine)
    assert "FOLLOW UP: Primary care" in ctx.text
    assert get_profile("Clinical") is CLINICAL
    with pytest.raises(InvalidParameterError, match=r"Unknown profile 'surgical'.*profile="):
        build_context(SHORT, 40, profile="surgical")
    with pytest.raises(InvalidParameterError, match="profile"):
        build_context(SHORT, 40, profile=3)  # type: ignore[arg-type]


def test_admission_medications_are_not_discharge_medications() -> None:
    text = "MEDICATIONS: Aspirin 81 mg daily.\nALLERGIES: None known.\nPLAN: Home."
    _, names, _ = CLINICAL.plan(
        prepare(text).unit_sections, [u.text for u in prepare(text).local_units]
    )
    assert names == ["ALLERGIES", "DISCHARGE MEDICATIONS"]  # no admission list: MEDICATIONS counts
    both = "MEDICATIONS ON ADMISSION: Aspirin.\nMEDICATIONS: Aspirin.\nALLERGIES: None."
    _, names2, _ = CLINICAL.plan(
        prepare(both).unit_sections, [u.text for u in prepare(both).local_units]
    )
    assert names2 == ["ALLERGIES"]


@settings(max_examples=25, deadline=None)
@given(budget=st.integers(1, 400), share=st.sampled_from([None, "auto", "clinical"]))
def test_budget_is_never_exceeded_with_a_profile(budget: int, share: str | None) -> None:
    ctx = build_context(SHORT, budget, profile=share)
    assert ctx.tokens_used <= budget
    scores = [u.relevance for u in ctx.units]
    if ctx.relevance_source == "not computed":  # sent whole: nothing encoded (issue 27)
        assert ctx.tokens_used == ctx.document_tokens and set(scores) <= {None}
    else:
        assert np.isfinite(scores).all()


# --profile on the CLI and "profile" in the service pass through to BuildOptions.profile


def test_cli_select_and_demo_take_a_profile(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from budgetctx.cli import app

    runner = CliRunner()
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    base = ["select", str(note), "--budget", "128", "--unitizer", "section", "--json"]
    on = runner.invoke(app, base)
    off = runner.invoke(app, [*base, "--profile", "none"])
    clinical = runner.invoke(app, [*base, "--profile", "clinical"])
    assert on.exit_code == off.exit_code == clinical.exit_code == 0, off.output
    on_ctx, off_ctx = json.loads(on.stdout), json.loads(off.stdout)
    assert on_ctx["params"]["profile"]["name"] == "clinical"
    assert "profile" not in off_ctx["params"]
    assert json.loads(clinical.stdout)["text"] == on_ctx["text"]
    expected = build_context(NOTE, 128, unitizer="section", profile=None)
    assert off_ctx["text"] == expected.text
    bad = runner.invoke(app, [*base, "--profile", "surgical"])
    assert bad.exit_code == 2 and "Unknown profile 'surgical'" in bad.stderr
    demo = runner.invoke(app, ["demo", "--budget", "128", "--profile", "none"])
    assert demo.exit_code == 0 and "clinical profile" not in demo.stdout


def test_cli_batch_takes_a_profile(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from budgetctx.cli import app

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a", "text": SHORT}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["batch", str(src), "--out", str(out), "--budget", "40", "--no-progress"]
    result = CliRunner().invoke(app, [*args, "--workers", "1", "--profile", "none"])
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert row["context"] == build_context(SHORT, 40, profile=None).text


def test_piped_demo_fits_80_columns_and_explains_itself() -> None:
    # a pipe is not a terminal: rich lays the page out at 80 columns, and the provenance
    # table must fit by wrapping its text column, not by dropping the spans or the section
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run(
        [sys.executable, "-m", "budgetctx.cli", "demo"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if "chars" in line and "section" in line)
    assert header.split() == ["unit", "chars", "tok", "rank", "rel", "section", "text"]
    flat = " ".join(proc.stdout.split())
    assert "ALLERGIES: Lisinopril (angioedema)." in flat  # the kept text is shown, wrapped
    assert "relevance = similarity to the note as a whole" in flat
    assert "clinical profile pinned ALLERGIES, DISCHARGE MEDICATIONS" in flat
