"""The selector-spec grammar: one parser for the library, the sweep and the CLI."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from budgetctx import InvalidParameterError
from budgetctx.selectors import parse_selector_spec, parse_selector_specs, split_selector_specs


def test_values_are_typed() -> None:
    assert parse_selector_spec("RCD:alpha=0.6,beta=1,fill=true,mode=x") == (
        "rcd",
        {"alpha": 0.6, "beta": 1, "fill": True, "mode": "x"},
    )


@pytest.mark.parametrize("bad", ["rcd:alpha", "rcd:=1", ":alpha=1", "", "  "])
def test_malformed_specs_name_the_spec(bad: str) -> None:
    with pytest.raises(InvalidParameterError, match="name"):
        parse_selector_spec(bad)


def test_non_string_spec_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="str"):
        parse_selector_spec(None)  # type: ignore[arg-type]


def test_lists_keep_options_with_their_selector() -> None:
    assert split_selector_specs("lead, rcd:alpha=0.5,beta=0.3 ,mmr:lambda_=0.2,sliding") == [
        "lead",
        "rcd:alpha=0.5,beta=0.3",
        "mmr:lambda_=0.2",
        "sliding",
    ]
    assert split_selector_specs(" , ,") == []
    assert parse_selector_specs("lead,mmr:lambda_=0.2") == [("lead", {}), ("mmr", {"lambda_": 0.2})]


_names = st.sampled_from(["lead", "mmr", "rcd", "facility"])
_keys = st.from_regex(r"[a-z_]{1,8}", fullmatch=True)
_values = st.one_of(st.integers(-1000, 1000), st.booleans(), st.sampled_from(["abc", "x_y"]))


@given(st.lists(st.tuples(_names, st.dictionaries(_keys, _values, max_size=3)), max_size=4))
def test_round_trip(specs: list[tuple[str, dict[str, object]]]) -> None:
    def text(value: object) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    written = ",".join(
        name + (":" + ",".join(f"{k}={text(v)}" for k, v in opts.items()) if opts else "")
        for name, opts in specs
    )
    assert parse_selector_specs(written) == specs
