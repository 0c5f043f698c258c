"""End-to-end (LLM) sweeps with a counting fake generator: rows, full-context baseline,
cache (a repeated sweep makes zero calls), resume after failures, classification, reports."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from budgetctx import ContextLengthError, GenerationError, InvalidParameterError
from budgetctx.eval import FULL, GenerationConfig, SweepConfig, SweepStore, run_sweep
from budgetctx.eval.report import write_report
from budgetctx.generate import Generation, Message, Usage, register_generator

SENTINEL = "zqxsentinelword"


class FakeGenerator:
    """Replies with the first words of the context; counts every prompt it is sent."""

    calls: ClassVar[list[list[Message]]] = []  # shared across instances: what reached "the model"
    fail_marker: ClassVar[str | None] = None
    max_words: ClassVar[int | None] = None  # a context window, in words

    def __init__(self, model: str = "fake", *, temperature: float = 0.0, max_tokens: int = 64):
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        return f"fake:{self.model}"

    def params(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}

    def generate(self, messages: Sequence[Message]) -> Generation:
        FakeGenerator.calls.append(list(messages))
        text = messages[-1].content
        if FakeGenerator.max_words is not None and len(text.split()) > FakeGenerator.max_words:
            raise ContextLengthError("request abc123: prompt of 600 tokens does not fit 500")
        if FakeGenerator.fail_marker and FakeGenerator.fail_marker in text:
            raise GenerationError("request abc123 to fake failed: HTTP 500", status=500)
        if "Question:" in text or "question" in text.lower():
            # a label for even-length prompts, a non-answer otherwise
            reply = "Answer: yes" if len(text) % 2 == 0 else "I cannot tell."
        else:
            reply = " ".join(text.split()[-40:])
        words = len(text.split())
        return Generation(reply, Usage(words, len(reply.split())), 1.0, self.model)

    def generate_batch(self, prompts: Sequence[Sequence[Message]]) -> list[Generation]:
        return [self.generate(p) for p in prompts]


with contextlib.suppress(InvalidParameterError):  # registered already (imported twice)
    register_generator("fake", lambda **kw: FakeGenerator(**kw))


@pytest.fixture(autouse=True)
def _reset() -> None:
    FakeGenerator.calls = []
    FakeGenerator.fail_marker = None
    FakeGenerator.max_words = None


def _jsonl(tmp_path: Path, n: int = 3, *, labels: bool = False) -> Path:
    path = tmp_path / "data.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            doc = " ".join(
                f"Patient {i} sentence {k} about heart failure and diuresis number {k}."
                for k in range(40)
            )
            rec = {
                "id": f"ex{i}",
                "text": doc,
                "summary": f"Heart failure treated with diuresis {SENTINEL}.",
                "question": "Does diuresis help heart failure?",
                "label": ["yes", "no", "maybe"][i % 3],
            }
            fh.write(json.dumps(rec) + "\n")
    return path


def _config(path: Path, *, labels: bool = False, **gen: Any) -> SweepConfig:
    spec = f"jsonl:{path}?document=text&reference=summary&id=id"
    if labels:
        spec += "&query=question&label=label"
    return SweepConfig(
        datasets=(spec,),
        budgets=(64, 128),
        selectors=("lead", "mmr"),
        oracle=False,
        workers=1,
        generation=GenerationConfig("fake:m1", bertscore=False, **gen),
    )


def test_llm_rows_full_baseline_and_metrics(tmp_path: Path) -> None:
    summary = run_sweep(_config(_jsonl(tmp_path)), tmp_path / "run", progress=False)
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    # 3 examples x (2 selectors x 2 budgets + the full context)
    assert len(rows) == 15 == summary.rows_written
    # identical prompts (two policies choosing the same context) are sent once
    assert summary.generator_calls == len(FakeGenerator.calls) > 3
    assert summary.generator_calls + summary.cache_hits == 15
    full = [r for r in rows if r.selector == FULL]
    assert len(full) == 3
    for r in full:
        assert r.budget == 0 and r.unitizer == "none"
        assert r.context_tokens == r.document_tokens
    for r in rows:
        assert r.generation is not None
        assert r.generation["prompt"] == "report-summary@v1" or "@v" in r.generation["prompt"]
        assert {"rouge1", "rouge2", "ctx_rouge1", "token_f1"} <= set(r.metrics)
        assert r.generation["usage"]["input_tokens"] > 0
        assert r.generation["prompt_tokens"] > 0
    # the generated text, not the context, is what the row scores
    r = next(r for r in rows if r.selector == "lead" and r.budget == 64)
    assert r.metrics["rouge1"] != r.metrics["ctx_rouge1"] or r.generation["text"]
    # each prompt carries its context and never the reference
    for messages in FakeGenerator.calls:
        assert SENTINEL not in " ".join(m.content for m in messages)


def test_second_identical_sweep_makes_zero_calls(tmp_path: Path) -> None:
    path = _jsonl(tmp_path)
    cache = tmp_path / "responses.sqlite"
    first = run_sweep(_config(path, cache=str(cache)), tmp_path / "a", progress=False)
    n_calls = len(FakeGenerator.calls)
    assert n_calls == first.generator_calls > 0
    second = run_sweep(_config(path, cache=str(cache)), tmp_path / "b", progress=False)
    assert len(FakeGenerator.calls) == n_calls  # not one more prompt reached the model
    assert second.generator_calls == 0 and second.cache_hits == 15
    with SweepStore(tmp_path / "a") as a, SweepStore(tmp_path / "b") as b:
        ra, rb = list(a.rows()), list(b.rows())
    assert [r.metrics for r in ra] == [r.metrics for r in rb]
    assert all(r.generation and r.generation["cached"] for r in rb)


def test_failed_requests_are_not_written_and_resume_retries_them(tmp_path: Path) -> None:
    path = _jsonl(tmp_path)
    FakeGenerator.fail_marker = "Patient 1 "
    summary = run_sweep(_config(path), tmp_path / "run", progress=False)
    assert summary.failures and "HTTP 500" in summary.failures[0]
    with SweepStore(tmp_path / "run") as store:
        ids = {r.example_id for r in store.rows()}
    assert ids == {"ex0", "ex2"}
    FakeGenerator.fail_marker = None
    FakeGenerator.max_words = None
    before = len(FakeGenerator.calls)
    again = run_sweep(_config(path), tmp_path / "run", progress=False)
    assert again.failures == () and again.rows_written == 5
    # only example 1's prompts are new; the others come from the cache or the store
    assert 0 < len(FakeGenerator.calls) - before <= 5
    assert all("Patient 1 " in m[-1].content for m in FakeGenerator.calls[before:])
    with SweepStore(tmp_path / "run") as store:
        assert len(list(store.rows())) == 15


def test_classification_rows_and_report(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, n=6)
    run_sweep(_config(path, labels=True, prompt="pubmedqa"), tmp_path / "run", progress=False)
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    assert len(rows) == 6 * 5
    for r in rows:
        assert r.generation is not None
        assert set(r.metrics) >= {"correct", "parsed"}
        assert r.generation["label"] in ("yes", None)  # "I cannot tell." is never mapped
        assert r.metrics["correct"] == float(r.generation["label"] == r.generation["gold"])
    # every classify prompt carries the question
    assert all("Does diuresis help heart failure?" in m[-1].content for m in FakeGenerator.calls)
    files = write_report(tmp_path / "run")
    table = (files.report.parent / "classification.md").read_text()
    assert "macro-F1" in table and "unparseable" in table and "full context" in table


def test_report_has_full_context_comparison_and_repricing(tmp_path: Path) -> None:
    run_sweep(_config(_jsonl(tmp_path)), tmp_path / "run", progress=False)
    files = write_report(tmp_path / "run", price_model="gpt-4o")
    out = files.report.parent
    text = (out / "full_context.md").read_text()
    assert "full context" in text and "Δ rouge1 vs full" in text
    priced = (out / "full_context_gpt-4o.csv").read_text().splitlines()
    header = priced[0].split(",")
    cost_col = header.index("USD per 1k calls")
    saved_col = header.index("cost saved %")
    body = [line.split(",") for line in priced[1:]]
    full_cost = float(body[0][cost_col])
    assert body[0][3] == FULL and full_cost > 0
    for line in body[1:]:
        # a budgeted context is cheaper than the whole document
        assert float(line[cost_col]) < full_cost and float(line[saved_col]) > 0
    assert "Generation:" in files.report.read_text()
    # the budget-0 baseline is not a column of the selector tables
    assert "| 0 " not in (out / "selectors_rouge1.md").read_text()


def test_oracle_is_refused_with_generation(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="oracle"):
        SweepConfig(datasets=("cochrane",), oracle=True, generation=GenerationConfig("fake:m1"))


def test_changed_generation_settings_are_refused_on_resume(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, n=1)
    run_sweep(_config(path), tmp_path / "run", progress=False)
    with pytest.raises(InvalidParameterError):
        run_sweep(_config(path, temperature=0.7), tmp_path / "run", progress=False)


def test_unitization_table_of_generated_scores(tmp_path: Path) -> None:
    path = _jsonl(tmp_path)
    base = _config(path)
    config = SweepConfig(
        datasets=base.datasets,
        budgets=base.budgets,
        selectors=base.selectors,
        unitizers=("sentence", "window"),
        oracle=False,
        workers=2,
        generation=base.generation,
    )
    run_sweep(config, tmp_path / "run", progress=False)
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    # one full-context row per example, whatever the number of unitizers
    assert sum(r.selector == FULL for r in rows) == 3
    assert len(rows) == 3 * (2 * 2 * 2 + 1)
    files = write_report(tmp_path / "run")
    table = (files.report.parent / "unitizers_rouge1.csv").read_text().splitlines()
    assert table[0].startswith("dataset,unitizer,selector")
    units = {line.split(",")[1] for line in table[1:]}
    assert units == {"sentence", "window"}  # the baseline is not a unitization


def test_prompts_longer_than_the_window_are_rows_with_a_reason(tmp_path: Path) -> None:
    # the full documents (~520 words) do not fit; the budgeted contexts do
    FakeGenerator.max_words = 300
    summary = run_sweep(_config(_jsonl(tmp_path)), tmp_path / "run", progress=False)
    assert summary.failures == ()  # not a failure: retrying cannot help
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    assert len(rows) == 15
    full = [r for r in rows if r.selector == FULL]
    assert len(full) == 3
    for r in full:
        assert r.reason == "prompt longer than the model's context window"
        assert r.generation is not None and r.generation["error"] == "context_length"
        assert "rouge1" not in r.metrics and "ctx_rouge1" in r.metrics
    assert all("rouge1" in r.metrics for r in rows if r.selector != FULL)
    # resuming does not ask again
    before = len(FakeGenerator.calls)
    again = run_sweep(_config(_jsonl(tmp_path)), tmp_path / "run", progress=False)
    assert again.rows_written == 0 and len(FakeGenerator.calls) == before
    files = write_report(tmp_path / "run")
    assert "3 prompts were longer than the model's context window" in files.report.read_text()


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"temperature": 2.5}, "temperature"),
        ({"prompt": "no-such-prompt"}, "prompt"),
    ],
)
def test_generation_config_rejects_bad_values(options: dict[str, Any], parameter: str) -> None:
    # InvalidParameterError for a bad value, UnknownComponentError (a KeyError) for a name
    with pytest.raises((InvalidParameterError, KeyError)) as info:
        GenerationConfig("local", **options)
    assert getattr(info.value, "parameter", None) == parameter


def test_generation_config_to_dict_is_json() -> None:
    config = GenerationConfig("openai:gpt-4o", options={"concurrency": 4}, max_tokens=99)
    data = json.loads(json.dumps(config.to_dict()))
    assert data["generator"] == "openai:gpt-4o" and data["options"] == {"concurrency": 4}
    assert data["max_tokens"] == 99


def test_rows_of_a_priced_model_carry_eq1_cost(tmp_path: Path) -> None:
    base = _config(_jsonl(tmp_path, n=1))
    assert base.generation is not None
    config = SweepConfig(
        datasets=base.datasets,
        budgets=base.budgets,
        selectors=base.selectors,
        oracle=False,
        workers=1,
        generation=GenerationConfig("fake:gpt-4o", bertscore=False),  # replies as "gpt-4o"
    )
    run_sweep(config, tmp_path / "run", progress=False)
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    for r in rows:
        assert r.generation is not None and r.generation["price_model"] == "gpt-4o"
        usage = r.generation["usage"]
        expected = (2.5 * usage["input_tokens"] + 10.0 * usage["output_tokens"]) / 1e6
        assert r.generation["cost_usd"] == pytest.approx(expected, abs=1e-8)
