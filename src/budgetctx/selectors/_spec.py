"""The selector-spec grammar, in one place: ``name[:key=value[,key=value...]]``.

A list of specs is written with commas too (``"lead,rcd:alpha=0.5,beta=0.3,mmr"``): a comma
followed by ``key=value`` continues the previous spec's options, anything else starts a new
spec. Values follow :func:`parse_option_value`, the one value rule of every ``key=value``
option (the CLI's ``--gen-option`` too).

>>> split_selector_specs("lead,rcd:alpha=0.5,beta=0.3,mmr")
['lead', 'rcd:alpha=0.5,beta=0.3', 'mmr']
>>> parse_selector_spec("rcd:alpha=0.5,beta=0.3")
('rcd', {'alpha': 0.5, 'beta': 0.3})
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from budgetctx._errors import InvalidParameterError

__all__ = [
    "parse_option_value",
    "parse_options",
    "parse_selector_spec",
    "parse_selector_specs",
    "split_selector_specs",
]


def parse_option_value(raw: str) -> Any:
    """The one value rule of ``key=value`` options (selector specs, ``--gen-option``):
    ``true``/``false``/``null``, then an int, then a float, then a JSON list, object or
    quoted string; anything else stays the text as given.

    >>> [parse_option_value(v) for v in ("0.5", "3", "true", "null", "[1, 2]", "http://x")]
    [0.5, 3, True, None, [1, 2], 'http://x']
    """
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "null":
        return None
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            continue
    if raw[:1] in ("[", "{", '"'):
        try:
            return json.loads(raw)
        except ValueError:
            pass
    return raw


def parse_options(
    items: Iterable[str], *, where: str = "", fix: str, parameter: str
) -> dict[str, Any]:
    """``key=value`` items as options, each value read by :func:`parse_option_value`: the one
    parser of options, for selector specs and the CLI's ``--gen-option`` alike.

    >>> parse_options(["lambda_=0.5", "seed=3"], fix="e.g. lambda_=0.5.", parameter="options")
    {'lambda_': 0.5, 'seed': 3}
    """
    options: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise InvalidParameterError(
                f"Bad option {item!r}{where}: options are key=value; {fix}",
                parameter=parameter,
                value=item,
            )
        options[key.strip()] = parse_option_value(raw.strip())
    return options


def parse_selector_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"rcd:alpha=0.6,gamma=0.1"`` -> ``("rcd", {"alpha": 0.6, "gamma": 0.1})``.

    >>> parse_selector_spec("mmr:lambda_=0.5")
    ('mmr', {'lambda_': 0.5})
    """
    if not isinstance(spec, str):
        raise InvalidParameterError(
            f"A selector spec must be a str such as 'rcd:alpha=0.6', got {type(spec).__name__}; "
            "pass the spec as text.",
            parameter="selectors",
            value=repr(spec)[:80],
        )
    name, _, rest = spec.partition(":")
    options = parse_options(
        filter(None, (p.strip() for p in rest.split(","))),
        where=f" in {spec!r}",
        fix="write name:key=value,key=value.",
        parameter="selectors",
    )
    if not name.strip():
        raise InvalidParameterError(
            f"The selector spec {spec!r} has no name; write name or name:key=value, e.g. 'rcd'.",
            parameter="selectors",
            value=spec,
        )
    return name.strip().lower(), options


def split_selector_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs; options stay with their selector.

    >>> split_selector_specs(" lead, mmr:lambda_=0.2 ,sliding")
    ['lead', 'mmr:lambda_=0.2', 'sliding']
    """
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if specs and "=" in part and ":" not in part and ":" in specs[-1]:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def parse_selector_specs(text: str) -> list[tuple[str, dict[str, Any]]]:
    """:func:`split_selector_specs`, then :func:`parse_selector_spec` on each.

    >>> parse_selector_specs("lead,rcd:alpha=0.5,beta=0.3")
    [('lead', {}), ('rcd', {'alpha': 0.5, 'beta': 0.3})]
    """
    return [parse_selector_spec(spec) for spec in split_selector_specs(text)]
