from __future__ import annotations

from typing import Any

import pytest

from budgetctx import InvalidParameterError
from budgetctx.eval._store import SweepRow
from budgetctx.eval.report import Bound, oracle_bounds


def _bounds(rows: list[SweepRow], **kw: Any) -> dict[tuple[str, str, int], Bound]:
    return {(b.dataset, b.unitizer, b.budget): b for b in oracle_bounds(rows, **kw)}


def test_hand_case(toy: list[SweepRow]) -> None:
    b = _bounds(toy)[("alpha", "sentence", 256)]
    assert b.selectors == ("lead", "mmr", "rcd")
    assert (b.upper, b.upper_selector) == (pytest.approx(0.30), "mmr")
    # lead and rcd tie at .20; the paper's order decides.
    assert (b.lower, b.lower_selector) == (pytest.approx(0.20), "lead")
    assert b.instance_upper == pytest.approx((0.30 + 0.40 + 0.30) / 3)
    assert b.instance_lower == pytest.approx((0.10 + 0.10 + 0.20) / 3)
    assert (b.n, b.excluded) == (3, 0)
    assert (b.oracle, b.oracle_n) == (pytest.approx(0.50), 3)

    b = _bounds(toy)[("alpha", "sentence", 512)]
    assert (b.upper, b.upper_selector) == (pytest.approx(0.35), "rcd")
    assert (b.lower, b.lower_selector) == (pytest.approx(0.30), "lead")
    assert b.instance_upper == pytest.approx((0.40 + 0.45 + 0.30) / 3)
    assert b.instance_lower == pytest.approx((0.35 + 0.20 + 0.20) / 3)
    assert b.oracle == pytest.approx(0.70)


def test_bounds_are_ordered(toy: list[SweepRow]) -> None:
    for b in oracle_bounds(toy):
        assert b.instance_lower is not None and b.instance_upper is not None
        assert b.instance_lower <= b.lower + 1e-12
        assert b.lower <= b.upper
        assert b.upper <= b.instance_upper + 1e-12
        if b.oracle is not None:
            assert b.instance_upper <= b.oracle


def test_no_oracle_rows_gives_none(toy: list[SweepRow]) -> None:
    b = _bounds(toy)[("beta", "sentence", 256)]
    assert (b.oracle, b.oracle_n) == (None, 0)
    # A tie between the two selectors: both bounds are .5, per budget and per instance.
    assert (b.upper, b.lower, b.instance_upper, b.instance_lower) == pytest.approx((0.5,) * 4)


def test_examples_missing_a_selector_are_excluded_from_per_instance_bounds(
    toy: list[SweepRow],
) -> None:
    rows = [
        r
        for r in toy
        if not (
            r.dataset == "alpha"
            and r.unitizer == "sentence"
            and r.selector == "rcd"
            and r.budget == 512
            and r.example_id == "e3"
        )
    ]
    b = _bounds(rows)[("alpha", "sentence", 512)]
    assert (b.n, b.excluded) == (2, 1)
    assert b.instance_upper == pytest.approx((0.40 + 0.45) / 2)
    assert b.instance_lower == pytest.approx((0.35 + 0.20) / 2)
    # Per budget, each selector keeps every row it has.
    assert (b.upper, b.upper_selector) == (pytest.approx((0.35 + 0.45) / 2), "rcd")
    assert b.lower == pytest.approx(0.30)


def test_a_subset_of_selectors(toy: list[SweepRow]) -> None:
    b = _bounds(toy, selectors=["lead", "rcd"])[("alpha", "sentence", 256)]
    assert b.selectors == ("lead", "rcd")
    assert b.upper == pytest.approx(0.20)
    assert b.instance_upper == pytest.approx((0.30 + 0.20 + 0.30) / 3)
    # A requested selector that one (dataset, unitizer) lacks: no complete example there.
    w = _bounds(toy, selectors=["lead", "rcd"])[("alpha", "window", 256)]
    assert (w.selectors, w.n, w.excluded, w.instance_upper) == (("lead",), 0, 3, None)


def test_split_and_unitizer_filters(toy: list[SweepRow]) -> None:
    bounds = _bounds(toy, split="test", unitizer="sentence")
    assert {k[1] for k in bounds} == {"sentence"}
    assert bounds[("alpha", "sentence", 256)].n == 2


def test_bad_selectors(toy: list[SweepRow]) -> None:
    with pytest.raises(InvalidParameterError, match="ceiling"):
        oracle_bounds(toy, selectors=["lead", "oracle"])
    with pytest.raises(InvalidParameterError, match=r"\['lead', 'mmr', 'rcd'\]"):
        oracle_bounds(toy, selectors=["lead", "fancy"])


def test_bound_to_dict(toy: list[SweepRow]) -> None:
    d = oracle_bounds(toy)[0].to_dict()
    assert d["selectors"] == ["lead", "mmr", "rcd"] and "instance_upper" in d
