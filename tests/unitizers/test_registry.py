"""The unitizer registry: names, aliases, options and errors."""

from __future__ import annotations

import pytest

import budgetctx
from budgetctx.unitizers import (
    ClusterUnitizer,
    SectionUnitizer,
    SentenceUnitizer,
    Unitizer,
    WindowUnitizer,
    get_unitizer,
    list_unitizers,
    register_unitizer,
)

BUILT_IN = {
    "cluster": ClusterUnitizer,
    "section": SectionUnitizer,
    "sentence": SentenceUnitizer,
    "window": WindowUnitizer,
}


def test_list_unitizers_names_the_built_ins_sorted() -> None:
    names = list_unitizers()
    assert set(BUILT_IN) <= set(names)
    assert names == sorted(names)
    assert budgetctx.list_unitizers() == names


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_each_name_builds_its_unitizer(name: str) -> None:
    unitizer = get_unitizer(name)
    assert type(unitizer) is BUILT_IN[name]
    assert unitizer.name == name
    assert isinstance(unitizer, Unitizer)
    assert type(unitizer)(**unitizer.params()) == unitizer


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("sections", "section"),
        ("sent", "sentence"),
        ("windows", "window"),
        ("SECTION", "section"),
        ("Sections", "section"),
    ],
)
def test_aliases_and_case(alias: str, name: str) -> None:
    assert get_unitizer(alias).name == name


def test_unknown_name_lists_the_valid_names() -> None:
    with pytest.raises(budgetctx.UnknownComponentError) as info:
        get_unitizer("paragraph")
    message = str(info.value)
    assert "'paragraph'" in message
    for name in BUILT_IN:
        assert repr(name) in message
    assert isinstance(info.value, KeyError)
    assert info.value.available == list_unitizers()


def test_options_are_passed_to_the_factory() -> None:
    unitizer = get_unitizer("window", base_words=30)
    assert isinstance(unitizer, WindowUnitizer)
    assert unitizer.params()["base_words"] == 30
    assert get_unitizer("windows", overlap=0.0).params()["overlap"] == 0.0
    assert get_unitizer("cluster", threshold=0.2).params()["threshold"] == 0.2
    assert get_unitizer("section", max_words=None).params() == {"max_words": None}


def test_unknown_option_is_an_invalid_parameter() -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match="window") as info:
        get_unitizer("window", base_wordz=30)
    assert "base_wordz" in str(info.value)


def test_bad_option_value_names_the_parameter() -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match="base_words") as info:
        get_unitizer("window", base_words=0)
    assert info.value.parameter == "base_words"


@pytest.mark.parametrize("name", ["sentence", "section"])
@pytest.mark.parametrize("max_words", [0, 1.5, "150", True])
def test_sentence_unitizers_validate_max_words(name: str, max_words: object) -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match="max_words") as info:
        get_unitizer(name, max_words=max_words)
    assert str(info.value).startswith("The 'max_words' parameter of S")
    assert str(info.value).endswith("or None to never cut.")


@pytest.mark.parametrize("spec", [None, 50, SentenceUnitizer])
def test_a_spec_that_is_neither_name_nor_unitizer_is_refused(spec: object) -> None:
    with pytest.raises(budgetctx.InvalidParameterError) as info:
        get_unitizer(spec)  # type: ignore[arg-type]
    assert info.value.parameter == "unitizer"
    for name in BUILT_IN:
        assert repr(name) in str(info.value)


def test_an_instance_passes_through() -> None:
    unitizer = WindowUnitizer(base_words=20)
    assert get_unitizer(unitizer) is unitizer


def test_an_instance_with_options_is_refused() -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match="instance"):
        get_unitizer(WindowUnitizer(), base_words=20)


def test_registering_a_taken_name_is_refused() -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match="sentence"):
        register_unitizer("sentence", SentenceUnitizer)
    assert get_unitizer("sentence").name == "sentence"
