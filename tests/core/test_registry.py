"""The name -> component registry: names, instances, and everything else refused clearly."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import pytest

from budgetctx import InvalidParameterError, UnknownComponentError
from budgetctx._core.registry import Registry


@runtime_checkable
class _Widget(Protocol):
    @property
    def name(self) -> str: ...

    def spin(self) -> int: ...


class _Plain:
    name = "plain"

    def __init__(self, *, speed: int = 1) -> None:
        self.speed = speed

    def spin(self) -> int:
        return self.speed


def _registry() -> Registry[_Widget]:
    reg: Registry[_Widget] = Registry("widget", _Widget)
    reg.register("plain", _Plain, aliases=("basic",))
    return reg


def test_names_aliases_and_instances() -> None:
    reg = _registry()
    assert isinstance(reg.resolve("BASIC", speed=3), _Plain)
    inst = _Plain()
    assert reg.resolve(inst) is inst


@pytest.mark.parametrize("spec", [None, 3, 2.5, b"plain", ["plain"], object(), _Plain])
def test_anything_else_is_an_invalid_parameter_naming_kind_value_and_names(spec: Any) -> None:
    with pytest.raises(InvalidParameterError) as info:
        _registry().resolve(spec)
    message = str(info.value)
    assert info.value.parameter == "widget"
    assert message.startswith("The 'widget' parameter of get_widget must be a widget name")
    assert f"Got {spec!r}"[:20] in message
    assert "'plain'" in message  # the fix lists the valid names
    assert "_Widget protocol" in message


def test_an_instance_of_another_protocol_is_refused() -> None:
    class NoSpin:
        name = "nospin"

    with pytest.raises(InvalidParameterError, match="'widget' parameter"):
        _registry().resolve(NoSpin())


def test_canonical_and_create_refuse_non_strings() -> None:
    reg = _registry()
    for call in (reg.canonical, reg.create):
        with pytest.raises(InvalidParameterError, match="must be a widget name"):
            call(None)  # type: ignore[operator]
    with pytest.raises(UnknownComponentError):
        reg.canonical("")


def test_without_a_protocol_instances_pass_unchecked() -> None:
    reg: Registry[Any] = Registry("thing")
    marker = object()
    assert reg.resolve(marker) is marker


@pytest.mark.parametrize(
    ("name", "factory", "aliases", "parameter"),
    [
        (None, _Plain, (), "name"),
        ("  ", _Plain, (), "name"),
        ("fast", None, (), "factory"),
        ("fast", _Plain, ("",), "aliases"),
        ("fast", _Plain, (None,), "aliases"),
    ],
)
def test_register_validates_its_arguments(
    name: Any, factory: Any, aliases: Any, parameter: str
) -> None:
    reg = _registry()
    with pytest.raises(InvalidParameterError) as info:
        reg.register(name, factory, aliases=aliases)
    assert info.value.parameter == parameter
    assert "fast" not in reg.names()


class _Needs:
    name = "needs"

    def __init__(self, *, size: int) -> None:
        self.size = size

    def spin(self) -> int:
        return self.size


def test_create_without_options_still_names_a_required_one() -> None:
    reg = _registry()
    reg.register("needs", _Needs)
    with pytest.raises(InvalidParameterError, match=r"needs the option\(s\) \['size'\]"):
        reg.create("needs")
    assert reg.create("needs", size=2).spin() == 2
    assert isinstance(reg.create("plain"), _Plain)


def test_a_name_registered_after_use_is_found() -> None:
    reg = _registry()
    assert isinstance(reg.resolve("plain"), _Plain)
    with pytest.raises(UnknownComponentError):
        reg.resolve("late")
    reg.register("late", _Needs)
    assert reg.resolve("late", size=4).spin() == 4


def test_only_budgetctx_frozen_scalar_components_are_shared() -> None:
    # session 6, part K: a component named without options is built once when nothing about
    # it can change; anything else is built on every call
    from dataclasses import FrozenInstanceError

    from budgetctx.representations import get_representation
    from budgetctx.selectors import get_selector
    from budgetctx.selectors._base import _REGISTRY

    mmr = get_selector("mmr")
    assert get_selector("MMR") is mmr and get_selector("mmr:lambda_=0.7") is not mmr
    assert get_selector("mmr", lambda_=0.5).params()["lambda_"] == 0.5
    with pytest.raises(FrozenInstanceError):
        mmr.lambda_ = 0.1  # type: ignore[misc]
    tfidf = get_representation("tfidf")  # not frozen: fit() sets its vectorizer
    assert get_representation("tfidf") is not tfidf
    reg = _registry()
    assert reg.create("plain") is not reg.create("plain")  # a caller's class
    # a factory replaced under the same name is used at once
    original = _REGISTRY._factories["mmr"]
    try:
        _REGISTRY._factories["mmr"] = lambda: "replaced"  # type: ignore[assignment,return-value]
        assert get_selector("mmr") == "replaced"
    finally:
        _REGISTRY._factories["mmr"] = original
    assert get_selector("mmr") == mmr


def test_slotted_or_mutable_dataclasses_are_not_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import dataclass, field

    from budgetctx._core import registry

    @dataclass(frozen=True, slots=True)
    class Slotted:
        n: int = 1

    @dataclass(frozen=True)
    class Holding:
        table: dict[str, int] = field(default_factory=dict)

    @dataclass(frozen=True)
    class Plain:
        n: int = 1
        pair: tuple[int, int] = (1, 2)

    for cls in (Slotted, Holding, Plain):
        monkeypatch.setattr(cls, "__module__", "budgetctx.fake")
    assert not registry._immutable(Slotted()) and not registry._immutable(Holding())
    assert registry._immutable(Plain())
    monkeypatch.setattr(Plain, "__module__", "callers.own")
    assert not registry._immutable(Plain())
