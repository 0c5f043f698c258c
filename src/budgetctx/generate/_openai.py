"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint.

OpenAI, Azure OpenAI (deployment + ``api-version``), vLLM, Ollama and the llama.cpp server all
speak ``POST .../chat/completions``; this backend drives them through the official ``openai``
client with the client's own retries switched off, so that retrying is ours, explicit and
tested (the policy is in ``_retry``, the client in ``_endpoint``, reading replies in
``_response``).

A request that fails for good raises :class:`~budgetctx.GenerationError` naming the request
(a random id, also in the retry log lines), the model, the attempts and the last status.
Neither prompt text nor upstream text (error bodies, reason phrases, client exception
messages: servers echo the prompt in them) appears in errors or logs unless
``include_upstream_body=True``; ``_failure`` says what is kept instead.
"""

from __future__ import annotations

import json
import logging
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, ClassVar, cast

import openai

from budgetctx._core.validation import (
    Boolean,
    Constraint,
    Interval,
    NoneOr,
    Predicate,
    validate,
)
from budgetctx._errors import ContextLengthError, GenerationError, InvalidParameterError
from budgetctx.generate._base import Generation, Message, Usage
from budgetctx.generate._endpoint import make_client
from budgetctx.generate._failure import (
    Failure,
    connection_failure,
    malformed_failure,
    status_failure,
)
from budgetctx.generate._response import MalformedResponseError, Reply, estimator, parse_completion
from budgetctx.generate._retry import backoff_delay
from budgetctx.generate._transport_logs import withheld

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["OpenAIGenerator"]

_log = logging.getLogger(__name__)


def _json_mapping(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    json.dumps(dict(value), sort_keys=True)  # TypeError/ValueError: refused by Predicate
    return True


class OpenAIGenerator:
    """Chat completions from an OpenAI-compatible endpoint.

    The URL, key and (for Azure) endpoint and API version come from the arguments or from the
    environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``; ``AZURE_OPENAI_ENDPOINT``,
    ``AZURE_OPENAI_API_KEY``, ``OPENAI_API_VERSION``. Azure is used when ``azure_endpoint``,
    ``azure_deployment`` or ``api_version`` is given, or when only ``AZURE_OPENAI_ENDPOINT`` is
    set. A local server needs no key. Nothing is sent until :meth:`generate`.

    ``include_upstream_body=True`` (CLI: ``--gen-option include_upstream_body=true``) lets
    errors and logs carry what the server sent back with a failure (error text, reason
    phrase, the HTTP library's exception message), which may quote the prompt: for debugging
    against a server that sees no PHI. Off, a failure is recorded as status, error type/code
    and a hash of the body.

    >>> gen = OpenAIGenerator("llama3", base_url="http://127.0.0.1:8000/v1", seed=1)
    >>> gen.name, gen.params()["seed"]
    ('openai:llama3', 1)
    >>> gen.generate([Message("user", "Summarise: ...")]).text  # doctest: +SKIP
    'The patient ...'
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "model": Predicate(
            lambda v: isinstance(v, str) and bool(v.strip()),
            "a non-empty model name",
            fix="e.g. 'gpt-4o'.",
        ),
        "temperature": Interval(float, 0, None, fix="0 is greedy."),
        "max_tokens": Interval(int, 1, None, fix="e.g. 512."),
        "seed": NoneOr(Interval(int), fix="pass an int, or None for no seed."),
        "timeout": Interval(float, 0, None, closed="neither", fix="seconds, e.g. 60."),
        "max_retries": Interval(int, 0, None, fix="0 sends each request once."),
        "backoff": Interval(float, 0, None, fix="seconds, e.g. 1.0."),
        "max_backoff": Interval(float, 0, None, fix="seconds, e.g. 60."),
        "concurrency": Interval(int, 1, None, fix="1 sends one request at a time."),
        "extra_body": NoneOr(
            Predicate(_json_mapping, "a JSON-serialisable mapping"),
            fix="it is part of the cache key: use str, numbers, bools, None, lists and dicts.",
        ),
        "include_upstream_body": Boolean(fix="True keeps upstream error text (may be PHI)."),
    }

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_version: str | None = None,
        azure_endpoint: str | None = None,
        azure_deployment: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        concurrency: int = 8,
        extra_body: Mapping[str, Any] | None = None,
        include_upstream_body: bool = False,
        _sleep: Callable[[float], None] = time.sleep,
        _rng: random.Random | None = None,
    ) -> None:
        v = validate(
            "OpenAIGenerator",
            self._constraints,
            {
                "model": model,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "seed": seed,
                "timeout": timeout,
                "max_retries": max_retries,
                "backoff": backoff,
                "max_backoff": max_backoff,
                "concurrency": concurrency,
                "extra_body": extra_body,
                "include_upstream_body": include_upstream_body,
            },
        )
        self.model: str = v["model"]
        self.temperature: float = v["temperature"]
        self.max_tokens: int = v["max_tokens"]
        self.seed: int | None = v["seed"]
        self.timeout: float = v["timeout"]
        self.max_retries: int = v["max_retries"]
        self.backoff: float = v["backoff"]
        self.max_backoff: float = v["max_backoff"]
        self.concurrency: int = v["concurrency"]
        self.extra_body: dict[str, Any] = dict(v["extra_body"] or {})
        self.include_upstream_body: bool = v["include_upstream_body"]
        self._sleep = _sleep
        self._rng = _rng if _rng is not None else random.Random()
        self._client, self._where, self.azure_deployment = make_client(
            base_url=base_url,
            api_key=api_key,
            api_version=api_version,
            azure_endpoint=azure_endpoint,
            azure_deployment=azure_deployment,
            timeout=self.timeout,
        )

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def params(self) -> dict[str, Any]:
        """What changes the output: part of the cache key, so never a secret or the URL."""
        out: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "extra_body": dict(self.extra_body),
        }
        if self.azure_deployment is not None:
            # on Azure the deployment, not the model field, picks the weights
            out["azure_deployment"] = self.azure_deployment
        return out

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAIGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAIGenerator({self.model!r}, at={self._where!r})"

    def _quiet(self) -> AbstractContextManager[None]:
        if self.include_upstream_body:
            from contextlib import nullcontext

            return nullcontext()
        return withheld()

    def generate(self, messages: Sequence[Message]) -> Generation:
        """One chat completion, retried as ``_retry`` says."""
        msgs = _check_messages(messages, parameter="messages")
        # random, not a digest of the prompt: it is printed and stored, and a digest would let
        # a reader test a guessed prompt
        rid = secrets.token_hex(6)
        # Message.to_dict() is exactly the wire shape; the client types it as TypedDicts
        payload = cast("list[ChatCompletionMessageParam]", [m.to_dict() for m in msgs])
        opt_in = self.include_upstream_body
        attempts = self.max_retries + 1
        started = time.perf_counter()
        failure: Failure | None = None
        for attempt in range(1, attempts + 1):
            t0 = time.perf_counter()
            body = ""
            try:
                with self._quiet():
                    raw = self._client.chat.completions.with_raw_response.create(
                        model=self.model,
                        messages=payload,
                        temperature=self.temperature,
                        max_tokens=self.max_tokens,
                        seed=self.seed if self.seed is not None else openai.omit,
                        extra_body=dict(self.extra_body) or None,
                    )
                    latency_ms = (time.perf_counter() - t0) * 1000.0
                    body = raw.text
                reply = parse_completion(body)
            except openai.APIStatusError as exc:
                failure = status_failure(exc, msgs, include_body=opt_in)
            except openai.APITimeoutError:
                failure = Failure(
                    "timeout", f"no response within {self.timeout:g} s", retryable=True
                )
            except openai.APIConnectionError as exc:
                failure = connection_failure(exc, msgs, include_body=opt_in)
            except MalformedResponseError as exc:
                failure = malformed_failure(exc, body, msgs, include_body=opt_in)
            else:
                return self._generation(reply, msgs, raw.headers, latency_ms, attempt, started)
            if not failure.retryable or attempt == attempts:
                break
            delay = backoff_delay(
                attempt,
                backoff=self.backoff,
                max_backoff=self.max_backoff,
                retry_after=failure.retry_after,
                rng=self._rng,
            )
            _log.info(
                "openai request %s (model %s) attempt %d/%d failed: %s; retrying in %.2f s",
                rid,
                self.model,
                attempt,
                attempts,
                failure.reason,
                delay,
            )
            self._sleep(delay)
        assert failure is not None
        # raised outside the except blocks on purpose: the client's exception carries the
        # response body, which may echo the prompt, and must not ride along as __context__
        raise self._error(rid, failure, attempt)

    def generate_batch(self, prompts: Sequence[Sequence[Message]]) -> list[Generation]:
        """Many prompts, at most ``concurrency`` requests in flight, results in input order.

        The first request that fails for good raises its :class:`GenerationError` (with a note
        giving its index); requests not yet started are cancelled, those in flight finish.
        """
        batch = [_check_messages(p, parameter=f"prompts[{i}]") for i, p in enumerate(prompts)]
        if self.concurrency == 1 or len(batch) <= 1:
            return [self._generate_indexed(i, p) for i, p in enumerate(batch)]
        with ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(batch)), thread_name_prefix="budgetctx-openai"
        ) as pool:
            futures: list[Future[Generation]] = [
                pool.submit(self._generate_indexed, i, p) for i, p in enumerate(batch)
            ]
            wait(futures, return_when=FIRST_EXCEPTION)
            if any(f.done() and f.exception() is not None for f in futures):
                pool.shutdown(wait=True, cancel_futures=True)
                for future in futures:  # the lowest failed index, whatever finished first
                    if not future.cancelled() and (error := future.exception()) is not None:
                        raise error
            return [future.result() for future in futures]

    def _generate_indexed(self, index: int, messages: Sequence[Message]) -> Generation:
        try:
            return self.generate(messages)
        except GenerationError as exc:
            exc.add_note(f"(prompt {index} of the batch)")
            raise

    def _generation(
        self,
        reply: Reply,
        msgs: Sequence[Message],
        headers: Mapping[str, str],
        latency_ms: float,
        attempts: int,
        started: float,
    ) -> Generation:
        usage = reply.usage
        estimated = usage is None
        if usage is None:
            tok = estimator()
            usage = Usage(
                input_tokens=sum(tok.count(m.content) for m in msgs),
                output_tokens=tok.count(reply.text),
            )
        return Generation(
            text=reply.text,
            usage=usage,
            latency_ms=latency_ms,
            model=self.model,
            finish_reason=reply.finish_reason,
            meta={
                "attempts": attempts,
                "response_id": reply.response_id,
                "server_request_id": headers.get("x-request-id"),
                "usage_estimated": estimated,
                "total_ms": (time.perf_counter() - started) * 1000.0,
            },
        )

    def _error(self, rid: str, failure: Failure, attempts: int) -> GenerationError:
        what = f"OpenAI request {rid} (model {self.model!r} at {self._where})"
        tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
        if failure.context_length:
            return ContextLengthError(
                f"{what} failed after {tries}: {failure.reason}: the prompt is longer than the "
                "model's context window. Fix: build the context with a smaller budget, or use "
                "a model with a longer context.",
                request=rid,
                status=failure.status,
            )
        if failure.retryable:
            if failure.status == 429:
                fix = (
                    "the rate limit held; lower concurrency (now "
                    f"{self.concurrency}) or raise max_retries (now {self.max_retries}) and "
                    f"max_backoff (now {self.max_backoff:g} s)."
                )
            elif failure.kind == "timeout":
                fix = (
                    f"raise timeout (now {self.timeout:g} s) for long generations, or check "
                    "that the server is not overloaded."
                )
            elif failure.kind == "malformed":
                fix = (
                    "the server answers 200 with something that is not a chat completion; "
                    "check that base_url is its OpenAI-compatible root (usually ending in /v1)."
                )
            elif failure.kind == "connection":
                fix = f"check that the server is running and reachable at {self._where}."
            else:
                fix = (
                    "the server kept failing; retry later or raise max_retries (now "
                    f"{self.max_retries})."
                )
        else:
            fix = _permanent_fix(failure.status)
        if not self.include_upstream_body and failure.kind != "timeout":
            fix += (
                " The server's own error text is withheld (it may quote the prompt); pass "
                "include_upstream_body=True to see it."
            )
        return GenerationError(
            f"{what} failed after {tries}: {failure.reason}. Fix: {fix}",
            request=rid,
            status=failure.status,
        )


