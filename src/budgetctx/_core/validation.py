"""Parameter rules declared as data, checked by one helper with one message template.

Every public constructor declares its rules next to its fields and calls :func:`validate`
(or :func:`validate_fields` for a frozen dataclass) so that a bad value fails at
construction, never mid-sweep. Messages follow one template::

    The 'lambda_' parameter of MMRSelector must be a float in [0, 1]. Got 1.5 instead;
    1 is pure relevance, 0 pure novelty.

>>> from budgetctx._core.validation import Interval, check
>>> check("MMRSelector", "lambda_", 1, Interval(float, 0, 1))
1.0
>>> try:
...     check("MMRSelector", "lambda_", "0.5", Interval(float, 0, 1))
... except ValueError as exc:
...     print(exc)
The 'lambda_' parameter of MMRSelector must be a float in [0, 1]. Got '0.5' instead.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, Protocol

from budgetctx._errors import InvalidParameterError

__all__ = [
    "Boolean",
    "Constraint",
    "FloatMapping",
    "InstanceOf",
    "Interval",
    "NoneOr",
    "OneOf",
    "Predicate",
    "check",
    "is_default",
    "short_repr",
    "validate",
    "validate_fields",
]

_MAX_REPR = 80


def short_repr(value: Any) -> str:
    """``repr`` cut to a few dozen characters: a message must never carry a document."""
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


class Constraint(Protocol):
    """A rule for one parameter: ``describe()`` completes "must be ..."."""

    # Read-only, so that frozen dataclasses satisfy the protocol.
    @property
    def fix(self) -> str: ...

    def accepts(self, value: Any) -> bool: ...

    def describe(self) -> str: ...

    def coerce(self, value: Any) -> Any: ...


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Interval:
    """An ``int`` or a finite ``float`` between ``low`` and ``high`` (``None``: unbounded).

    ``kind=float`` accepts ints too and returns a float; ``kind=int`` accepts integers only
    (``True`` and ``1.5`` are refused). NaN and infinities are never accepted.
    """

    kind: type[int] | type[float]
    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    fix: str = ""

    def accepts(self, value: Any) -> bool:
        if not (_is_int(value) if self.kind is int else _is_real(value)):
            return False
        x = float(value)
        if not math.isfinite(x):
            return False
        if self.low is not None:
            lo_ok = x >= self.low if self.closed in ("both", "left") else x > self.low
            if not lo_ok:
                return False
        if self.high is not None:
            hi_ok = x <= self.high if self.closed in ("both", "right") else x < self.high
            if not hi_ok:
                return False
        return True

    def describe(self) -> str:
        noun = "an int" if self.kind is int else "a float"
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            return f"{noun} in {left}{_num(lo)}, {_num(hi)}{right}"
        if lo is not None:
            op = ">=" if self.closed in ("both", "left") else ">"
            return f"{noun} {op} {_num(lo)}"
        if hi is not None:
            op = "<=" if self.closed in ("both", "right") else "<"
            return f"{noun} {op} {_num(hi)}"
        return "a finite float" if self.kind is float else "an int"

    def coerce(self, value: Any) -> Any:
        return int(value) if self.kind is int else float(value)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values (strings compared as given)."""

    values: tuple[Any, ...]
    fix: str = ""

    def accepts(self, value: Any) -> bool:
        try:
            return value in self.values
        except TypeError:  # unhashable or incomparable values
            return False

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def coerce(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class Boolean:
    """``True`` or ``False`` (not ``"yes"``, not ``1``)."""

    fix: str = ""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "a bool (True or False)"

    def coerce(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class InstanceOf:
    """An instance of ``types``; ``label`` names it in the message ("a str")."""

    types: type | tuple[type, ...]
    label: str
    fix: str = ""

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) and bool not in _as_tuple(self.types):
            return False
        return isinstance(value, self.types)

    def describe(self) -> str:
        return self.label

    def coerce(self, value: Any) -> Any:
        return value


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


@dataclass(frozen=True)
class NoneOr:
    """``None`` or whatever ``inner`` accepts."""

    inner: Constraint
    fix: str = ""

    def accepts(self, value: Any) -> bool:
        return value is None or self.inner.accepts(value)

    def describe(self) -> str:
        return f"None or {self.inner.describe()}"

    def coerce(self, value: Any) -> Any:
        return None if value is None else self.inner.coerce(value)

    def hint(self) -> str:
        return self.fix or self.inner.fix


@dataclass(frozen=True)
class FloatMapping:
    """A mapping of ``str`` keys to finite floats within ``low``/``high`` (inclusive)."""

    low: float | None = None
    high: float | None = None
    fix: str = ""

    def accepts(self, value: Any) -> bool:
        if not isinstance(value, Mapping):
            return False
        item = Interval(float, self.low, self.high)
        return all(isinstance(k, str) and item.accepts(v) for k, v in value.items())

    def describe(self) -> str:
        # "a float >= 0" -> "floats >= 0"; "a finite float" -> "finite floats"
        item = Interval(float, self.low, self.high).describe().removeprefix("a ")
        plural = item.replace("float", "floats", 1)
        return f"a mapping of str to {plural}"

    def coerce(self, value: Any) -> Any:
        return {str(k): float(v) for k, v in value.items()}


@dataclass(frozen=True)
class Predicate:
    """Any rule a function can state: ``test(value)`` true, described by ``label``.

    ``convert`` (optional) normalises an accepted value, e.g. a list pair to a tuple.
    """

    test: Callable[[Any], bool]
    label: str
    fix: str = ""
    convert: Callable[[Any], Any] | None = None

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.test(value))
        except (TypeError, ValueError):
            return False

    def describe(self) -> str:
        return self.label

    def coerce(self, value: Any) -> Any:
        return value if self.convert is None else self.convert(value)


