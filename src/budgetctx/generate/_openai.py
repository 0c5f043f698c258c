"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint.

OpenAI, Azure OpenAI (deployment + ``api-version``), vLLM, Ollama and the llama.cpp server all
speak ``POST .../chat/completions``; this backend drives them through the official ``openai``
client with the client's own retries switched off, so that retrying is ours, explicit and
tested:

* retried: 408, 409, 429, 5xx (not 501/505), timeouts, connection errors, and a 200 whose body
  is not a chat completion (truncated JSON, no ``choices``);
* waits: exponential backoff with full jitter, ``backoff * 2**(attempt - 1)`` capped at
  ``max_backoff``; a ``Retry-After`` / ``retry-after-ms`` header is a floor for the wait (the
  wait never exceeds ``max_backoff``);
* not retried: every other 4xx (400, 401, 403, 404, 422, ...), raised at once.

A request that fails for good raises :class:`~budgetctx.GenerationError` naming the request
(the first 12 hex digits of its :func:`request_key`), the model, the attempts and the last
status. Prompt text never appears in errors or logs: clinical notes are PHI, and an error body
that echoes the prompt is cut out.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import math
import os
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import urlsplit

import openai

from budgetctx._errors import ContextLengthError, GenerationError, InvalidParameterError
from budgetctx.generate._base import Generation, Message, Usage, request_key

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

    from budgetctx.tokenizers import Tokenizer

__all__ = ["OpenAIGenerator"]

_log = logging.getLogger(__name__)

# Placeholder key for local servers (vLLM, Ollama, llama.cpp) that check no key; the client
# refuses to start without one.
_NO_KEY = "not-needed"
_REASON_CHARS = 200


class OpenAIGenerator:
    """Chat completions from an OpenAI-compatible endpoint.

    The URL, key and (for Azure) endpoint and API version come from the arguments or from the
    environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``; ``AZURE_OPENAI_ENDPOINT``,
    ``AZURE_OPENAI_API_KEY``, ``OPENAI_API_VERSION``. Azure is used when ``azure_endpoint``,
    ``azure_deployment`` or ``api_version`` is given, or when only ``AZURE_OPENAI_ENDPOINT`` is
    set. A local server needs no key. Nothing is sent until :meth:`generate`.

    >>> gen = OpenAIGenerator("llama3", base_url="http://127.0.0.1:8000/v1", seed=1)
    >>> gen.name, gen.params()["seed"]
    ('openai:llama3', 1)
    >>> gen.generate([Message("user", "Summarise: ...")]).text  # doctest: +SKIP
    'The patient ...'
    """

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
        _sleep: Callable[[float], None] = time.sleep,
        _rng: random.Random | None = None,
    ) -> None:
        _check_options(
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            concurrency=concurrency,
        )
        self.model = model
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.seed = seed
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.concurrency = concurrency
        self.extra_body = _check_extra_body(extra_body)
        self._sleep = _sleep
        self._rng = _rng if _rng is not None else random.Random()
        self._client, self._where, self.azure_deployment = _make_client(
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

    def generate(self, messages: Sequence[Message]) -> Generation:
        """One chat completion, retried as the module docstring says."""
        msgs = _check_messages(messages, parameter="messages")
        rid = request_key(self.model, msgs, self.params())[:12]
        # Message.to_dict() is exactly the wire shape; the client types it as TypedDicts
        payload = cast("list[ChatCompletionMessageParam]", [m.to_dict() for m in msgs])
        attempts = self.max_retries + 1
        started = time.perf_counter()
        failure: _Failure | None = None
        for attempt in range(1, attempts + 1):
            t0 = time.perf_counter()
            try:
                raw = self._client.chat.completions.with_raw_response.create(
                    model=self.model,
                    messages=payload,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    seed=self.seed if self.seed is not None else openai.omit,
                    extra_body=dict(self.extra_body) or None,
                )
                latency_ms = (time.perf_counter() - t0) * 1000.0
                reply = _parse_completion(raw.text)
            except openai.APIStatusError as exc:
                failure = _status_failure(exc, msgs)
            except openai.APITimeoutError:
                failure = _Failure(
                    "timeout", f"no response within {self.timeout:g} s", retryable=True
                )
            except openai.APIConnectionError as exc:
                failure = _Failure("connection", _connection_reason(exc), retryable=True)
            except _MalformedResponseError as exc:
                reason = f"HTTP 200 but {_redact(str(exc), msgs)}"
                failure = _Failure("malformed", reason, retryable=True, status=200)
            else:
                return self._generation(reply, msgs, raw.headers, latency_ms, attempt, started)
            if not failure.retryable or attempt == attempts:
                break
            delay = self._delay(attempt, failure.retry_after)
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

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        cap = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        delay = self._rng.uniform(0.0, cap)  # full jitter: spreads out a crowd of retries
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.max_backoff)

    def _generation(
        self,
        reply: _Reply,
        msgs: Sequence[Message],
        headers: Mapping[str, str],
        latency_ms: float,
        attempts: int,
        started: float,
    ) -> Generation:
        usage = reply.usage
        estimated = usage is None
        if usage is None:
            tok = _estimator()
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

    def _error(self, rid: str, failure: _Failure, attempts: int) -> GenerationError:
        what = f"OpenAI request {rid} (model {self.model!r} at {self._where})"
        tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
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
        # OpenAI/Azure ("maximum context length", context_length_exceeded), vLLM, llama.cpp
        # ("exceeds the available context size") refuse an over-long prompt with a 400.
        too_long = failure.status == 400 and _CONTEXT_LENGTH.search(failure.reason) is not None
        error = ContextLengthError if too_long else GenerationError
        if too_long:
            fix = "build the context with a smaller budget, or use a model with a longer context."
        return error(
            f"{what} failed after {tries}: {failure.reason}. Fix: {fix}",
            request=rid,
            status=failure.status,
        )


