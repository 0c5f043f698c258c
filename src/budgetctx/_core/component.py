"""The base of the registered components (selectors, unitizers, representations): a frozen
dataclass whose fields are its parameters.

A component declares its name, its fields and their rules; the base checks the fields at
construction and reports them as ``params()``, so no component writes either by hand::

    @dataclass(frozen=True)
    class LeadSelector(Component, name="lead"):
        fill: bool = False
        _constraints: ClassVar[Mapping[str, Constraint]] = {"fill": Boolean()}

>>> from budgetctx.selectors import MMRSelector
>>> MMRSelector(lambda_=0.5).params()["lambda_"], MMRSelector().name
(0.5, 'mmr')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, ClassVar

from budgetctx._core.validation import Constraint, validate_fields

__all__ = ["Component"]


class Component:
    """Checks a frozen dataclass's fields against ``_constraints`` when it is built; its
    ``name`` is the one given in the class statement, its ``params()`` its fields."""

    _constraints: ClassVar[Mapping[str, Constraint]] = {}
    _component_name: ClassVar[str]

    def __init_subclass__(cls, *, name: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls._component_name = name

    @property
    def name(self) -> str:
        """The registered name (what ``Context.selector``/``unitizer`` report)."""
        return self._component_name

    def __post_init__(self) -> None:
        validate_fields(self)

    def params(self) -> dict[str, Any]:
        """The parameters that change the output: every field, by default."""
        out: dict[str, Any] = asdict(self)  # type: ignore[call-overload]  # a dataclass's base
        return out
