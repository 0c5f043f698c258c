"""Issue 27: the units are encoded only when the selection reads the encoding.

Lead, shuffled and a document sent whole read no relevance, similarity or route statistic, so
they never call the representation's ``encode``; every other selection does, once per prepared
document. What they select is what the encoded path selects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from budgetctx import build_context, prepare
from budgetctx.build._pipeline import NOT_ENCODED
from budgetctx.representations import TfidfRepresentation
from budgetctx.selectors import LeadSelector, ShuffledSelector

SRC = Path(__file__).resolve().parents[2] / "src"


class _EncodedLead(LeadSelector):
    """Lead by another type: the pipeline cannot tell it reads nothing, so it encodes."""


class _EncodedShuffled(ShuffledSelector):
    pass


@pytest.fixture()
def encodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts calls of the TF-IDF representation's ``encode`` (one entry per call)."""
    calls: list[int] = []
    real = TfidfRepresentation.encode

    def counting(self: TfidfRepresentation, texts: Any, **kw: Any) -> Any:
        calls.append(len(texts))
        return real(self, texts, **kw)

    monkeypatch.setattr(TfidfRepresentation, "encode", counting)
    yield calls


@pytest.mark.parametrize("selector", ["lead", "shuffled", "lead:fill=true", "random:seed=3"])
def test_lead_and_shuffled_never_encode(
    sample_note: str, encodes: list[int], selector: str
) -> None:
    ctx = build_context(sample_note, 200, selector=selector)
    assert encodes == []
    assert ctx.units and ctx.tokens_used <= 200
    assert ctx.relevance_source == NOT_ENCODED
    assert all(u.relevance is None for u in ctx.units)
    # lead's and shuffled's gain is the unit's relevance: not computed either (a profile's
    # pinned units have no gain, as before)
    assert all(u.gain is None for u in ctx.units if not u.pinned)
    assert "phi" not in ctx.stats and "rho" not in ctx.stats
    assert ctx.stats["length"] == ctx.document_tokens
    assert "represent" not in ctx.timings_ms
    out = json.dumps(ctx.to_dict(), allow_nan=False)  # strict JSON: None, not NaN
    assert '"relevance": null' in out


def test_a_document_that_fits_is_sent_without_encoding(
    sample_note: str, encodes: list[int]
) -> None:
    for selector in ("mmr", "rcd", "facility", "sliding", "graphcluster"):
        ctx = build_context(sample_note, 100_000, selector=selector)
        assert ctx.text == sample_note and ctx.reason is not None
        assert all(u.relevance is None for u in ctx.units)
    assert encodes == []
    # whole_if_fits=False runs the selector, which reads the encoding
    doc = prepare(sample_note)
    ctx = doc.select(100_000, whole_if_fits=False)
    assert encodes == [len(doc.segmentation.units)]
    assert all(u.relevance is not None for u in ctx.units)


def test_selectors_that_read_the_encoding_encode_once_per_document(
    sample_note: str, encodes: list[int]
) -> None:
    doc = prepare(sample_note)
    assert encodes == [] and not doc.represented
    for selector in ("mmr", "facility", "auto", "hierarchical", "sliding"):
        ctx = doc.select(150, selector=selector)
        assert ctx.relevance_source == "centroid"
        assert {"phi", "rho"} <= set(ctx.stats)
        assert all(isinstance(u.relevance, float) for u in ctx.units)
    assert encodes == [len(doc.segmentation.units)] and doc.represented
    # a router reads the route statistics even when the document fits, but build_context
    # sends a fitting document before routing: the route is made when it is read (part I)
    ctx = build_context(sample_note, 100_000, selector="auto")
    assert len(encodes) == 1
    assert ctx.route is not None and {"phi", "rho"} <= set(ctx.stats)
    assert len(encodes) == 2


