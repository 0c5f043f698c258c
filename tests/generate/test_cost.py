from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest

from budgetctx._errors import InvalidParameterError, UnknownComponentError
from budgetctx.generate._cost import (
    CostReport,
    Price,
    call_cost,
    cost_report,
    get_price,
    load_prices,
)

GPT4O = Price("gpt-4o", 2.5, 10.0, "2026-11-22", "test")


def test_bundled_table_is_package_data_and_complete() -> None:
    resource = importlib.resources.files("budgetctx.generate") / "prices.json"
    assert resource.is_file()
    raw = json.loads(resource.read_text("utf-8"))
    assert "Eq. 1" in raw["_about"]
    prices = load_prices()
    assert set(prices) == {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "local"}
    for name, price in prices.items():
        assert price.model == name
        assert len(price.date) == 10 and price.source
        if name != "local":
            assert price.source.startswith("https://") and "verify before use" in price.note


@pytest.mark.parametrize(
    ("model", "p_in", "p_out"),
    [
        ("gpt-4o", 2.5, 10.0),
        ("gpt-4o-mini", 0.15, 0.6),
        ("gpt-4.1", 2.0, 8.0),
        ("gpt-4.1-mini", 0.4, 1.6),
        ("local", 0.0, 0.0),
    ],
)
def test_bundled_prices(model: str, p_in: float, p_out: float) -> None:
    price = get_price(model)
    assert (price.input_per_mtok, price.output_per_mtok) == (p_in, p_out)


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:gpt-4o", "GPT-4o", " openai:GPT-4O "])
def test_get_price_accepts_generator_specs(spec: str) -> None:
    assert get_price(spec).model == "gpt-4o"


def test_local_models_cost_nothing() -> None:
    assert get_price("local").input_per_mtok == 0.0
    assert get_price("local:smollm2-135m").model == "local"


def test_unknown_model_lists_models_and_says_how_to_add() -> None:
    with pytest.raises(UnknownComponentError) as info:
        get_price("openai:gpt-9")
    message = str(info.value)
    assert message.startswith("Unknown priced model 'openai:gpt-9'.")
    assert "'gpt-4o'" in message and "'local'" in message
    assert "--prices FILE" in message
    assert '"gpt-9": {"input"' in message
    assert isinstance(info.value, KeyError)


def test_unknown_model_in_given_table() -> None:
    with pytest.raises(UnknownComponentError, match="'a'"):
        get_price("gpt-4o", prices={"a": Price("a", 1, 1, "", "x")})


def test_call_cost_eq1_hand_computed() -> None:
    # (2.5 * 512 + 10 * 300) / 1e6
    assert call_cost(GPT4O, 512, 300) == pytest.approx(0.00428, rel=1e-12)
    # (0.15 * 1024 + 0.6 * 200) / 1e6 = (153.6 + 120) / 1e6
    assert call_cost(get_price("gpt-4o-mini"), 1024, 200) == pytest.approx(0.0002736)
    assert call_cost(GPT4O, 0, 0) == 0.0
    assert call_cost(get_price("local"), 10_000, 10_000) == 0.0


@pytest.mark.parametrize(("b", "s"), [(-1, 0), (0, -5), (True, 0), ("5", 0), (float("nan"), 0)])
def test_call_cost_rejects_bad_counts(b: object, s: object) -> None:
    with pytest.raises(InvalidParameterError, match="parameter of call_cost must be a float >= 0"):
        call_cost(GPT4O, b, s)  # type: ignore[arg-type]


def test_report_at_budget_only() -> None:
    r = cost_report(price=GPT4O, budget=512, output_tokens=300, calls_per_year=10_000)
    assert isinstance(r, CostReport)
    assert r.at_budget.input_tokens == 512
    assert r.at_budget.per_call == pytest.approx(0.00428)
    assert r.at_budget.per_year == pytest.approx(42.8)
    assert r.full_mean is None and r.savings_per_year is None and r.savings_pct is None
    assert r.rows() == [("budget 512", r.at_budget.per_call, r.at_budget.per_year)]
    assert r.to_dict()["full_mean"] is None


def test_report_with_document_distribution_hand_computed() -> None:
    docs = [100, 1000, 2000, 3000, 4000]
    r = cost_report(
        price=GPT4O, budget=512, output_tokens=300, calls_per_year=10_000, document_tokens=docs
    )
    # sent: 100 (whole, shorter than the budget) + 4 * 512 = 2148 -> mean 429.6
    assert r.at_budget.input_tokens == pytest.approx(429.6)
    assert r.at_budget.per_call == pytest.approx((2.5 * 429.6 + 3000) / 1e6)  # 0.004074
    assert r.at_budget.per_year == pytest.approx(40.74)
    assert r.full_mean is not None and r.full_median is not None and r.full_p90 is not None
    assert r.full_mean.input_tokens == pytest.approx(2020)
    assert r.full_mean.per_call == pytest.approx(0.00805)
    assert r.full_mean.per_year == pytest.approx(80.5)
    assert r.full_median.input_tokens == 2000
    assert r.full_median.per_year == pytest.approx(80.0)
    # linear interpolation: 3000 + 0.6 * (4000 - 3000)
    assert r.full_p90.input_tokens == pytest.approx(3600)
    assert r.full_p90.per_year == pytest.approx(120.0)
    assert r.savings_per_call == pytest.approx(0.003976)
    assert r.savings_per_year == pytest.approx(39.76)
    assert r.savings_pct == pytest.approx(100 * 3976 / 8050)
    assert (r.n_documents, r.n_over_budget) == (5, 4)
    labels = [row[0] for row in r.rows()]
    assert labels == [
        "budget 512 (mean over documents)",
        "full context (mean)",
        "full context (median)",
        "full context (p90)",
        "savings vs full (mean)",
    ]
    assert r.rows()[-1][2] == pytest.approx(39.76)
    d = r.to_dict()
    json.dumps(d)
    assert d["model"] == "gpt-4o" and d["full_p90"]["input_tokens"] == pytest.approx(3600)


