"""The one validation helper: each rule, the message template, coercion."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from budgetctx import InvalidParameterError
from budgetctx._core.validation import (
    Boolean,
    Constraint,
    FloatMapping,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    check,
    validate,
    validate_fields,
)


@pytest.mark.parametrize(
    ("rule", "good", "bad"),
    [
        (
            Interval(float, 0, 1),
            [0, 0.5, 1, 1.0],
            [-0.1, 1.01, math.nan, math.inf, "0.5", True, None],
        ),
        (Interval(float, 0, 1, closed="neither"), [0.5], [0, 1]),
        (Interval(float, 0, None, closed="neither"), [1e-9, 1e9], [0, -1, math.inf]),
        (Interval(int, 1, None), [1, 50], [0, 1.5, "50", True, 2.0]),
        (Interval(int, None, None), [-1, 0], [0.5]),
        (OneOf(("document", "selection")), ["document"], ["Document", None, ["document"]]),
        (Boolean(), [True, False], ["yes", 1, 0, None]),
        (InstanceOf(str, "a str"), ["", "x"], [None, b"x", 1]),
        (InstanceOf(int, "an int"), [3], [True]),
        (NoneOr(Interval(int, 0)), [None, 0, 7], [-1, "x"]),
        (FloatMapping(0), [{}, {"A": 1, "B": 2.5}], [[1, 2], {"A": math.nan}, {"A": -1}, {1: 1.0}]),
        (Predicate(lambda v: len(v) == 2, "a pair"), [(1, 2)], [(1,), 5]),
    ],
)
def test_rules_accept_and_refuse(rule: Constraint, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert rule.accepts(value), value
    for value in bad:
        assert not rule.accepts(value), value


def test_message_names_owner_parameter_value_and_fix() -> None:
    with pytest.raises(InvalidParameterError) as info:
        check("MMRSelector", "lambda_", 1.5, Interval(float, 0, 1, fix="1 is pure relevance."))
    assert str(info.value) == (
        "The 'lambda_' parameter of MMRSelector must be a float in [0, 1]. "
        "Got 1.5 instead; 1 is pure relevance."
    )
    assert info.value.parameter == "lambda_"
    assert info.value.value == 1.5


def test_message_without_fix_ends_with_a_full_stop() -> None:
    with pytest.raises(InvalidParameterError, match=r"must be an int >= 1\. Got 0 instead\.$"):
        check("WindowUnitizer", "base_words", 0, Interval(int, 1))


def test_long_values_are_cut_in_the_message() -> None:
    with pytest.raises(InvalidParameterError) as info:
        check("X", "query", "secret " * 100, InstanceOf(int, "an int"))
    assert "secret secret" in str(info.value)
    assert len(str(info.value)) < 200
    assert len(str(info.value.value)) <= 80


def test_coercion() -> None:
    assert check("X", "a", 1, Interval(float, 0, 1)) == 1.0
    assert isinstance(check("X", "a", 1, Interval(float, 0, 1)), float)
    assert check("X", "w", {"A": 1}, FloatMapping()) == {"A": 1.0}
    assert validate("X", {"a": Interval(float), "b": Boolean()}, {"a": 2}) == {"a": 2.0}


def test_describe_bounds() -> None:
    assert Interval(float, 0, None, closed="neither").describe() == "a float > 0"
    assert Interval(int, None, 10).describe() == "an int <= 10"
    assert Interval(float, 0, 1, closed="left").describe() == "a float in [0, 1)"
    assert NoneOr(Interval(int, 1)).describe() == "None or an int >= 1"
    assert FloatMapping(0).describe() == "a mapping of str to floats >= 0"
    assert FloatMapping().describe() == "a mapping of str to finite floats"


@dataclass(frozen=True)
class _Component:
    weight: float = 1.0
    flag: bool = False
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "weight": Interval(float, 0, None, fix="weights are non-negative."),
        "flag": Boolean(),
    }

    def __post_init__(self) -> None:
        validate_fields(self)


def test_validate_fields_on_a_frozen_dataclass() -> None:
    assert _Component(weight=2).weight == 2.0
    assert isinstance(_Component(weight=2).weight, float)
    with pytest.raises(InvalidParameterError, match="'weight' parameter of _Component"):
        _Component(weight=float("inf"))
    with pytest.raises(InvalidParameterError, match="'flag' parameter of _Component"):
        _Component(flag="yes")  # type: ignore[arg-type]


def test_predicate_convert_normalises_an_accepted_value() -> None:
    pair = Predicate(lambda v: len(v) == 2, "a pair", convert=tuple)
    assert check("X", "ngram_range", [1, 2], pair) == (1, 2)
    assert check("X", "other", [1, 2], Predicate(lambda v: len(v) == 2, "a pair")) == [1, 2]
    with pytest.raises(InvalidParameterError, match="must be a pair"):
        check("X", "ngram_range", [1], pair)


def test_frozen_rules_satisfy_the_constraint_protocol() -> None:
    # frozen dataclass fields are read-only: the protocol's fix must be read-only too (mypy)
    rules: list[Constraint] = [Interval(float), OneOf(("a",)), Boolean(), NoneOr(Boolean())]
    assert [r.fix for r in rules] == ["", "", "", ""]


@dataclass(frozen=True)
class _Defaults:
    weight: float = 1  # an int default: the rule makes it a float, so it is checked every time
    mode: str = "fast"
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "weight": Interval(float, 0, None),
        "mode": Predicate(lambda v: v in ("fast", "slow"), "'fast' or 'slow'"),
    }

    def __post_init__(self) -> None:
        validate_fields(self)


def test_validate_fields_skips_only_defaults_that_pass_unchanged() -> None:
    # fields left at their default are not re-checked on each instance (session 6, part K);
    # a default its rule converts still is, and every other value is
    assert isinstance(_Defaults().weight, float) and _Defaults().weight == 1.0
    assert _Defaults(mode="".join(["sl", "ow"])).mode == "slow"
    assert _Defaults(mode="".join(["fa", "st"])).mode == "fast"  # equal to the default
    with pytest.raises(InvalidParameterError, match="'mode' parameter of _Defaults"):
        _Defaults(mode="medium")
    with pytest.raises(InvalidParameterError, match="'weight' parameter of _Defaults"):
        _Defaults(weight=-1.0)


def test_validate_fields_reads_rules_changed_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _Defaults().mode == "fast"  # the default's check remembered under the old rules
    strict = {"mode": Predicate(lambda v: v == "slow", "'slow'")}
    monkeypatch.setattr(_Defaults, "_constraints", strict)
    with pytest.raises(InvalidParameterError, match=r"must be 'slow'\. Got 'fast'"):
        _Defaults()
