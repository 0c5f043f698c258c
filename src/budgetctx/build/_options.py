"""``BuildOptions``: every option of a context build, declared once and checked once.

Each option is one field declaring its default and its rule together, so adding an option is
one declaration here (plus the code that reads it). :func:`~budgetctx.build_context`,
:func:`~budgetctx.prepare`, :meth:`~budgetctx.PreparedDocument.select`,
:class:`~budgetctx.batch.ContextBuilder`, :func:`~budgetctx.fit_messages`, the service, the
CLI and the framework adapters all build one ``BuildOptions`` from their keyword arguments, at
their public boundary, and hand it on; nothing behind the boundary checks an option again.
The budget is not an option (a sweep varies it over one configuration): :func:`check_budget`
is its one rule, ``reserve < budget`` included.

>>> opts = BuildOptions(selector="mmr:lambda_=0.5", reserve=16)
>>> opts.selector, opts.reserve
('mmr:lambda_=0.5', 16)
>>> BuildOptions(order="random")
Traceback (most recent call last):
...
budgetctx._errors.InvalidParameterError: The 'order' parameter of BuildOptions must be one of 'document', 'selection'. Got 'random' instead; 'document' keeps the input's order.
>>> check_budget("build_context", 100)
100
"""  # noqa: E501

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields
from typing import Any, Literal

from budgetctx._core.defaults import DEFAULT_SELECTOR
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
    is_default,
)
from budgetctx._errors import InvalidParameterError
from budgetctx.build._documents import check_header_template
from budgetctx.build._pins import Pin
from budgetctx.profiles import ClinicalProfile
from budgetctx.representations import DENSE_LIMIT, Representation
from budgetctx.router import Router
from budgetctx.selectors import Selector
from budgetctx.tokenizers import Tokenizer
from budgetctx.unitizers import Unitizer

__all__ = ["BUDGET", "DEFAULT_SELECTOR", "RULES", "BuildOptions", "check_budget", "check_reserve"]

#: The one rule of a token budget, wherever one is taken.
BUDGET: Constraint = Interval(int, 1, None, fix="e.g. budget=512.")


def _rule(rule: Constraint) -> dict[str, Constraint]:
    """A field's rule, kept in its metadata so that default and rule are declared together."""
    return {"rule": rule}


def _name_or(protocol: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str | protocol)


_MAPPING = {"fix": "pass a mapping of option names to values, e.g. {'lambda_': 0.5}."}