def _hint(constraint: Constraint) -> str:
    hint = getattr(constraint, "hint", None)
    return str(hint()) if callable(hint) else constraint.fix


def check(owner: str, name: str, value: Any, constraint: Constraint) -> Any:
    """Return ``value`` (coerced) if ``constraint`` accepts it, else raise the one message."""
    if constraint.accepts(value):
        return constraint.coerce(value)
    fix = _hint(constraint)
    raise InvalidParameterError(
        f"The {name!r} parameter of {owner} must be {constraint.describe()}. "
        f"Got {short_repr(value)} instead" + (f"; {fix}" if fix else "."),
        parameter=name,
        value=value if isinstance(value, int | float | bool | type(None)) else short_repr(value),
    )


def validate(
    owner: str, constraints: Mapping[str, Constraint], values: Mapping[str, Any]
) -> dict[str, Any]:
    """Check every named value; returns them coerced (ints to floats where a float is due)."""
    return {
        name: check(owner, name, values[name], rule)
        for name, rule in constraints.items()
        if name in values
    }


def validate_fields(obj: Any) -> None:
    """Validate a frozen dataclass against its ``_constraints`` and store coerced values.

    Call it from ``__post_init__``::

        _constraints: ClassVar[Mapping[str, Constraint]] = {"lambda_": Interval(float, 0, 1)}

        def __post_init__(self) -> None:
            validate_fields(self)
    """
    cls = type(obj)
    rules: Mapping[str, Constraint] = cls._constraints
    plan = _PLANS.get(cls)
    if plan is None or plan[0] is not rules:
        plan = _PLANS[cls] = (rules, _plan(cls, rules))
    for name, rule, default in plan[1]:
        value = getattr(obj, name)
        if not is_default(value, default):
            object.__setattr__(obj, name, check(cls.__name__, name, value, rule))


def is_default(value: object, default: object) -> bool:
    """``value`` is ``default``, or a str equal to it (a caller's literal is often another
    object than the declaration's); the rules read a str's value, not its identity.

    >>> is_default("mmr", "".join(["m", "mr"])), is_default(0.5, 0.5), is_default(1, 1.0)
    (True, True, False)
    """
    return value is default or (type(value) is str and value == default)


#: per class: its rules, and (name, rule, the default when it passes unchanged) to check
_PLANS: dict[type, tuple[Mapping[str, Constraint], tuple[tuple[str, Constraint, object], ...]]] = {}


def _plan(cls: type, rules: Mapping[str, Constraint]) -> tuple[tuple[str, Constraint, object], ...]:
    """What :func:`validate_fields` checks on ``cls``: each field with a rule, in the rules'
    order, and its default where the rule accepts it unchanged, so that a field left at its
    default (the same object) is not checked again on every instance (components are built
    on every call)."""
    defaults = {f.name: f.default for f in fields(cls)}
    plan = []
    for name, rule in rules.items():
        if name not in defaults:
            continue
        default = defaults[name]
        try:
            passes = default is not MISSING and check(cls.__name__, name, default, rule) is default
        except InvalidParameterError:
            passes = False
        plan.append((name, rule, default if passes else _NEVER))
    return tuple(plan)


_NEVER = object()  # no field's value is this: always checked
