"""Name -> component registries.

A registry maps a name to a factory. Factories are called with keyword options, so
``get_selector("mmr", lambda_=0.5)`` builds a fresh configured instance (a name without options
gives one shared instance when nothing about it can change: see ``_immutable``). Unknown names raise
:class:`UnknownComponentError`, which lists the valid names; anything that is neither a name nor
an instance of the registry's protocol (``None``, a number, a tokenizer given as a selector)
raises :class:`InvalidParameterError` naming the parameter (``selector``, ``tokenizer``, ...).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from budgetctx._core.validation import InstanceOf, Predicate, check
from budgetctx._errors import InvalidParameterError, UnknownComponentError

T = TypeVar("T")

__all__ = ["Registry"]


@functools.cache
def _accepted_options(factory: Callable[..., Any]) -> list[str] | None:
    """Keyword options a factory takes; None when it takes arbitrary keywords."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins without signatures
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


@functools.cache
def _required_options(factory: Callable[..., Any]) -> frozenset[str]:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover
        return frozenset()
    return frozenset(
        p.name
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


def _is_instance(value: object, base: type[Any]) -> bool:
    # A class has the protocol's attributes too: refuse it, ask for an instance.
    return isinstance(value, base) and not isinstance(value, type)


_SCALARS = (str, int, float, bool, type(None))


def _immutable(value: object) -> bool:
    """Whether ``value`` is one of budgetctx's frozen dataclasses whose fields are all scalars
    or tuples of scalars: nothing about it can change, so one instance serves every call that
    names it without options (a component is built on every call: ~2 us each, and their
    fields' checks). A caller's class, or one holding a mapping, a model or a cache, is
    built every time."""
    cls = type(value)
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not cls.__module__.startswith("budgetctx."):
        return False
    attributes = getattr(value, "__dict__", None)
    if attributes is None:  # slots: not shared (none of budgetctx's components has them)
        return False
    return all(
        isinstance(v, _SCALARS)
        or (isinstance(v, tuple) and all(isinstance(x, _SCALARS) for x in v))
        for v in attributes.values()
    )


class Registry(Generic[T]):
    """A small, explicit name -> factory mapping for one kind of component.

    ``base`` is the (runtime-checkable) protocol an instance must satisfy to be accepted in
    place of a name.

    >>> reg = Registry("widget")
    >>> reg.register("plain", dict)
    >>> reg.create("PLAIN", a=1)
    {'a': 1}
    """

    def __init__(self, kind: str, base: type[Any] | None = None) -> None:
        self.kind = kind
        self._base = base
        self._factories: dict[str, Callable[..., T]] = {}
        self._aliases: dict[str, str] = {}
        #: per name, the factory and the instance it made without options, when that instance
        #: is immutable (see _immutable): every later call would make an equal one
        self._shared: dict[str, tuple[Callable[..., T], T]] = {}

    def _owner(self) -> str:
        return f"get_{self.kind}"

    def _check_name(self, name: object) -> str:
        if isinstance(name, str):  # the common case, without building the listing
            return name
        listing = ", ".join(repr(n) for n in self.names()) or "none registered yet"
        rule = InstanceOf(str, f"a {self.kind} name (a str)", fix=f"pass one of {listing}.")
        return str(check(self._owner(), self.kind, name, rule))

    def register(
        self, name: str, factory: Callable[..., T], *, aliases: tuple[str, ...] = ()
    ) -> None:
        owner = f"register_{self.kind}"
        nonempty = Predicate(
            lambda v: isinstance(v, str) and v.strip() != "",
            "a non-empty str",
            fix=f"name the {self.kind}, e.g. 'my_{self.kind}'.",
        )
        check(owner, "name", name, nonempty)
        check(owner, "factory", factory, Predicate(callable, "callable", fix="pass a class."))
        for alias in aliases:
            check(owner, "aliases", alias, nonempty)
        key = name.lower()
        if key in self._factories or key in self._aliases:
            raise InvalidParameterError(
                f"A {self.kind} named {name!r} is already registered; pick another name.",
                parameter="name",
                value=name,
            )
        self._factories[key] = factory
        for alias in aliases:
            self._aliases[alias.lower()] = key
        self._shared.clear()

    def names(self) -> list[str]:
        return sorted(self._factories)

    def canonical(self, name: str, /) -> str:
        key = self._check_name(name).lower()
        key = self._aliases.get(key, key)
        if key not in self._factories:
            raise UnknownComponentError(self.kind, name, self.names())
        return key

    def create(self, name: str, /, **options: Any) -> T:
        key = self.canonical(name)
        factory = self._factories[key]
        if not options:  # the common case: only the required options can be missing
            shared = self._shared.get(key)
            if shared is not None and shared[0] is factory:
                return shared[1]
            if _required_options(factory):
                self._check_options(name, factory, options)
            made = factory()
            if _immutable(made):
                self._shared[key] = (factory, made)
            return made
        self._check_options(name, factory, options)
        return factory(**options)

    def _check_options(self, name: str, factory: Callable[..., T], options: dict[str, Any]) -> None:
        accepted = _accepted_options(factory)
        unknown = sorted(set(options) - set(accepted)) if accepted is not None else []
        if unknown:
            raise InvalidParameterError(
                f"Unknown option(s) {unknown} for {self.kind} {name!r}. "
                f"Accepted options: {', '.join(accepted or []) or 'none'}.",
                parameter=f"{self.kind}_options",
                value=unknown,
            )
        missing = _required_options(factory) - set(options)
        if missing:
            raise InvalidParameterError(
                f"The {self.kind} {name!r} needs the option(s) {sorted(missing)}, e.g. "
                f"get_{self.kind}({name!r}, {sorted(missing)[0]}=...).",
                parameter=f"{self.kind}_options",
                value=sorted(missing),
            )

    def resolve(self, spec: str | T, /, **options: Any) -> T:
        """Accept a name or an instance; names are built with ``options``."""
        if isinstance(spec, str):
            return self.create(spec, **options)
        base = self._base
        if base is not None and not _is_instance(spec, base):
            listing = ", ".join(repr(n) for n in self.names())
            rule = Predicate(
                lambda v: _is_instance(v, base),
                f"a {self.kind} name (a str) or a {base.__name__} instance",
                fix=f"pass one of {listing}, or an instance of a class implementing the "
                f"{base.__name__} protocol.",
            )
            check(self._owner(), self.kind, spec, rule)
        if options:
            raise InvalidParameterError(
                f"Options {sorted(options)} were given with a {self.kind} instance; "
                f"configure the instance itself, or pass its name instead.",
                parameter=f"{self.kind}_options",
                value=sorted(options),
            )
        return spec