@dataclass(frozen=True)
class BuildOptions:
    """The options of one context build (everything but the documents and the budget).

    Frozen and checked at construction: a bad value fails here with the fix, never half-way
    through a batch. The keyword arguments of :func:`~budgetctx.build_context` are these
    fields; pass ``options=BuildOptions(...)`` to reuse one configuration, and
    :meth:`replace` to derive another.

    >>> opts = BuildOptions(unitizer="section", truncate=True)
    >>> opts.replace(reserve=8).reserve, opts.unitizer
    (8, 'section')
    """

    tokenizer: str | Tokenizer = field(
        default="o200k_base",
        metadata=_rule(
            Predicate(
                _name_or(Tokenizer), "a tokenizer name or a Tokenizer", fix="see list_tokenizers()."
            )
        ),
    )
    unitizer: str | Unitizer = field(
        default="sentence",
        metadata=_rule(
            Predicate(
                _name_or(Unitizer), "a unitizer name or a Unitizer", fix="see list_unitizers()."
            )
        ),
    )
    representation: str | Representation = field(
        default="tfidf",
        metadata=_rule(
            Predicate(
                _name_or(Representation),
                "a representation name or a Representation",
                fix="see list_representations().",
            )
        ),
    )
    selector: str | Selector | Router = field(
        default=DEFAULT_SELECTOR,
        metadata=_rule(
            Predicate(
                lambda v: isinstance(v, str | Selector | Router),
                "a selector name or spec, a Selector or a Router",
                fix="e.g. selector='mmr' or 'mmr:lambda_=0.5', or 'auto' for the bundled router.",
            )
        ),
    )
    query: str | None = field(default=None, metadata=_rule(NoneOr(InstanceOf(str, "a str"))))
    separator: str = field(
        default="\n", metadata=_rule(InstanceOf(str, "a str", fix="e.g. separator='\\n'."))
    )
    order: Literal["document", "selection"] = field(
        default="document",
        metadata=_rule(OneOf(("document", "selection"), fix="'document' keeps the input's order.")),
    )
    truncate: bool = field(
        default=False,
        metadata=_rule(Boolean(fix="pass truncate=True to cut one unit at a token boundary.")),
    )
    section_weights: Mapping[str, float] | None = field(
        default=None,
        metadata=_rule(
            Predicate(
                lambda v: v is None or FloatMapping(low=0).accepts(v),
                "None or a mapping of section names to finite floats >= 0",
                fix="e.g. {'PLAN': 2.0}; use 0 to ignore a section.",
            )
        ),
    )
    selector_options: Mapping[str, Any] | None = field(
        default=None, metadata=_rule(NoneOr(InstanceOf(Mapping, "a mapping", **_MAPPING)))
    )
    unitizer_options: Mapping[str, Any] | None = field(
        default=None, metadata=_rule(NoneOr(InstanceOf(Mapping, "a mapping", **_MAPPING)))
    )
    dense_limit: int = field(
        default=DENSE_LIMIT,
        metadata=_rule(Interval(int, 0, None, fix=f"the default is {DENSE_LIMIT}.")),
    )
    #: not checked here: pins are checked when they are matched against a document's units
    pin: Pin | Sequence[Pin] | None = None
    reserve: int = field(
        default=0,
        metadata=_rule(Interval(int, 0, None, fix="e.g. reserve=256 keeps room for the answer.")),
    )
    on_pin_overflow: Literal["rank", "error"] = field(
        default="rank",
        metadata=_rule(
            OneOf(("rank", "error"), fix="'rank' keeps the most relevant pinned units that fit.")
        ),
    )
    document_header: str | None = field(
        default="[{id}]",
        metadata=_rule(NoneOr(InstanceOf(str, "a str", fix="e.g. '[{id}]', or None."))),
    )
    document_separator: str = field(
        default="\n", metadata=_rule(InstanceOf(str, "a str", fix="e.g. document_separator='\\n'."))
    )
    # issue 22: what a kind of reader must not lose (budgetctx.profiles)
    profile: str | ClinicalProfile | None = field(
        default="auto",
        metadata=_rule(
            Predicate(
                lambda v: v is None or isinstance(v, str | ClinicalProfile),
                "None, 'auto' or a profile name or instance",
                fix="e.g. profile='clinical', or None for no profile.",
            )
        ),
    )
    #: who is asking, for the error message ("The 'order' parameter of build_context ...")
    owner: InitVar[str] = "BuildOptions"

    def __post_init__(self, owner: str) -> None:
        # A value that is its field's default object is skipped: each default was checked once,
        # below the class, and passes its rule unchanged (most calls leave most options alone).
        for name, rule, default in _CHECKED:
            value = getattr(self, name)
            if not is_default(value, default):
                object.__setattr__(self, name, check(owner, name, value, rule))
        if not is_default(self.document_header, _DEFAULT_HEADER):
            check_header_template(self.document_header)

    def replace(self, **changes: Any) -> BuildOptions:
        """A copy with ``changes``, checked like any other."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def merge(cls, options: object, owner: str, /, **keywords: Any) -> BuildOptions:
        """The options of a call: ``keywords`` alone, or ``options`` with the keywords that
        differ from their defaults laid over it. Checked once, errors naming ``owner``."""
        if options is None:
            return cls(**keywords, owner=owner)
        if not isinstance(options, BuildOptions):
            check(owner, "options", options, InstanceOf(BuildOptions, "a BuildOptions or None"))
        assert isinstance(options, BuildOptions)
        changed = {k: v for k, v in keywords.items() if not _is_default(k, v)}
        return dataclasses.replace(options, **changed, owner=owner) if changed else options

    def prepare_options(self) -> dict[str, Any]:
        """What preparing a document reads (the rest is read when selecting)."""
        return {name: getattr(self, name) for name in _PREPARE}


_DEFAULTS = {f.name: f.default for f in fields(BuildOptions)}


def _default_passes(name: str, rule: Constraint, default: object) -> bool:
    try:
        return check("BuildOptions", name, default, rule) is default
    except InvalidParameterError:  # pragma: no cover - every default is valid
        return False


#: (name, rule, the default when it passes its rule unchanged, else a value no option is)
_CHECKED: tuple[tuple[str, Constraint, object], ...] = tuple(
    (
        f.name,
        f.metadata["rule"],
        f.default if _default_passes(f.name, f.metadata["rule"], f.default) else object(),
    )
    for f in fields(BuildOptions)
    if "rule" in f.metadata
)
_DEFAULT_HEADER: str | None = BuildOptions.document_header
check_header_template(_DEFAULT_HEADER)
#: The options that preparing a document reads.
_PREPARE = (
    "tokenizer",
    "unitizer",
    "representation",
    "query",
    "separator",
    "section_weights",
    "unitizer_options",
    "dense_limit",
    "document_header",
    "document_separator",
    "profile",
)
#: Every option's rule, and the budget's, by name.
RULES: dict[str, Constraint] = {
    "budget": BUDGET,
    **{f.name: f.metadata["rule"] for f in fields(BuildOptions) if "rule" in f.metadata},
}


def _is_default(name: str, value: Any) -> bool:
    default = _DEFAULTS[name]
    return value is default or (type(value) is type(default) and value == default)


def check_budget(owner: str, budget: Any) -> int:
    """``budget`` once it is an int >= 1 (the one rule of a budget, wherever one is taken)."""
    return int(check(owner, "budget", budget, BUDGET))


def check_reserve(
    budget: int, reserve: int, *, owner: str | None = None, what: str = "context"
) -> None:
    """Refuse a ``reserve`` (already checked as an option) that leaves nothing of ``budget``;
    ``what`` names what the room is for."""
    if reserve >= budget:
        of = f" of {owner}" if owner else ""
        raise InvalidParameterError(
            f"The 'reserve' parameter{of} must be smaller than the budget ({budget}). Got "
            f"{reserve} instead; nothing would be left for the {what}. Lower reserve or raise "
            "the budget.",
            parameter="reserve",
            value=reserve,
        )
