"""The validation contract, over every registered component and every option it accepts.

For each factory in the selector, unitizer, representation and tokenizer registries, the options
are read from its signature (nothing is listed by hand, so a new component or option is covered
the day it is registered). For each option:

- it has a declared rule (``_constraints``), so it is validated at construction;
- a value of the wrong type, and NaN or an infinity for a number, raise InvalidParameterError
  (a BudgetCtxError) when the component is built through its registry, never another exception,
  and the message names the parameter;
- a value of the right type is refused exactly when its declared rule refuses it, and a
  component built with an accepted value still works (no accepted value fails later, mid-sweep).

The registries themselves refuse anything that is neither a name nor an instance.
"""

from __future__ import annotations

import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import BudgetCtxError, InvalidParameterError
from budgetctx._core.registry import Registry
from budgetctx._core.validation import Constraint
from budgetctx.representations import Representation, get_representation, list_representations
from budgetctx.representations._base import _REGISTRY as _REPRESENTATIONS
from budgetctx.selectors import Selector, get_selector, list_selectors
from budgetctx.selectors._base import _REGISTRY as _SELECTORS
from budgetctx.tokenizers import Tokenizer, get_tokenizer, list_tokenizers
from budgetctx.tokenizers._base import _REGISTRY as _TOKENIZERS
from budgetctx.unitizers import Unitizer, get_unitizer, list_unitizers
from budgetctx.unitizers._base import _REGISTRY as _UNITIZERS
from tests.selectors._problems import random_problem

_KINDS: dict[str, tuple[Registry[Any], Callable[[], list[str]], Callable[..., Any]]] = {
    "selector": (_SELECTORS, list_selectors, get_selector),
    "unitizer": (_UNITIZERS, list_unitizers, get_unitizer),
    "representation": (_REPRESENTATIONS, list_representations, get_representation),
    "tokenizer": (_TOKENIZERS, list_tokenizers, get_tokenizer),
}
_PROTOCOLS = {
    "selector": Selector,
    "unitizer": Unitizer,
    "representation": Representation,
    "tokenizer": Tokenizer,
}

_TEXT = (
    "HISTORY: 67 y.o. male seen by Dr. Lee for chest pain at rest. Troponin negative x2.\n"
    "MEDICATIONS:\n1. Aspirin 81 mg p.o. daily.\n2. Metoprolol 25 mg b.i.d.\n"
    "PLAN: Chest pain resolved. Discharged home; follow up in 2 weeks. Diet as tolerated."
)


def _factory(kind: str, name: str) -> Callable[..., Any]:
    registry = _KINDS[kind][0]
    return registry._factories[registry.canonical(name)]


def _type_only_names() -> dict[str, Any]:
    # Names that components import only for type checking (scikit-learn is imported lazily to
    # keep `import budgetctx` fast) must be supplied to evaluate their annotations here.
    from sklearn.feature_extraction.text import TfidfVectorizer

    return {"TfidfVectorizer": TfidfVectorizer}


def _options(kind: str, name: str) -> list[inspect.Parameter]:
    params = inspect.signature(
        _factory(kind, name), eval_str=True, locals=_type_only_names()
    ).parameters.values()
    return [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _cases() -> Iterator[Any]:
    for kind, (_, names, _) in _KINDS.items():
        for name in names():
            for param in _options(kind, name):
                yield pytest.param(kind, name, param, id=f"{kind}-{name}-{param.name}")


CASES = list(_cases())


def _required(kind: str, name: str) -> dict[str, Any]:
    """Placeholders for options without defaults: rules are checked before any file is read."""
    return {p.name: "tokenizer.json" for p in _options(kind, name) if p.default is p.empty}


def _arms(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _of_type(value: Any, annotation: Any) -> bool:
    """Whether ``value`` has one of the types the annotation names (range not considered)."""
    for arm in _arms(annotation):
        origin = typing.get_origin(arm) or arm
        if arm is type(None):
            ok = value is None
        elif arm is bool:
            ok = isinstance(value, bool)
        elif arm is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif arm is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif arm is Path:
            ok = isinstance(value, os.PathLike)
        elif origin is tuple:
            ok = isinstance(value, tuple | list)  # a pair given as a list is normalised
        else:
            ok = isinstance(value, origin)
        if ok:
            return True
    return False


def _numeric(annotation: Any) -> bool:
    return any(arm in (int, float) for arm in _arms(annotation))


ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.text(max_size=2), st.floats()),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.complex_numbers(),
    st.builds(object),
)


def _right_type(annotation: Any) -> st.SearchStrategy[Any]:
    parts: list[st.SearchStrategy[Any]] = []
    for arm in _arms(annotation):
        # The extremes of an accepted range are where a later failure hides (an overflow).
        if arm is type(None):
            parts.append(st.none())
        elif arm is bool:
            parts.append(st.booleans())
        elif arm is int:
            parts += [
                st.integers(min_value=-(2**70), max_value=2**70),
                st.sampled_from([-1, 0, 1, 2, 2**31, 2**63, 2**70]),
            ]
        elif arm is float:
            parts += [
                st.floats(),
                st.integers(min_value=-1000, max_value=1000),
                st.sampled_from(
                    [0.0, 5e-324, 1e-300, 1.0 - 1e-16, 1.0, 1e300, 1.7976931348623157e308]
                ),
            ]
        elif arm is str:
            parts.append(st.text(max_size=12))
        elif typing.get_origin(arm) is tuple:
            parts.append(st.lists(st.integers(min_value=-2, max_value=4), min_size=0, max_size=3))
    return st.one_of(*parts) if parts else st.nothing()


