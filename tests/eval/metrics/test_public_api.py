"""The public surface of budgetctx.eval.metrics is pinned."""

from __future__ import annotations

import budgetctx.eval.metrics as metrics


def test_all_is_pinned() -> None:
    assert sorted(metrics.__all__) == sorted(
        [
            "DEFAULT_BERTSCORE_MODEL",
            "PRF",
            "PUBMEDQA_CLASSES",
            "BERTScore",
            "BERTScoreBaseline",
            "ClassificationReport",
            "ConfidenceInterval",
            "PairedBootstrap",
            "Rouge",
            "RougeScores",
            "bootstrap_ci",
            "classification_report",
            "lcs_length",
            "macro_f1",
            "normalize_answer",
            "paired_bootstrap",
            "paper_overlap",
            "token_f1",
        ]
    )
    for name in metrics.__all__:
        assert getattr(metrics, name) is not None


def test_importing_metrics_loads_no_heavy_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, budgetctx.eval.metrics as m; m.token_f1('a', 'b'); "
        "print(sorted(k for k in ('torch', 'bert_score', 'transformers', 'rouge_score') "
        "if k in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
