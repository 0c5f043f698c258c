"""The cost model (Eq. 1 of the paper): ``Cost(B, S) = (p_in * B + p_out * S) / 1e6``.

``p_in`` and ``p_out`` are USD per million input and output tokens, ``B`` the input tokens sent
(the context budget) and ``S`` the output tokens. Prices come from the bundled ``prices.json``
(each entry dated and sourced; verify before use) and can be overridden or extended with a
JSON file of the same shape (``--prices FILE`` on the command line).

>>> price = get_price("openai:gpt-4o")
>>> price.input_per_mtok, price.output_per_mtok
(2.5, 10.0)
>>> round(call_cost(price, 512, 300), 6)
0.00428
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from budgetctx._core.validation import (
    Constraint,
    InstanceOf,
    Interval,
    NoneOr,
    Predicate,
    validate,
    validate_fields,
)
from budgetctx._errors import InvalidParameterError, UnknownComponentError

__all__ = [
    "CostEstimate",
    "CostReport",
    "Price",
    "call_cost",
    "cost_report",
    "get_price",
    "load_prices",
]

_PER = 1_000_000
_ENTRY_KEYS = frozenset({"input", "output", "date", "source", "note"})


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens for one model, with when and where from.

    >>> Price("m", 1.0, 4.0, "2026-11-22", "my contract").to_dict()["output_per_mtok"]
    4.0
    """

    model: str
    input_per_mtok: float
    output_per_mtok: float
    date: str
    source: str
    note: str = ""

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "model": InstanceOf(str, "a str", fix="the model name, e.g. 'gpt-4o'."),
        "input_per_mtok": Interval(float, 0, None, fix="USD per 1M input tokens, e.g. 2.5."),
        "output_per_mtok": Interval(float, 0, None, fix="USD per 1M output tokens, e.g. 10."),
        "date": InstanceOf(str, "a str", fix="'YYYY-MM-DD', or '' if unknown."),
        "source": InstanceOf(str, "a str", fix="where the price comes from."),
        "note": InstanceOf(str, "a str"),
    }

    def __post_init__(self) -> None:
        validate_fields(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _entry(model: str, raw: Any, *, default_source: str) -> Price:
    """One table entry; a ValueError names the problem, the caller names the file."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"the entry for {model!r} is a {type(raw).__name__}, not an object")
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        raise ValueError(
            f"the entry for {model!r} has unknown key(s) {unknown}; allowed: {sorted(_ENTRY_KEYS)}"
        )
    missing = [k for k in ("input", "output") if k not in raw]
    if missing:
        raise ValueError(f"the entry for {model!r} lacks {missing}")
    day = raw.get("date", "")
    if not isinstance(day, str) or (day and not _is_iso_date(day)):
        raise ValueError(f"the date of {model!r} must be 'YYYY-MM-DD'; got {day!r}")
    for key in ("source", "note"):
        if not isinstance(raw.get(key, ""), str):
            raise ValueError(f"the {key} of {model!r} must be a string")
    try:
        return Price(
            model=model,
            input_per_mtok=raw["input"],
            output_per_mtok=raw["output"],
            date=day,
            source=raw.get("source") or default_source,
            note=raw.get("note", ""),
        )
    except InvalidParameterError as exc:
        raise ValueError(str(exc).rstrip(".")) from exc


def _is_iso_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _table(data: Any, *, default_source: str) -> dict[str, Price]:
    if not isinstance(data, Mapping):
        raise ValueError(f"it holds a JSON {type(data).__name__}, not an object model -> price")
    out: dict[str, Price] = {}
    for model, raw in data.items():
        if str(model).startswith("_"):  # "_about" and other comments
            continue
        key = str(model).strip().lower()
        if not key:
            raise ValueError("a model name is empty")
        out[key] = _entry(key, raw, default_source=default_source)
    return out


@functools.cache
def _bundled() -> dict[str, Price]:
    text = (importlib.resources.files(__package__) / "prices.json").read_text("utf-8")
    return _table(json.loads(text), default_source="budgetctx")


_FORMAT_HINT = (
    'Write it as {"model-name": {"input": 2.5, "output": 10.0, "date": "YYYY-MM-DD", '
    '"source": "where the price is from"}} (USD per 1M tokens).'
)


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The bundled price table, with the entries of a JSON file at ``path`` added or replacing
    bundled ones (model names are case-insensitive; ``date``, ``source``, ``note`` optional).

    >>> sorted(load_prices())
    ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'gpt-4o-mini', 'local']
    """
    table = dict(_bundled())
    if path is None:
        return table
    p = Path(path).expanduser()
    where = repr(str(p))
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(
            f"Cannot read the price file {where} ({exc}). Check the path; {_FORMAT_HINT}",
            parameter="prices",
            value=str(p),
        ) from exc
    try:
        data = json.loads(text)
        table.update(_table(data, default_source=f"price file {p.name}"))
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(
            f"The price file {where} is not valid JSON ({exc.msg} at line {exc.lineno}). "
            f"{_FORMAT_HINT}",
            parameter="prices",
            value=str(p),
        ) from exc
    except ValueError as exc:
        raise InvalidParameterError(
            f"The price file {where} is malformed: {exc}. {_FORMAT_HINT}",
            parameter="prices",
            value=str(p),
        ) from exc
    return table


def get_price(model: str, *, prices: Mapping[str, Price] | None = None) -> Price:
    """The price of ``model``; a generator spec such as ``"openai:gpt-4o"`` is accepted, and
    any ``"local:..."`` model costs what the ``"local"`` entry says.

    >>> get_price("local:smollm2").input_per_mtok
    0.0
    """
    if not isinstance(model, str) or not model.strip():
        raise InvalidParameterError(
            f"The model must be a non-empty string such as 'gpt-4o'. Got {model!r} instead.",
            parameter="model",
            value=model,
        )
    table = {k.lower(): v for k, v in (load_prices() if prices is None else prices).items()}
    spec = model.strip().lower()
    backend, sep, name = spec.partition(":")
    candidates = [spec]
    if sep:
        candidates.append(name)
    if backend == "local":
        candidates.append("local")
    for key in candidates:
        if key in table:
            return table[key]
    err = UnknownComponentError("priced model", model, sorted(table))
    err.args = (
        f"{err.args[0]} Add it with --prices FILE (or load_prices(FILE)), a JSON file like "
        f'{{"{name or spec}": {{"input": 2.5, "output": 10.0, "date": "YYYY-MM-DD", '
        '"source": "..."}} in USD per 1M tokens.',
    )
    raise err


_PRICE = InstanceOf(Price, "a Price", fix="use get_price('gpt-4o').")
_TOKENS = Interval(float, 0, None, fix="a token count (a mean may be fractional).")
_COUNT = Interval(int, 0, None)


def call_cost(price: Price, input_tokens: float, output_tokens: float) -> float:
    """USD for one call, Eq. 1: ``(p_in * input_tokens + p_out * output_tokens) / 1e6``.

    Token counts may be means (floats), as in :func:`cost_report`.
    """
    validate(
        "call_cost",
        {"price": _PRICE, "input_tokens": _TOKENS, "output_tokens": _TOKENS},
        {"price": price, "input_tokens": input_tokens, "output_tokens": output_tokens},
    )
    return (price.input_per_mtok * input_tokens + price.output_per_mtok * output_tokens) / _PER


@dataclass(frozen=True)
class CostEstimate:
    """Cost of one scenario: input tokens per call (a mean when over documents), USD per call
    and per year."""

    label: str
    input_tokens: float
    output_tokens: int
    per_call: float
    per_year: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CostReport:
    """Cost at a budget against sending the full document, per call and per year.

    The ``full_*`` estimates and the savings are None when no document lengths were given.
    Output tokens are the same in every scenario: the summary length does not depend on how
    much context was sent (an assumption of Eq. 1's use here).
    """

    price: Price
    budget: int
    output_tokens: int
    calls_per_year: int
    overhead_tokens: int
    n_documents: int
    n_over_budget: int
    at_budget: CostEstimate
    full_mean: CostEstimate | None = None
    full_median: CostEstimate | None = None
    full_p90: CostEstimate | None = None
    savings_per_call: float | None = None
    savings_per_year: float | None = None
    savings_pct: float | None = None

    def rows(self) -> list[tuple[str, float, float]]:
        """``(label, USD per call, USD per year)`` for printing, savings last."""
        out = [
            (e.label, e.per_call, e.per_year)
            for e in (self.at_budget, self.full_mean, self.full_median, self.full_p90)
            if e is not None
        ]
        if self.savings_per_call is not None and self.savings_per_year is not None:
            out.append(("savings vs full (mean)", self.savings_per_call, self.savings_per_year))
        return out

    def to_dict(self) -> dict[str, Any]:
        def est(e: CostEstimate | None) -> dict[str, Any] | None:
            return None if e is None else e.to_dict()

        return {
            "model": self.price.model,
            "price": self.price.to_dict(),
            "budget": self.budget,
            "output_tokens": self.output_tokens,
            "calls_per_year": self.calls_per_year,
            "overhead_tokens": self.overhead_tokens,
            "n_documents": self.n_documents,
            "n_over_budget": self.n_over_budget,
            "at_budget": est(self.at_budget),
            "full_mean": est(self.full_mean),
            "full_median": est(self.full_median),
            "full_p90": est(self.full_p90),
            "savings_per_call": self.savings_per_call,
            "savings_per_year": self.savings_per_year,
            "savings_pct": self.savings_pct,
            "rows": [list(r) for r in self.rows()],
        }


def _token_counts(value: Any) -> bool:
    if isinstance(value, str | bytes) or len(value) == 0:
        return False
    return all(
        not isinstance(d, bool) and isinstance(d, int | np.integer) and d >= 0 for d in value
    )


def cost_report(
    *,
    price: Price,
    budget: int,
    output_tokens: int,
    calls_per_year: int,
    document_tokens: Sequence[int] | None = None,
    overhead_tokens: int = 0,
) -> CostReport:
    """Cost per call and per year at ``budget`` and, given the documents' token counts, with
    the full documents (mean, median and 90th percentile length) and the savings.

    With ``document_tokens`` a document shorter than the budget is sent whole, so the input
    at the budget is the mean of ``min(budget, d)``; without it, the input is ``budget``.
    ``overhead_tokens`` (the prompt template's own tokens) is added to every call's input.

    >>> r = cost_report(price=get_price("gpt-4o"), budget=512, output_tokens=300,
    ...                 calls_per_year=10_000)
    >>> round(r.at_budget.per_call, 6), round(r.at_budget.per_year, 2)
    (0.00428, 42.8)
    """
    validate(
        "cost_report",
        {
            "price": _PRICE,
            "budget": Interval(int, 1, None, fix="tokens per context, e.g. 512."),
            "output_tokens": _COUNT,
            "calls_per_year": _COUNT,
            "overhead_tokens": _COUNT,
            "document_tokens": NoneOr(
                Predicate(
                    _token_counts,
                    "a non-empty sequence of ints >= 0",
                    fix="one token count per document; pass None to cost the budget alone.",
                )
            ),
        },
        {
            "price": price,
            "budget": budget,
            "output_tokens": output_tokens,
            "calls_per_year": calls_per_year,
            "overhead_tokens": overhead_tokens,
            "document_tokens": document_tokens,
        },
    )

    def estimate(label: str, input_tokens: float) -> CostEstimate:
        per_call = call_cost(price, input_tokens + overhead_tokens, output_tokens)
        return CostEstimate(
            label=label,
            input_tokens=float(input_tokens + overhead_tokens),
            output_tokens=output_tokens,
            per_call=per_call,
            per_year=per_call * calls_per_year,
        )

    if document_tokens is None:
        return CostReport(
            price=price,
            budget=budget,
            output_tokens=output_tokens,
            calls_per_year=calls_per_year,
            overhead_tokens=overhead_tokens,
            n_documents=0,
            n_over_budget=0,
            at_budget=estimate(f"budget {budget}", budget),
        )

    docs = np.asarray(document_tokens, dtype=np.float64)
    sent = np.minimum(docs, budget)
    at_budget = estimate(f"budget {budget} (mean over documents)", float(sent.mean()))
    full_mean = estimate("full context (mean)", float(docs.mean()))
    full_median = estimate("full context (median)", float(statistics.median(docs.tolist())))
    full_p90 = estimate("full context (p90)", float(np.percentile(docs, 90)))
    savings = full_mean.per_call - at_budget.per_call
    return CostReport(
        price=price,
        budget=budget,
        output_tokens=output_tokens,
        calls_per_year=calls_per_year,
        overhead_tokens=overhead_tokens,
        n_documents=len(docs),
        n_over_budget=int((docs > budget).sum()),
        at_budget=at_budget,
        full_mean=full_mean,
        full_median=full_median,
        full_p90=full_p90,
        savings_per_call=savings,
        savings_per_year=savings * calls_per_year,
        savings_pct=100.0 * savings / full_mean.per_call if full_mean.per_call > 0 else 0.0,
    )