_CONTEXT_LENGTH = re.compile(
    r"context[ _-]?(?:length|size|window)|maximum context|too many tokens", re.IGNORECASE
)


@dataclass(frozen=True)
class _Failure:
    kind: Literal["status", "timeout", "connection", "malformed"]
    reason: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class _Reply:
    text: str
    usage: Usage | None
    finish_reason: str | None
    response_id: str | None


class _MalformedResponseError(Exception):
    """A 200 whose body is not a chat completion."""


def _parse_completion(body: str) -> _Reply:
    try:
        data = json.loads(body)
    except ValueError:
        raise _MalformedResponseError("the body is not JSON") from None
    if not isinstance(data, dict):
        raise _MalformedResponseError(f"the body is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        extra = ""
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            extra = f" (error: {err['message']})"
        raise _MalformedResponseError(f"the body has no 'choices'{extra}")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise _MalformedResponseError("choices[0] has no 'message'")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _MalformedResponseError("choices[0].message.content is not a string")
    finish = first.get("finish_reason")
    rid = data.get("id")
    return _Reply(
        text=content or "",
        usage=_parse_usage(data.get("usage")),
        finish_reason=finish if isinstance(finish, str) else None,
        response_id=rid if isinstance(rid, str) else None,
    )


def _parse_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    n_in, n_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(n_in) is not int or type(n_out) is not int or n_in < 0 or n_out < 0:
        return None
    return Usage(input_tokens=n_in, output_tokens=n_out)


@functools.cache
def _estimator() -> Tokenizer:
    from budgetctx.tokenizers import get_tokenizer

    return get_tokenizer("o200k_base")


def _retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or (status >= 500 and status not in (501, 505))


def _status_failure(exc: openai.APIStatusError, msgs: Sequence[Message]) -> _Failure:
    status = exc.status_code
    phrase = exc.response.reason_phrase or ""
    detail = _redact(_error_detail(exc.body), msgs)
    reason = (
        f"HTTP {status}" + (f" {phrase}" if phrase else "") + (f" ({detail})" if detail else "")
    )
    retryable = _retryable_status(status)
    return _Failure(
        "status",
        reason,
        retryable=retryable,
        status=status,
        retry_after=_retry_after(exc.response.headers) if retryable else None,
    )


def _error_detail(body: object) -> str:
    """The server's own short error text; never a field that may echo the request."""
    text = ""
    if isinstance(body, dict):
        if isinstance(body.get("message"), str):
            text = body["message"]
        elif isinstance(body.get("error"), str):
            text = body["error"]
        elif isinstance(body.get("detail"), str):
            text = body["detail"]
        elif isinstance(body.get("detail"), list):  # FastAPI/pydantic: keep loc + msg, no input
            parts = []
            for item in body["detail"]:
                if isinstance(item, dict):
                    loc = ".".join(str(x) for x in item.get("loc", ()))
                    parts.append(f"{loc}: {item.get('msg', '')}".strip(": "))
            text = "; ".join(parts)
    elif isinstance(body, str):
        text = body
    text = " ".join(text.split())
    if len(text) > _REASON_CHARS:
        text = text[: _REASON_CHARS - 3] + "..."
    return text


def _redact(text: str, msgs: Sequence[Message]) -> str:
    """Cut prompt text out of a server message (some servers echo the input in errors)."""
    pieces: set[str] = set()
    for m in msgs:
        content = " ".join(m.content.split())
        if len(content) >= 8:
            pieces.add(content)
            pieces.add(content[:40])
        for line in m.content.splitlines():
            line = " ".join(line.split())
            if len(line) >= 12:
                pieces.add(line)
                pieces.add(line[:40])
    for piece in sorted(pieces, key=len, reverse=True):
        text = text.replace(piece, "[prompt text removed]")
    return text


def _connection_reason(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    if cause is not None and str(cause):
        return f"connection failed ({type(cause).__name__}: {str(cause)[:_REASON_CHARS]})"
    return "connection failed"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after``), if any.

    >>> _retry_after({"retry-after": "2"}), _retry_after({"retry-after-ms": "1500"})
    (2.0, 1.5)
    >>> _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})  # in the past
    0.0
    """
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        value = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, value) if math.isfinite(value) else None


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
    msgs = list(messages) if not isinstance(messages, (str, bytes)) else None
    if not msgs:
        raise InvalidParameterError(
            f"{parameter} must be a non-empty sequence of Message; got {type(messages).__name__}"
            f"{' (empty)' if msgs == [] else ''}. Pass [Message('user', text)].",
            parameter=parameter,
            value=None,
        )
    for m in msgs:
        if not isinstance(m, Message):
            raise InvalidParameterError(
                f"{parameter} must hold Message objects; got a {type(m).__name__}. "
                "Wrap each turn as Message(role, content).",
                parameter=parameter,
                value=type(m).__name__,
            )
    return msgs


def _check_options(**opts: Any) -> None:
    def bad(name: str, rule: str) -> InvalidParameterError:
        value = opts[name]
        return InvalidParameterError(
            f"The {name!r} parameter of OpenAIGenerator must be {rule}. Got {value!r} instead.",
            parameter=name,
            value=value,
        )

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def is_num(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    if not isinstance(opts["model"], str) or not opts["model"].strip():
        raise bad("model", "a non-empty model name such as 'gpt-4o'")
    if not is_num(opts["temperature"]) or opts["temperature"] < 0:
        raise bad("temperature", "a float >= 0")
    if not is_int(opts["max_tokens"]) or opts["max_tokens"] < 1:
        raise bad("max_tokens", "an int >= 1")
    if opts["seed"] is not None and not is_int(opts["seed"]):
        raise bad("seed", "an int or None")
    if not is_num(opts["timeout"]) or opts["timeout"] <= 0:
        raise bad("timeout", "a number of seconds > 0")
    if not is_int(opts["max_retries"]) or opts["max_retries"] < 0:
        raise bad("max_retries", "an int >= 0")
    if not is_num(opts["backoff"]) or opts["backoff"] < 0:
        raise bad("backoff", "a number of seconds >= 0")
    if not is_num(opts["max_backoff"]) or opts["max_backoff"] < 0:
        raise bad("max_backoff", "a number of seconds >= 0")
    if not is_int(opts["concurrency"]) or opts["concurrency"] < 1:
        raise bad("concurrency", "an int >= 1")


def _check_extra_body(extra_body: Mapping[str, Any] | None) -> dict[str, Any]:
    if extra_body is None:
        return {}
    if not isinstance(extra_body, Mapping):
        raise InvalidParameterError(
            "The 'extra_body' parameter of OpenAIGenerator must be a mapping. "
            f"Got {type(extra_body).__name__} instead.",
            parameter="extra_body",
            value=extra_body,
        )
    body = dict(extra_body)
    try:  # it is part of the cache key, which is JSON
        json.dumps(body, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The 'extra_body' parameter of OpenAIGenerator must be JSON-serialisable ({exc}). "
            "Use only str, numbers, bools, None, lists and dicts.",
            parameter="extra_body",
            value=extra_body,
        ) from None
    return body


def _origin(url: str) -> str:
    """scheme://host[:port]/path without credentials, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def _make_client(
    *,
    base_url: str | None,
    api_key: str | None,
    api_version: str | None,
    azure_endpoint: str | None,
    azure_deployment: str | None,
    timeout: float,
) -> tuple[openai.OpenAI, str, str | None]:
    env = os.environ
    azure = (
        azure_endpoint is not None
        or azure_deployment is not None
        or api_version is not None
        or (
            base_url is None
            and api_key is None
            and "AZURE_OPENAI_ENDPOINT" in env
            and "OPENAI_BASE_URL" not in env
            and "OPENAI_API_KEY" not in env
        )
    )
    if not azure:
        url = base_url or env.get("OPENAI_BASE_URL") or None
        key = api_key or env.get("OPENAI_API_KEY") or None
        if key is None:
            if url is None:
                raise InvalidParameterError(
                    "No OpenAI API key and no base_url. Set OPENAI_API_KEY (or pass api_key=), "
                    "or pass base_url= (or set OPENAI_BASE_URL) for a local server such as "
                    "vLLM, Ollama or llama.cpp, which needs no key.",
                    parameter="api_key",
                    value=None,
                )
            key = _NO_KEY
        client = openai.OpenAI(base_url=url, api_key=key, timeout=timeout, max_retries=0)
        return client, _origin(str(client.base_url)), None

    endpoint = azure_endpoint or (None if base_url else env.get("AZURE_OPENAI_ENDPOINT"))
    if endpoint and base_url:
        raise InvalidParameterError(
            "Pass either azure_endpoint or base_url for Azure OpenAI, not both. Drop base_url.",
            parameter="base_url",
            value=base_url,
        )
    if not endpoint and not base_url:
        raise InvalidParameterError(
            "Azure OpenAI needs an endpoint. Pass azure_endpoint='https://<resource>.openai."
            "azure.com' or set AZURE_OPENAI_ENDPOINT.",
            parameter="azure_endpoint",
            value=None,
        )
    version = api_version or env.get("OPENAI_API_VERSION") or None
    if version is None:
        raise InvalidParameterError(
            "Azure OpenAI needs an API version. Pass api_version='2024-10-21' (or the version "
            "your resource supports) or set OPENAI_API_VERSION.",
            parameter="api_version",
            value=None,
        )
    key = api_key or env.get("AZURE_OPENAI_API_KEY") or None
    if key is None and "AZURE_OPENAI_AD_TOKEN" not in env:
        raise InvalidParameterError(
            "No Azure OpenAI API key. Set AZURE_OPENAI_API_KEY (or AZURE_OPENAI_AD_TOKEN), or "
            "pass api_key=.",
            parameter="api_key",
            value=None,
        )
    # two calls because the client's overloads take either an endpoint or a base URL
    if endpoint:
        client = openai.AzureOpenAI(
            azure_endpoint=endpoint,
            azure_deployment=azure_deployment,
            api_version=version,
            api_key=key,
            timeout=timeout,
            max_retries=0,
        )
    else:
        assert base_url is not None
        client = openai.AzureOpenAI(
            base_url=base_url, api_version=version, api_key=key, timeout=timeout, max_retries=0
        )
    return client, _origin(str(client.base_url)), azure_deployment
