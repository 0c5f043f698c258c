"""The result objects' ``to_dict``: the same JSON as ``dataclasses.asdict`` gave (issue 27,
session 6: they now copy only what can change, which was most of a fitting document's
``to_dict``)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest

from budgetctx import Document, build_context
from budgetctx._core.results import Context, DocumentSummary, SelectedUnit


def _unit(u: SelectedUnit) -> dict[str, Any]:
    out = asdict(u)
    out["spans"] = [list(s) for s in u.spans]
    out["unit_spans"] = [list(s) for s in u.unit_spans]
    return out


def _summary(d: DocumentSummary) -> dict[str, Any]:
    out = asdict(d)
    out["metadata"] = dict(d.metadata) if d.metadata is not None else None
    return out


def _as_before(ctx: Context) -> dict[str, Any]:
    """``Context.to_dict`` as it was: ``asdict``, then each part converted again."""
    out = asdict(ctx)
    out["tokens_saved"] = ctx.tokens_saved
    out["units"] = [_unit(u) for u in ctx.units]
    out["excluded"] = list(ctx.excluded)
    out["notes"] = list(ctx.notes)
    out["route"] = ctx.route.to_dict() if ctx.route is not None else None
    out["documents"] = [_summary(d) for d in ctx.documents]
    return out


@pytest.mark.filterwarnings("ignore::budgetctx._errors.BudgetCtxWarning")
@pytest.mark.parametrize(
    ("budget", "options"),
    [
        (60, {"selector": "lead"}),
        (60, {"selector": "auto", "query": "chest pain"}),
        (90, {"selector": "mmr", "truncate": True, "reserve": 4}),
        (100_000, {"selector": "mmr"}),  # sent whole, its units computed when read
        (100_000, {"selector": "auto"}),
        (80, {"selector": "facility", "pin": "allergies"}),
    ],
)
def test_to_dict_gives_the_json_asdict_gave(
    sample_note: str, budget: int, options: dict[str, Any]
) -> None:
    for documents in (
        sample_note,
        [Document(sample_note[:900], id="a", metadata={"k": [1, 2]}), sample_note[900:1800]],
    ):
        ctx = build_context(documents, budget, **options)
        new = ctx.to_dict()
        assert json.dumps(new) == json.dumps(_as_before(ctx))
        # a copy: changing it leaves the context alone
        new["params"]["selector"]["x"] = 1
        new["stats"]["length"] = -1
        assert "x" not in ctx.params["selector"] and ctx.stats["length"] != -1
