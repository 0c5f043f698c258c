"""The CLI's LLM commands end to end: an LLM sweep against an OpenAI-compatible server on
loopback, its resume from the response cache, the report's cost tables, ``budgetctx cost``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from budgetctx.cli import app
from budgetctx.eval import SweepStore
from tests.generate._chat_server import ChatServer, Fault

runner = CliRunner()


def _jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "notes.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(2):
            doc = " ".join(
                f"Day {k}: patient {i} received furosemide {10 * k} mg and walked {k} laps."
                for k in range(30)
            )
            rec = {"id": f"n{i}", "text": doc, "summary": "Diuresed with furosemide."}
            fh.write(json.dumps(rec) + "\n")
    return path


def _sweep_args(data: Path, server: ChatServer, out: Path, *extra: str) -> list[str]:
    """An LLM sweep of ``data`` against the loopback server, without BERTScore."""
    return [
        "sweep",
        "-d",
        f"jsonl:{data}?document=text&reference=summary&id=id",
        "--generate",
        "openai:test-model",
        "--gen-option",
        f"base_url={server.url}",
        "--no-bertscore",
        "--workers",
        "1",
        "--out",
        str(out),
        *extra,
    ]


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


def test_llm_sweep_resume_and_report(tmp_path: Path) -> None:
    data = _jsonl(tmp_path)
    run = tmp_path / "run"
    with ChatServer() as server:
        args = _sweep_args(
            data, server, run, "--budgets", "64,128", "--selectors", "lead,mmr",
            "--gen-option", "concurrency=2",
        )  # fmt: skip
        first = runner.invoke(app, args)
        assert first.exit_code == 0, first.output
        sent = len(server.requests)
        assert sent > 0
        assert f"{sent} prompts sent to openai:test-model" in first.output
        # the same command again: everything is in the store, nothing is sent
        again = runner.invoke(app, args)
        assert again.exit_code == 0, again.output
        assert len(server.requests) == sent
        # a new run folder with the first run's cache: answered from the cache alone
        args[args.index(str(run))] = str(tmp_path / "run2")
        third = runner.invoke(app, [*args, "--cache", str(run / "responses.sqlite")])
        assert third.exit_code == 0, third.output
        assert len(server.requests) == sent
        assert "0 prompts sent" in third.output
        body = server.requests[0].body
        assert body["model"] == "test-model" and body["temperature"] == 0.0
        assert body["max_tokens"] == 200
    with SweepStore(run) as store:
        rows = list(store.rows())
    assert len(rows) == 2 * (2 * 2 + 1)
    assert all(r.generation and r.generation["text"].startswith("echo: ") for r in rows)

    rep = runner.invoke(app, ["report", str(run), "--price-model", "gpt-4o"])
    assert rep.exit_code == 0, rep.output
    out = run / "report"
    assert (out / "full_context.md").is_file() and (out / "full_context_gpt-4o.md").is_file()
    assert "priced as gpt-4o" in (out / "full_context_gpt-4o.md").read_text()


def test_failed_requests_exit_1_and_resume(tmp_path: Path) -> None:
    data = _jsonl(tmp_path)
    with ChatServer() as server:
        args = _sweep_args(
            data, server, tmp_path / "run", "--budgets", "64", "--selectors", "lead",
            "--gen-option", "max_retries=0", "--gen-option", "concurrency=1",
        )  # fmt: skip
        # the batch fails on its first request, and that request fails again on its own
        server.push(Fault.error(400, "bad request"), Fault.error(400, "bad request"))
        result = runner.invoke(app, args)
        assert result.exit_code == 1
        assert "generation failed" in result.output and "400" in result.output
        assert "furosemide" not in result.output  # no prompt text in errors
        ok = runner.invoke(app, args)
        assert ok.exit_code == 0, ok.output
    with SweepStore(tmp_path / "run") as store:
        assert len(list(store.rows())) == 4


def test_cost_command_matches_eq1() -> None:
    result = runner.invoke(
        app,
        [
            "cost",
            "--budget",
            "512",
            "--output-tokens",
            "300",
            "--calls-per-year",
            "10000",
            "--model",
            "gpt-4o",
        ],
    )
    assert result.exit_code == 0, result.output
    # (2.50 * 512 + 10.00 * 300) / 1e6 = 0.00428 per call; x 10,000 = 42.80 per year
    assert "$0.00428" in result.output and "$42.80" in result.output


def test_cost_command_with_a_dataset_and_json(shared_data: Path) -> None:
    result = runner.invoke(
        app,
        ["cost", "--budget", "256", "-d", "mtsamples", "--data-dir", str(shared_data), "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["n_documents"] > 50 and data["n_over_budget"] > 0
    assert 0 < data["savings_pct"] < 100
    assert data["at_budget"]["input_tokens"] <= 256
    assert data["full_mean"]["input_tokens"] > data["at_budget"]["input_tokens"]


def test_cost_command_unknown_model_says_how_to_add_it() -> None:
    result = runner.invoke(app, ["cost", "--budget", "512", "--model", "nope-1"])
    assert result.exit_code == 2
    assert "nope-1" in result.output and "--prices" in result.output
