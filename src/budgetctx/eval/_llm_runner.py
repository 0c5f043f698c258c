"""End-to-end sweeps: every selected context (and the whole document) goes to an LLM.

Selection runs in the sweep's workers exactly as for extractive sweeps; the parent process
sends the prompts through a :class:`~budgetctx.generate.CachedGenerator`, scores the replies
against the reference and writes each example's rows in one transaction. A resumed or
repeated sweep finds every reply already in the response cache and pays nothing twice.

Row metrics are those of the *generated* text (ROUGE-1/2/L, token F1, BERTScore F1); the
extractive context's own scores stay beside them as ``ctx_rouge1`` and ``ctx_rouge2``. For
classification prompts (PubMedQA) a row has ``correct`` and ``parsed``; the answer the model
gave, parsed or not, is in ``generation["label"]`` and macro-F1 is computed per cell by the
report, unparseable answers counted, never mapped to a class.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from budgetctx._core.validation import (
    Boolean,
    InstanceOf,
    Interval,
    NoneOr,
    Predicate,
    validate_fields,
)
from budgetctx._errors import (
    BudgetCtxWarning,
    ContextLengthError,
    GenerationError,
    InvalidParameterError,
    UnknownComponentError,
)
from budgetctx.eval._labels import FULL
from budgetctx.eval._store import SweepRow
from budgetctx.generate import (
    CachedGenerator,
    Message,
    Price,
    PromptTemplate,
    call_cost,
    get_generator,
    get_price,
    get_prompt,
    list_generators,
    load_prices,
    parse_label,
    prompt_for_dataset,
)
from budgetctx.tokenizers import get_tokenizer

__all__ = ["GenerationConfig", "LLMRunner"]

_STR: Any = InstanceOf(str, "a str")
_POSITIVE: Any = Interval(int, 1, None)

_CTX_METRICS = ("rouge1", "rouge2")


@dataclass(frozen=True)
class GenerationConfig:
    """What an LLM sweep sends and how.

    ``generator`` is a spec for :func:`~budgetctx.generate.get_generator` (``"local"``,
    ``"openai:gpt-4o"``) and ``options`` its backend options (``base_url``, ``concurrency``,
    ``n_ctx`` ...). ``prompt`` names a template (None: the dataset's own, see
    :func:`~budgetctx.generate.prompt_for_dataset`). ``max_tokens`` None means 200 for
    summaries and 50 for a label (the paper's code). ``cache`` is the response cache file (None:
    ``RUN/responses.sqlite``); prompt text is stored there only with ``store_prompts``.
    ``prices`` is a JSON price file that extends the bundled table.

    >>> GenerationConfig("local").settings()["generator"]
    'local'
    """

    generator: str
    prompt: str | None = None
    max_tokens: int | None = None
    temperature: float = 0.0
    cache: str | None = None
    store_prompts: bool = False
    full_context: bool = True
    bertscore: bool = True
    prices: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    # Any: the frozen rule classes are Constraints at run time (see _validation's Protocol).
    _constraints: ClassVar[Mapping[str, Any]] = {
        "generator": Predicate(
            lambda v: isinstance(v, str) and bool(v.strip()),
            "a generator spec",
            fix="e.g. 'local' or 'openai:gpt-4o'.",
        ),
        "prompt": NoneOr(_STR, fix="None uses the dataset's own template."),
        "max_tokens": NoneOr(_POSITIVE, fix="e.g. 200; None: 200 for summaries, 50 for labels."),
        "temperature": Interval(float, 0, 2, fix="0 is greedy."),
        "cache": NoneOr(_STR, fix="None keeps it in RUN/responses.sqlite."),
        "store_prompts": Boolean(),
        "full_context": Boolean(),
        "bertscore": Boolean(),
        "prices": NoneOr(_STR, fix="a JSON price file, or None for the bundled table."),
        "options": Predicate(
            lambda v: isinstance(v, Mapping) and all(isinstance(k, str) for k in v),
            "a mapping of option names to values",
            fix="e.g. {'base_url': 'http://localhost:8080/v1'}.",
        ),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        backend = self.generator.partition(":")[0].strip()
        if backend not in list_generators():
            raise UnknownComponentError("generator", backend, list_generators())
        if self.prompt is not None:
            get_prompt(self.prompt)  # fails early, with the list of templates

    def settings(self) -> dict[str, Any]:
        """What must stay the same when an LLM sweep is resumed (the cache key covers the
        rest: a changed option simply misses the cache)."""
        return {
            "generator": self.generator,
            "prompt": self.prompt,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "full_context": self.full_context,
        }

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["options"] = dict(self.options)
        return out


class LLMRunner:
    """Turns one example's extractive rows into generated rows (parent process only).

    ``scorer`` maps ``(candidate, reference)`` to the sweep's text metrics (ROUGE, token F1).
    """

    def __init__(
        self,
        config: GenerationConfig,
        run_dir: str | Path,
        *,
        tokenizer: str,
        scorer: Callable[[str, str], Mapping[str, float]],
    ) -> None:
        self.config = config
        self._tokenizer = get_tokenizer(tokenizer)
        self._scorer = scorer
        cache = config.cache if config.cache is not None else Path(run_dir) / "responses.sqlite"
        self.cache_path = Path(cache)
        self._cached: dict[int, CachedGenerator] = {}  # max_tokens -> generator
        self._prices = load_prices(config.prices)
        self._bertscore: Any = None
        self.errors: list[str] = []

    # -- plumbing -------------------------------------------------------------------------
    def _generator(self, max_tokens: int) -> CachedGenerator:
        gen = self._cached.get(max_tokens)
        if gen is None:
            inner = get_generator(
                self.config.generator,
                temperature=self.config.temperature,
                max_tokens=max_tokens,
                **dict(self.config.options),
            )
            # One cache file shared by every generator of the run; the first one opens it.
            shared = next(iter(self._cached.values()), None)
            cache = shared.cache if shared is not None else self.cache_path
            gen = CachedGenerator(inner, cache, store_prompts=self.config.store_prompts)
            self._cached[max_tokens] = gen
        return gen

    @property
    def calls(self) -> int:
        """Prompts actually sent to a model (cache misses)."""
        return sum(int(g.calls) for g in self._cached.values())

    @property
    def hits(self) -> int:
        return sum(int(g.hits) for g in self._cached.values())

    def close(self) -> None:
        for g in self._cached.values():
            g.close()  # closes the cache file only in the generator that opened it

    def _template(self, dataset: str) -> PromptTemplate:
        return get_prompt(self.config.prompt or prompt_for_dataset(dataset))

    def _price(self, model: str) -> Price | None:
        """The price table's entry (``local:...`` models cost what ``local`` says), or None
        for a model it does not know: such rows carry no cost, the report can re-price."""
        try:
            return get_price(model, prices=self._prices)
        except UnknownComponentError:
            return None

    def _prompt_tokens(self, prompt: Sequence[Message]) -> int:
        return sum(self._tokenizer.count(m.content) for m in prompt)

    def _bertscore_f(self, texts: Sequence[str], refs: Sequence[str]) -> list[float | None]:
        if not self.config.bertscore:
            return [None] * len(texts)
        if self._bertscore is None:
            try:
                from budgetctx.eval.metrics import BERTScore

                self._bertscore = BERTScore()
            except Exception as exc:  # optional extra missing: rows go without BERTScore
                warnings.warn(
                    f"BERTScore unavailable ({type(exc).__name__}: {exc}); generated rows are "
                    "written without bertscore_f. Install 'budgetctx[bertscore]' or pass "
                    "--no-bertscore.",
                    BudgetCtxWarning,
                    stacklevel=2,
                )
                self._bertscore = False
        if self._bertscore is False:
            return [None] * len(texts)
        return [round(p.f, 6) for p in self._bertscore.score(list(texts), list(refs))]

    # -- the work -------------------------------------------------------------------------
    def complete(
        self,
        rows: Sequence[SweepRow],
        texts: Mapping[tuple[str, int], str],
        *,
        dataset: str,
        query: str | None,
        reference: str,
        label: str | None,
    ) -> list[SweepRow]:
        """Generate for every row; rows whose request failed for good are left out (so a
        resumed sweep tries them again) and their errors kept in :attr:`errors`."""
        template = self._template(dataset)
        classify = template.task == "classify"
        if classify and label is None:
            raise InvalidParameterError(
                f"The prompt {template.id!r} classifies, but dataset {dataset!r} has no gold "
                "labels; pass a summarization prompt (--prompt) or a labelled dataset.",
                parameter="prompt",
                value=template.id,
            )
        # The paper's code: 200 tokens for a summary, 50 for a label.
        max_tokens = self.config.max_tokens or (50 if classify else 200)
        gen = self._generator(max_tokens)
        # A summary prompt takes the task's instruction only when it has a slot for it.
        use_query = query if (classify or template.user_with_query) else None
        prompts = [template.render(texts[(r.selector, r.budget)], query=use_query) for r in rows]
        # The full document goes alone: it is the prompt likely to overflow the window, and a
        # batch it broke would be sent again prompt by prompt.
        alone = {i for i, r in enumerate(rows) if r.selector == FULL}
        results: list[Any] = [None] * len(rows)
        for i in alone:
            results[i] = self._generate_all(gen, [prompts[i]])[0]
        rest = [i for i in range(len(rows)) if i not in alone]
        for i, g in zip(rest, self._generate_all(gen, [prompts[i] for i in rest]), strict=True):
            results[i] = g
        # A prompt longer than the model's window is a result, not a failure to retry: the row
        # is written with the reason and no reply scores (the report counts such rows).
        too_long = [
            replace(
                row,
                metrics={f"ctx_{m}": row.metrics[m] for m in _CTX_METRICS},
                reason="prompt longer than the model's context window",
                generation={
                    "error": "context_length",
                    "message": str(g),
                    "prompt": template.id,
                    "prompt_tokens": self._prompt_tokens(prompt),
                    "max_tokens": max_tokens,
                },
            )
            for row, prompt, g in zip(rows, prompts, results, strict=True)
            if isinstance(g, ContextLengthError)
        ]
        done = [
            (r, p, g)
            for r, p, g in zip(rows, prompts, results, strict=True)
            if g is not None and not isinstance(g, ContextLengthError)
        ]
        if not done:
            return too_long
        bert = (
            [None] * len(done)
            if classify
            else self._bertscore_f([g.text for _, _, g in done], [reference] * len(done))
        )
        out = []
        for (row, prompt, g), bs in zip(done, bert, strict=True):
            metrics: dict[str, float] = {f"ctx_{m}": row.metrics[m] for m in _CTX_METRICS}
            generation: dict[str, Any] = {
                "text": g.text,
                "model": g.model,
                "prompt": template.id,
                "usage": g.usage.to_dict(),
                "prompt_tokens": self._prompt_tokens(prompt),
                "latency_ms": round(float(g.latency_ms), 2),
                "cached": bool(g.cached),
                "finish_reason": g.finish_reason,
                "max_tokens": max_tokens,
            }
            if classify:
                parsed = parse_label(g.text, template.labels or ("yes", "no", "maybe"))
                generation["label"] = parsed
                generation["gold"] = label
                metrics["correct"] = 1.0 if parsed == label else 0.0
                metrics["parsed"] = 0.0 if parsed is None else 1.0
            else:
                metrics.update(self._scorer(g.text, reference))
                if bs is not None:
                    metrics["bertscore_f"] = bs
            price = self._price(g.model)
            if price is not None:
                cost = call_cost(price, g.usage.input_tokens, g.usage.output_tokens)
                generation["cost_usd"] = round(cost, 8)
                generation["price_model"] = price.model
            out.append(replace(row, metrics=metrics, generation=generation))
        return out + too_long

    def _generate_all(self, gen: Any, prompts: Sequence[Any]) -> list[Any]:
        if not prompts:
            return []
        if len(prompts) > 1:
            try:
                return list(gen.generate_batch(prompts))
            except GenerationError:
                pass
        # Find which requests fail; the others are kept (and are cached already).
        results: list[Any] = []
        for p in prompts:
            try:
                results.append(gen.generate(p))
            except ContextLengthError as exc:
                results.append(exc)
            except GenerationError as exc:
                self.errors.append(str(exc))
                results.append(None)
        return results