def _build(kind: str, name: str, option: str, value: Any) -> Any:
    get = _KINDS[kind][2]
    return get(name, **{**_required(kind, name), option: value})


def _assert_refused(kind: str, name: str, option: str, value: Any) -> None:
    with pytest.raises(InvalidParameterError) as info:
        _build(kind, name, option, value)
    assert isinstance(info.value, BudgetCtxError)
    assert info.value.parameter == option
    assert str(info.value).startswith(f"The {option!r} parameter of "), str(info.value)


def _exercise(kind: str, component: Any) -> None:
    """Use a component built from accepted options: it must not fail on its first real input."""
    if kind == "selector":
        problem = random_problem(np.random.default_rng(0), 12, windows=True)
        selection = component.select(problem)
        tracker = problem.tracker()
        for e in selection.order:
            assert tracker.fits(e)
            tracker.add(e)
    elif kind == "unitizer":
        seg = component.unitize(_TEXT)
        assert seg.units
        for unit in seg.units:
            assert all(0 <= a < b <= len(_TEXT) for a, b in unit.spans)
    elif kind == "representation" and component.name == "tfidf":
        assert component.encode(["chest pain", "pain resolved"], query="pain").X.shape[0] == 2


@pytest.mark.parametrize(("kind", "name", "param"), CASES)
def test_every_option_has_a_declared_rule(kind: str, name: str, param: inspect.Parameter) -> None:
    rules: dict[str, Constraint] = dict(getattr(_factory(kind, name), "_constraints", {}))
    assert param.name in rules, f"{kind} {name!r}: option {param.name!r} has no rule"


@pytest.mark.parametrize(("kind", "name", "param"), CASES)
def test_default_passes_its_own_rule(kind: str, name: str, param: inspect.Parameter) -> None:
    if param.default is param.empty:
        pytest.skip("no default")
    rule: Constraint = _factory(kind, name)._constraints[param.name]
    assert rule.accepts(param.default)


@pytest.mark.parametrize(("kind", "name", "param"), CASES)
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_wrong_type_is_refused_at_construction(
    kind: str, name: str, param: inspect.Parameter, data: st.DataObject
) -> None:
    value = data.draw(ANY_VALUE.filter(lambda v: not _of_type(v, param.annotation)))
    _assert_refused(kind, name, param.name, value)


@pytest.mark.parametrize(("kind", "name", "param"), CASES)
def test_non_finite_numbers_are_refused(kind: str, name: str, param: inspect.Parameter) -> None:
    # F13: eta=inf and rcd:alpha=inf used to pass construction and fail (or mislead) later
    if not _numeric(param.annotation):
        pytest.skip("not a number")
    for value in (math.nan, math.inf, -math.inf):
        _assert_refused(kind, name, param.name, value)


@pytest.mark.parametrize(("kind", "name", "param"), CASES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_right_type_is_refused_exactly_when_its_rule_refuses(
    kind: str, name: str, param: inspect.Parameter, data: st.DataObject
) -> None:
    rule: Constraint = _factory(kind, name)._constraints[param.name]
    value = data.draw(_right_type(param.annotation))
    if not rule.accepts(value):
        _assert_refused(kind, name, param.name, value)
    elif not _required(kind, name):  # a required option names a real file (hf): not built here
        _exercise(kind, _build(kind, name, param.name, value))


@pytest.mark.parametrize("kind", list(_KINDS))
@pytest.mark.parametrize(
    "spec", [None, 0, 1.5, True, b"name", ["name"], {"name": 1}, object()], ids=repr
)
def test_registry_refuses_what_is_neither_a_name_nor_an_instance(kind: str, spec: Any) -> None:
    _, names, get = _KINDS[kind]
    with pytest.raises(InvalidParameterError) as info:
        get(spec)
    assert info.value.parameter == kind
    message = str(info.value)
    assert message.startswith(f"The {kind!r} parameter of get_{kind} must be")
    for name in names():
        assert repr(name) in message  # the fix lists every valid name


@pytest.mark.parametrize("kind", list(_KINDS))
@pytest.mark.parametrize("other", list(_KINDS))
def test_registry_refuses_a_component_of_another_kind(kind: str, other: str) -> None:
    if kind == other:
        pytest.skip("same kind")
    _, names, get_other = _KINDS[other]
    instance = get_other(names()[0] if other != "tokenizer" else "words")
    if isinstance(instance, _PROTOCOLS[kind]):
        pytest.skip(f"a {other} also satisfies the {kind} protocol")
    with pytest.raises(InvalidParameterError) as info:
        _KINDS[kind][2](instance)
    assert info.value.parameter == kind


@pytest.mark.parametrize("kind", list(_KINDS))
def test_registry_refuses_a_class_where_an_instance_is_due(kind: str) -> None:
    registry, _, get = _KINDS[kind]
    classes = [f for f in registry._factories.values() if isinstance(f, type)]
    for cls in classes:
        with pytest.raises(InvalidParameterError, match="instance"):
            get(cls)
