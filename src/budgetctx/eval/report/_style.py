"""Names, order, colours and markers of selectors and unitizers, shared by every table and
figure so that a selector looks the same everywhere in a report."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ORACLE",
    "default_unitizer",
    "metric_name",
    "selector_colors",
    "selector_markers",
    "selector_name",
    "selector_sort_key",
    "unitizer_name",
    "unitizer_sort_key",
]

#: The sweep's label for the extractive oracle (``budgetctx.eval._sweep.ORACLE``); repeated
#: here so that formatting a report never imports the sweep (and the selectors behind it).
ORACLE = "oracle"

# The paper's order (Table A1), then the selectors it does not tabulate.
_SELECTORS: dict[str, tuple[str, str]] = {
    "lead": ("Lead", "#1f77b4"),
    "shuffled": ("Shuffled", "#8c564b"),
    "sliding": ("Sliding", "#2ca02c"),
    "hierarchical": ("Hierarchical", "#9467bd"),
    "mmr": ("MMR", "#ff7f0e"),
    "rcd": ("RCD", "#d62728"),
    "graphcluster": ("GraphCluster", "#bcbd22"),
    "facility": ("Facility", "#17becf"),
}
# For labels not above (new selectors, option variants): distinct from the fixed colours and
# from the oracle's black.
_EXTRA_COLORS = (
    "#e377c2",
    "#7f7f7f",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
    "#e6550d",
    "#31a354",
    "#756bb1",
    "#636363",
)
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")

_UNITIZERS = {
    "sentence": "Sentence",
    "section": "Section",
    "window": "Window",
    "cluster": "Cluster",
}

_METRICS = {
    "rouge1": "ROUGE-1 F1",
    "rouge2": "ROUGE-2 F1",
    "rougeL": "ROUGE-L F1",
    "rouge1_p": "ROUGE-1 precision",
    "rouge1_r": "ROUGE-1 recall",
    "rouge2_p": "ROUGE-2 precision",
    "rouge2_r": "ROUGE-2 recall",
    "token_f1": "token F1",
    "overlap1_f": "unigram overlap F1",
    "overlap2_f": "bigram overlap F1",
    "bertscore_f": "BERTScore F1",
    "correct": "accuracy",
    "ctx_rouge1": "context ROUGE-1 F1",
    "ctx_rouge2": "context ROUGE-2 F1",
}


def _base(label: str) -> tuple[str, str]:
    base, _, options = label.partition(":")
    return base, options


def selector_name(label: str) -> str:
    """How a selector label is shown in tables and legends.

    >>> selector_name("mmr"), selector_name("rcd:alpha=0.6"), selector_name("oracle")
    ('MMR', 'RCD (alpha=0.6)', 'Oracle')
    """
    if label == ORACLE:
        return "Oracle"
    base, options = _base(label)
    name = _SELECTORS[base][0] if base in _SELECTORS else base
    return f"{name} ({options})" if options else name


def selector_sort_key(label: str) -> tuple[int, int, str]:
    """The paper's order, unknown selectors after it by name, the oracle last."""
    if label == ORACLE:
        return (2, 0, label)
    base, _ = _base(label)
    order = list(_SELECTORS)
    return (0, order.index(base), label) if base in _SELECTORS else (1, 0, label)


def unitizer_name(label: str) -> str:
    """How a unitizer label is shown.

    >>> unitizer_name("window")
    'Window'
    """
    return _UNITIZERS.get(label, label)


def unitizer_sort_key(label: str) -> tuple[int, str]:
    order = list(_UNITIZERS)
    return (order.index(label), label) if label in _UNITIZERS else (len(order), label)


def default_unitizer(labels: Iterable[str]) -> str | None:
    """The unitization a one-unitizer table or figure shows: ``sentence`` when present (the
    paper's), else the first in order; None when there is none.

    >>> default_unitizer(["window", "cluster"])
    'window'
    """
    units = sorted(set(labels), key=unitizer_sort_key)
    if not units:
        return None
    return "sentence" if "sentence" in units else units[0]


def metric_name(metric: str) -> str:
    """How a metric key is shown on axes and in titles.

    >>> metric_name("rouge1")
    'ROUGE-1 F1'
    """
    return _METRICS.get(metric, metric)


def selector_colors(labels: Iterable[str]) -> dict[str, str]:
    """A colour per selector label, stable for the known selectors; pass every label of a
    report at once so that its figures agree.

    >>> selector_colors(["mmr", "lead", "rcd:alpha=0.6", "oracle"])
    {'lead': '#1f77b4', 'mmr': '#ff7f0e', 'rcd:alpha=0.6': '#d62728', 'oracle': 'black'}
    """
    ordered = sorted(set(labels), key=selector_sort_key)
    out: dict[str, str] = {}
    for label in ordered:
        if label == ORACLE:
            out[label] = "black"
        elif label in _SELECTORS:
            out[label] = _SELECTORS[label][1]
    used = set(out.values())
    for i, label in enumerate(x for x in ordered if x not in out):
        base, _ = _base(label)
        spare = [c for c in _EXTRA_COLORS if c not in used]
        # An option variant keeps its selector's colour unless the plain selector is shown too.
        if base in _SELECTORS and _SELECTORS[base][1] not in used:
            out[label] = _SELECTORS[base][1]
        else:
            # More labels than colours: reuse (the markers still tell them apart).
            out[label] = spare[0] if spare else _EXTRA_COLORS[i % len(_EXTRA_COLORS)]
        used.add(out[label])
    return {label: out[label] for label in ordered}


def selector_markers(labels: Iterable[str]) -> dict[str, str]:
    """A marker per selector, so that lines stay apart in grey print and for colour-blind
    readers.

    >>> selector_markers(["mmr", "lead"])
    {'lead': 'o', 'mmr': 'v'}
    """
    ordered = sorted(set(labels), key=selector_sort_key)
    known = list(_SELECTORS)
    out: dict[str, str] = {}
    extra = 0
    for label in ordered:
        base, _ = _base(label)
        if base in _SELECTORS and label == base:
            out[label] = _MARKERS[known.index(base) % len(_MARKERS)]
        else:
            out[label] = _MARKERS[(len(known) + extra) % len(_MARKERS)]
            extra += 1
    return out
