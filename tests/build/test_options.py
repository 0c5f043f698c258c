"""BuildOptions: one options object, checked once at the public boundary, taken everywhere."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import budgetctx
from budgetctx import BuildOptions, InvalidParameterError, build_context, fit_messages, prepare
from budgetctx.batch import ContextBuilder
from budgetctx.build._options import RULES, check_budget, check_reserve
from budgetctx.selectors import get_selector, parse_option_value

NOTE = (
    "CHIEF COMPLAINT: Chest pain. Troponin negative twice. ECG without ischemic changes. "
    "Discharged home on aspirin. Follow up with cardiology in two weeks."
)


def test_options_are_checked_when_built_naming_the_caller() -> None:
    with pytest.raises(InvalidParameterError, match="'order' parameter of BuildOptions"):
        BuildOptions(order="random")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'truncate' parameter of build_context"):
        build_context(NOTE, 20, truncate="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'document_header' parameter"):
        BuildOptions(document_header="[{name}]")


def test_every_rule_is_declared_once_beside_its_field() -> None:
    names = {f.name for f in dataclasses.fields(BuildOptions)}
    assert set(RULES) == (names - {"pin"}) | {"budget"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        BuildOptions().reserve = 3  # type: ignore[misc]


def _same(a: budgetctx.Context, b: budgetctx.Context) -> bool:
    return dataclasses.replace(a, timings_ms={}) == dataclasses.replace(b, timings_ms={})


def test_options_object_gives_the_same_context_as_keywords() -> None:
    opts = BuildOptions(selector="lead", unitizer="section", truncate=True, reserve=2)
    by_keywords = build_context(
        NOTE, 20, selector="lead", unitizer="section", truncate=True, reserve=2
    )
    assert _same(build_context(NOTE, 20, options=opts), by_keywords)


def test_keywords_that_differ_from_their_defaults_override_the_options() -> None:
    opts = BuildOptions(selector="lead", reserve=4)
    merged = BuildOptions.merge(opts, "build_context", selector="mmr", reserve=6)
    assert (merged.selector, merged.reserve) == ("lead", 6)  # "mmr" is the default: no override
    ctx = build_context(NOTE, 30, options=opts, reserve=10)
    assert (ctx.selector, ctx.reserve, ctx.available) == ("lead", 10, 20)
    with pytest.raises(InvalidParameterError, match="'options' parameter of build_context"):
        build_context(NOTE, 30, options={"selector": "lead"})  # type: ignore[arg-type]


def test_prepare_and_select_take_options() -> None:
    doc = prepare(NOTE, options=BuildOptions(unitizer="section"))
    ctx = doc.select(15, options=BuildOptions(selector="lead", reserve=3))
    assert (ctx.unitizer, ctx.selector, ctx.available) == ("section", "lead", 12)
    assert ctx.tokens_used <= ctx.available


def test_budget_and_reserve_rules() -> None:
    assert check_budget("x", 5) == 5
    with pytest.raises(InvalidParameterError, match="'budget' parameter of x must be an int >= 1"):
        check_budget("x", 0)
    with pytest.raises(InvalidParameterError, match="'reserve' parameter must be smaller"):
        check_reserve(10, 10)
    with pytest.raises(InvalidParameterError, match="'reserve' parameter of fit_messages"):
        fit_messages([{"role": "user", "content": NOTE}], 10, reserve=10)


def test_selector_specs_are_accepted_wherever_a_name_is() -> None:
    assert get_selector("mmr:lambda_=0.3").params()["lambda_"] == 0.3
    assert get_selector("mmr:lambda_=0.3", cost_exponent=0.0).params()["cost_exponent"] == 0.0
    with pytest.raises(InvalidParameterError, match="both set"):
        get_selector("mmr:lambda_=0.3", lambda_=0.4)
    ctx = build_context(NOTE, 15, selector="mmr:lambda_=0.3")
    assert (ctx.selector, ctx.params["selector"]["lambda_"]) == ("mmr", 0.3)
    spec = build_context(NOTE, 15, selector="mmr", selector_options={"lambda_": 0.3})
    assert spec.text == ctx.text
    assert ContextBuilder(15, selector="lead:fill=true")(NOTE).params["selector"] == {"fill": True}


def test_one_value_rule_for_every_key_value_option() -> None:
    values = ("0.5", "3", "true", "false", "null", "[1, 2]", '"7"', "http://x:1", "1e3")
    assert [parse_option_value(v) for v in values] == [
        0.5, 3, True, False, None, [1, 2], "7", "http://x:1", 1000.0,
    ]  # fmt: skip


def test_a_builder_checks_its_options_once_not_per_document(monkeypatch: Any) -> None:
    builder = ContextBuilder(20, selector="auto", unitizer="section")
    built: list[Any] = []
    original = BuildOptions.__post_init__

    def counting(self: BuildOptions, owner: str) -> None:
        built.append(owner)
        original(self, owner)

    monkeypatch.setattr(BuildOptions, "__post_init__", counting)
    resolved: list[Any] = []
    monkeypatch.setattr(
        "budgetctx.batch._build._resolve_selector", lambda *args: resolved.append(args)
    )
    contexts = [builder(NOTE) for _ in range(3)]
    assert built == [] and resolved == []
    assert all(c.route is not None for c in contexts)


def test_fit_messages_prepares_the_condensed_texts_once(monkeypatch: Any) -> None:
    import budgetctx.chat._messages as messages

    calls: list[int] = []
    original = messages._prepare

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(messages, "_prepare", counting)
    msgs = [
        {"role": "user", "content": NOTE * 6},
        {"role": "tool", "content": NOTE * 5},
        {"role": "user", "content": "Was troponin negative?"},
    ]
    fit = fit_messages(msgs, 80)
    assert fit.prompt_tokens <= fit.available == 80
    assert calls == [1]


def test_every_component_reports_its_fields_as_params() -> None:
    for name in budgetctx.list_selectors():
        sel = budgetctx.get_selector(name)
        assert sel.name == name
        assert sel.params() == {f.name: getattr(sel, f.name) for f in dataclasses.fields(sel)}  # type: ignore[arg-type]
    for name in budgetctx.list_unitizers():
        unit = budgetctx.get_unitizer(name)
        assert unit.name == name


def test_defaults_are_checked_once_and_every_other_value_each_time() -> None:
    # session 6, part K: a field left at its default is not re-checked on every call; each
    # default passes its rule unchanged (checked once), and a value equal to it, or not, is
    # still checked and refused with the same message
    from budgetctx.build._options import _CHECKED

    defaults = {f.name: f.default for f in dataclasses.fields(BuildOptions)}
    assert {name for name, _, _ in _CHECKED} == set(RULES) - {"budget"}
    assert all(d is defaults[name] for name, _, d in _CHECKED)
    header = "".join(["[{", "id}]"])  # equal to the default, another object
    assert BuildOptions(document_header=header).document_header == "[{id}]"
    with pytest.raises(InvalidParameterError, match="'document_header'"):
        BuildOptions(document_header="[{nope}]")
    with pytest.raises(InvalidParameterError, match="'order' parameter of build_context"):
        build_context("Chest pain.", 10, order="".join(["rand", "om"]))  # type: ignore[arg-type]


def test_a_selector_registered_at_run_time_is_found_by_name() -> None:
    from budgetctx.selectors import LeadSelector, register_selector
    from budgetctx.selectors._base import _REGISTRY

    text = "Chest pain. Troponin negative. Discharged home."
    with pytest.raises(budgetctx.UnknownComponentError):
        build_context(text, 6, selector="lead_k_test")
    register_selector("lead_k_test", LeadSelector)
    try:
        assert (
            build_context(text, 6, selector="lead_k_test").text
            == build_context(text, 6, selector="lead").text
        )
        assert build_context(text, 400, selector="lead_k_test").selector == "lead"
    finally:
        del _REGISTRY._factories["lead_k_test"]