def test_report_documents_all_under_budget_save_nothing() -> None:
    r = cost_report(
        price=GPT4O, budget=4096, output_tokens=200, calls_per_year=100, document_tokens=[10, 20]
    )
    assert r.savings_per_call == pytest.approx(0.0)
    assert r.savings_pct == pytest.approx(0.0)
    assert r.n_over_budget == 0


def test_report_local_model_has_zero_percent_not_nan() -> None:
    r = cost_report(
        price=get_price("local"),
        budget=256,
        output_tokens=10,
        calls_per_year=5,
        document_tokens=[1000],
    )
    assert r.savings_pct == 0.0 and r.at_budget.per_year == 0.0


def test_report_overhead_is_added_to_every_scenario() -> None:
    r = cost_report(
        price=GPT4O,
        budget=512,
        output_tokens=300,
        calls_per_year=1,
        document_tokens=[1000],
        overhead_tokens=100,
    )
    assert r.at_budget.per_call == pytest.approx((2.5 * 612 + 3000) / 1e6)  # 0.00453
    assert r.full_mean is not None
    assert r.full_mean.input_tokens == 1100
    assert r.savings_per_call == pytest.approx(2.5 * 488 / 1e6)


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"budget": 0}, "budget"),
        ({"budget": 512.0}, "budget"),
        ({"output_tokens": -1}, "output_tokens"),
        ({"calls_per_year": -10}, "calls_per_year"),
        ({"document_tokens": []}, "document_tokens"),
        ({"document_tokens": [10, -1]}, "document_tokens"),
        ({"document_tokens": [10, 2.5]}, "document_tokens"),
        ({"overhead_tokens": -1}, "overhead_tokens"),
        ({"price": "gpt-4o"}, "price"),
    ],
)
def test_report_validation(kwargs: dict[str, object], parameter: str) -> None:
    base: dict[str, object] = {
        "price": GPT4O,
        "budget": 512,
        "output_tokens": 300,
        "calls_per_year": 10,
    }
    with pytest.raises(InvalidParameterError) as info:
        cost_report(**{**base, **kwargs})  # type: ignore[arg-type]
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"The {parameter!r} parameter of cost_report must be")


def test_override_file_replaces_and_extends(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "_comment": "our negotiated rates",
                "GPT-4o": {"input": 5, "output": 15},
                "my-model": {
                    "input": 1,
                    "output": 2,
                    "date": "2025-01-01",
                    "source": "contract #12",
                },
            }
        ),
        encoding="utf-8",
    )
    prices = load_prices(path)
    assert prices["gpt-4o"].input_per_mtok == 5.0
    assert prices["gpt-4o"].source == "price file prices.json"
    assert prices["my-model"] == Price("my-model", 1.0, 2.0, "2025-01-01", "contract #12")
    assert prices["gpt-4o-mini"] == load_prices()["gpt-4o-mini"]
    assert "_comment" not in prices
    assert get_price("openai:my-model", prices=prices).output_per_mtok == 2.0
    # the bundled table is not changed by an override
    assert load_prices()["gpt-4o"].input_per_mtok == 2.5


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{oops", "not valid JSON"),
        ("[1]", "not an object"),
        ('{"m": 3}', "not an object"),
        ('{"m": {"input": 1}}', "lacks \\['output'\\]"),
        ('{"m": {"input": -1, "output": 1}}', "input_per_mtok"),
        ('{"m": {"input": "1", "output": 1}}', "input_per_mtok"),
        ('{"m": {"input": 1, "output": 1, "date": "Jan 2025"}}', "YYYY-MM-DD"),
        ('{"m": {"input": 1, "output": 1, "cost": 3}}', "unknown key"),
        ('{"m": {"input": 1, "output": 1, "source": 7}}', "source"),
    ],
)
def test_malformed_price_file_names_file_and_problem(
    tmp_path: Path, content: str, match: str
) -> None:
    path = tmp_path / "bad-prices.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=match) as info:
        load_prices(path)
    assert "bad-prices.json" in str(info.value)
    assert info.value.parameter == "prices"


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="Cannot read the price file"):
        load_prices(tmp_path / "nope.json")


def test_price_validation_and_to_dict() -> None:
    with pytest.raises(InvalidParameterError, match="'output_per_mtok' parameter of Price"):
        Price("m", 1.0, float("inf"), "", "")
    with pytest.raises(InvalidParameterError, match="'date' parameter of Price"):
        Price("m", 1.0, 2.0, None, "")  # type: ignore[arg-type]
    p = Price("m", 1, 2, "2026-11-22", "s")
    assert isinstance(p.input_per_mtok, float)
    assert p.to_dict() == {
        "model": "m",
        "input_per_mtok": 1.0,
        "output_per_mtok": 2.0,
        "date": "2026-11-22",
        "source": "s",
        "note": "",
    }