def _permanent_fix(status: int | None) -> str:
    if status == 401:
        return "check the API key (OPENAI_API_KEY, or AZURE_OPENAI_API_KEY for Azure)."
    if status == 403:
        return "check that this key may use this model or deployment."
    if status == 404:
        return "check the model name and base_url (for Azure: azure_deployment and api_version)."
    return (
        "the server rejected the request; check that it accepts max_tokens, temperature, seed "
        "and extra_body as given, and that the prompt fits the model's context window."
    )


def _check_messages(messages: Sequence[Message], *, parameter: str) -> list[Message]:
    # Written out rather than through _validation.check: its message quotes the value, and
    # here the value is prompt text. The message names types only.
    msgs = list(messages) if not isinstance(messages, str | bytes) else None
    got: str | None = None
    if not msgs:
        got = type(messages).__name__ + (" (empty)" if msgs == [] else "")
    else:
        bad = next((m for m in msgs if not isinstance(m, Message)), None)
        if bad is not None:
            got = f"a {type(messages).__name__} holding a {type(bad).__name__}"
    if got is not None or msgs is None:
        raise InvalidParameterError(
            f"The {parameter!r} parameter of OpenAIGenerator.generate must be a non-empty "
            f"sequence of Message. Got {got} instead; pass [Message('user', text)], one "
            "Message(role, content) per turn.",
            parameter=parameter,
            value=got,
        )
    return msgs