@pytest.mark.parametrize(
    ("name", "encoded"), [("lead", _EncodedLead), ("shuffled", _EncodedShuffled)]
)
@pytest.mark.parametrize("fill", [False, True])
def test_lazy_lead_selects_what_the_encoded_path_selects(
    sample_note: str, name: str, encoded: type[LeadSelector], fill: bool
) -> None:
    doc = prepare(sample_note)
    full = prepare(sample_note)
    for budget in (3, 12, 40, 150, 400, 1000):
        lazy = doc.select(budget, selector=name, selector_options={"fill": fill})
        ref = full.select(budget, selector=encoded(fill=fill))
        assert not doc.represented and full.represented
        assert lazy.text == ref.text and lazy.tokens_used == ref.tokens_used
        assert lazy.excluded == ref.excluded and lazy.notes == ref.notes
        assert lazy.reason == ref.reason and lazy.selector == ref.selector
        # every field of every unit but the scores the lazy path did not compute
        assert [_without_scores(u) for u in lazy.units] == [_without_scores(u) for u in ref.units]
        r = full.features.relevance
        for u in ref.units:
            assert u.relevance == round(float(r[u.id]), 6)
        want = {k: v for k, v in ref.stats.items() if k not in ("phi", "rho")}
        assert lazy.stats == want
        assert full.stats(budget).to_dict() == ref.stats


def _without_scores(u: Any) -> dict[str, Any]:
    d: dict[str, Any] = u.to_dict()
    del d["relevance"]
    if not u.pinned:
        del d["gain"]
    return d


def test_pins_ranked_by_relevance_and_truncation_encode(
    sample_note: str, encodes: list[int]
) -> None:
    ctx = build_context(sample_note, 60, selector="lead", pin="history of present illness")
    assert len(encodes) == 1 and ctx.relevance_source == "centroid"
    build_context(sample_note, 60, selector="lead", truncate=True)
    assert len(encodes) == 2


def test_a_shared_document_is_encoded_once_across_threads(
    sample_note: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = TfidfRepresentation.encode

    def slow(self: TfidfRepresentation, texts: Any, **kw: Any) -> Any:
        calls.append(1)
        time.sleep(0.05)  # long enough for every thread to ask while the first encodes
        return real(self, texts, **kw)

    monkeypatch.setattr(TfidfRepresentation, "encode", slow)
    doc = prepare(sample_note)
    start = threading.Barrier(4)
    seen: list[Any] = []

    def worker() -> None:
        start.wait()
        seen.append(doc.features)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1]
    assert len(seen) == 4 and all(f is seen[0] for f in seen)
    assert np.array_equal(seen[0].relevance, prepare(sample_note).features.relevance)


def test_profile_identifiers_still_carry_no_relevance_when_encoded_later(
    sample_note: str,
) -> None:
    # the clinical profile's identifier units are zeroed in the lazy encoding, as before
    doc = prepare(sample_note)
    off = prepare(sample_note, profile=None)
    r, r0 = doc.features.relevance, off.features.relevance
    changed = np.flatnonzero(r != r0)
    assert len(changed) and np.all(r[changed] == 0.0)
    assert doc.profile_note is not None and "identifier units" in doc.profile_note


def test_select_lead_does_not_import_scipy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from budgetctx import build_context\n"
        "from budgetctx.data import sample_note\n"
        "ctx = build_context(sample_note(), 256, selector='lead')\n"
        "assert ctx.units\n"
        "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        cwd=tmp_path,
    )
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("dense_limit", [4096, 8])
def test_relevance_only_selections_build_no_kernel(sample_note: str, dense_limit: int) -> None:
    # sliding and hierarchical without its redundancy term (lambda_=1) read relevance only,
    # caller pins rank by relevance, and the route statistics read each unit's similarity to
    # the next from the rows: none of them builds the n x n product (dense) or the neighbour
    # graph (sparse)
    doc = prepare(sample_note, dense_limit=dense_limit, profile=None)
    for selector, options in (("sliding", {}), ("hierarchical", {"lambda_": 1.0})):
        ctx = doc.select(150, selector=selector, selector_options=options)
        assert ctx.units and {"phi", "rho"} <= set(ctx.stats)
    doc.select(60, selector="lead", pin="history of present illness")
    assert doc.represented
    kernel = doc.features.kernel
    assert not {"G", "S"} & set(vars(kernel)), type(kernel).__name__
    doc.select(150, selector="facility")  # one that reads it builds it (no pins: not a subset)
    assert {"G", "S"} & set(vars(kernel))


def test_a_prepared_document_pickles_with_its_encoding(sample_note: str) -> None:
    import pickle

    doc = prepare(sample_note)
    again = pickle.loads(pickle.dumps(doc))
    assert again.represented and doc.represented  # pickling encodes: the encoding travels
    assert np.array_equal(again.features.relevance, doc.features.relevance)
    for selector in ("lead", "mmr"):
        a, b = doc.select(150, selector=selector), again.select(150, selector=selector)
        assert (a.text, a.units, a.stats) == (b.text, b.units, b.stats)
