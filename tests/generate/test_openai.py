"""The ``openai`` backend against a real chat-completions server on loopback."""

from __future__ import annotations

import json
import logging
import random
import socket
import struct
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from budgetctx import ContextLengthError, GenerationError, InvalidParameterError
from budgetctx.generate import Generator, Message, get_generator, request_key
from budgetctx.generate._failure import body_digest
from budgetctx.generate._openai import OpenAIGenerator
from budgetctx.generate._retry import retry_after
from budgetctx.tokenizers import get_tokenizer
from tests.generate._chat_server import ChatServer, Fault

PHI = "Mr. Jonas Pettersson, MRN 448812, admitted with chest pain"
PROMPT = [Message("system", "Summarise the note."), Message("user", PHI)]

_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_VERSION",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


class Sleeps(list[float]):
    """Records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(server: ChatServer, sleeps: Sleeps | None = None, **options: Any) -> OpenAIGenerator:
    options.setdefault("model", "test-model")
    return OpenAIGenerator(
        base_url=server.url,
        _sleep=sleeps if sleeps is not None else Sleeps(),
        _rng=random.Random(0),
        **options,
    )


def rid_of(gen: OpenAIGenerator, messages: list[Message]) -> str:
    return request_key(gen.model, messages, gen.params())


# --- the happy path ---------------------------------------------------------------------------


def test_generate_returns_reply_usage_and_sends_the_params(server: ChatServer) -> None:
    gen = make(server, temperature=0.3, max_tokens=77, seed=7, extra_body={"top_k": 5})
    out = gen.generate(PROMPT)

    assert out.text == "echo: " + PHI
    assert out.model == "test-model"
    assert out.finish_reason == "stop"
    assert out.cached is False
    # the server counts words: 3 system + 9 user in, 10 out
    assert (out.usage.input_tokens, out.usage.output_tokens) == (12, 10)
    assert out.latency_ms > 0
    assert out.meta["attempts"] == 1
    assert out.meta["response_id"] == "chatcmpl-test"
    assert out.meta["server_request_id"] == "req_test_123"
    assert out.meta["usage_estimated"] is False

    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "test-model"
    assert req.body["temperature"] == 0.3
    assert req.body["max_tokens"] == 77
    assert req.body["seed"] == 7
    assert req.body["top_k"] == 5
    assert req.body["messages"] == [m.to_dict() for m in PROMPT]
    # a local server needs no key: a placeholder is sent
    assert req.headers["authorization"] == "Bearer not-needed"
    # our retries, not the client's
    assert req.headers["x-stainless-retry-count"] == "0"


def test_seed_is_left_out_when_none(server: ChatServer) -> None:
    make(server).generate(PROMPT)
    assert "seed" not in server.requests[0].body


def test_name_params_and_protocol(server: ChatServer) -> None:
    gen = make(server, api_key="sk-very-secret", seed=3, extra_body={"top_p": 0.9})
    assert isinstance(gen, Generator)
    assert gen.name == "openai:test-model"
    assert gen.params() == {
        "model": "test-model",
        "temperature": 0.0,
        "max_tokens": 512,
        "seed": 3,
        "extra_body": {"top_p": 0.9},
    }
    assert "sk-very-secret" not in json.dumps(gen.params())
    assert "sk-very-secret" not in repr(gen)
    # every parameter that changes the output changes the cache key
    base = rid_of(gen, PROMPT)
    for change in ({"seed": 4}, {"temperature": 0.5}, {"max_tokens": 9}, {"extra_body": {}}):
        other = make(server, **{"seed": 3, "extra_body": {"top_p": 0.9}, **change})
        assert rid_of(other, PROMPT) != base, change


def test_api_key_from_argument_and_environment(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(server, api_key="sk-arg").generate(PROMPT)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    OpenAIGenerator("test-model").generate(PROMPT)
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer sk-arg",
        "Bearer sk-env",
    ]


def test_content_null_is_empty_text(server: ChatServer) -> None:
    body = {
        "id": "c1",
        "choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0},
    }
    server.push(Fault(body=json.dumps(body).encode()))
    out = make(server).generate(PROMPT)
    assert (out.text, out.finish_reason, out.usage.input_tokens) == ("", "length", 5)


def test_missing_usage_is_counted_with_the_tokenizer(server: ChatServer) -> None:
    server.push(Fault.no_usage())
    out = make(server).generate(PROMPT)
    tok = get_tokenizer("o200k_base")
    assert out.usage.input_tokens == sum(tok.count(m.content) for m in PROMPT)
    assert out.usage.output_tokens == tok.count("echo: " + PHI)
    assert out.meta["usage_estimated"] is True


def test_get_generator_builds_the_backend(server: ChatServer) -> None:
    gen = get_generator("openai:test-model", base_url=server.url)
    assert gen.name == "openai:test-model"
    assert gen.generate([Message("user", "hello")]).text == "echo: hello"
    assert server.requests[0].body["model"] == "test-model"


def test_construction_makes_no_request(server: ChatServer) -> None:
    make(server)
    get_generator("openai:x", base_url=server.url)
    time.sleep(0.05)
    assert server.requests == []


# --- Azure --------------------------------------------------------------------------------------


def test_azure_deployment_path_api_version_and_key(server: ChatServer) -> None:
    gen = OpenAIGenerator(
        "gpt-4o",
        azure_endpoint=server.endpoint,
        azure_deployment="summariser",
        api_version="2024-10-21",
        api_key="az-key",
    )
    assert gen.generate(PROMPT).text == "echo: " + PHI
    (req,) = server.requests
    assert req.path == "/openai/deployments/summariser/chat/completions"
    assert req.query == {"api-version": ["2024-10-21"]}
    assert req.headers["api-key"] == "az-key"
    assert gen.params()["azure_deployment"] == "summariser"
    assert "az-key" not in json.dumps(gen.params())


def test_azure_from_environment_uses_the_model_as_deployment(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.endpoint)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-env")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-06-01")
    get_generator("openai:gpt-4o-mini").generate(PROMPT)
    (req,) = server.requests
    assert req.path == "/openai/deployments/gpt-4o-mini/chat/completions"
    assert req.query == {"api-version": ["2024-06-01"]}
    assert req.headers["api-key"] == "az-env"


# --- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "floor"),
    [({"retry_after": "2"}, 2.0), ({"retry_after_ms": "1500"}, 1.5)],
)
def test_429_honoursretry_after(server: ChatServer, headers: dict[str, str], floor: float) -> None:
    sleeps = Sleeps()
    server.push(Fault.rate_limited(**headers))
    out = make(server, sleeps, backoff=0.01).generate(PROMPT)
    assert out.meta["attempts"] == 2
    assert len(server.requests) == 2
    (slept,) = sleeps
    assert floor <= slept <= floor + 0.01


def test_retry_after_as_http_date(server: ChatServer) -> None:
    sleeps = Sleeps()
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.push(Fault.rate_limited(retry_after=when))
    make(server, sleeps, backoff=0.01).generate(PROMPT)
    (slept,) = sleeps
    assert 27 <= slept <= 30.01


def test_retry_after_never_exceeds_max_backoff(server: ChatServer) -> None:
    sleeps = Sleeps()
    server.push(Fault.rate_limited(retry_after="3600"))
    make(server, sleeps, max_backoff=5.0).generate(PROMPT)
    assert sleeps == [5.0]


def test_retry_after_parsing() -> None:
    assert retry_after({}) is None
    assert retry_after({"retry-after": "0.5"}) == 0.5
    assert retry_after({"retry-after": "-3"}) == 0.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after-ms": "x", "retry-after": "9"}) == 9.0


def test_5xx_are_retried_with_capped_full_jitter_backoff(server: ChatServer) -> None:
    sleeps = Sleeps()
    server.push(Fault.error(500), Fault.error(502), Fault.error(503), Fault.error(504))
    out = make(server, sleeps, backoff=1.0, max_backoff=3.0).generate(PROMPT)
    assert out.meta["attempts"] == 5
    assert len(server.requests) == 5
    assert len(sleeps) == 4
    caps = [1.0, 2.0, 3.0, 3.0]  # backoff * 2**(n-1), capped at max_backoff
    assert all(0.0 <= s <= cap for s, cap in zip(sleeps, caps, strict=True))
    assert len(set(sleeps)) == 4  # jittered, not a fixed schedule


def test_gives_up_after_the_last_retry_with_a_useful_message(server: ChatServer) -> None:
    sleeps = Sleeps()
    server.push(*[Fault.error(503, "overloaded")] * 3)
    gen = make(server, sleeps, max_retries=2)
    with pytest.raises(GenerationError) as info:
        gen.generate(PROMPT)
    err = info.value
    msg = str(err)
    assert len(server.requests) == 3
    assert len(sleeps) == 2
    assert err.status == 503
    # the request id is random (a digest of the prompt would let a reader test guesses)
    assert err.request is not None and len(err.request) == 12
    assert err.request not in rid_of(gen, PROMPT)
    assert err.request in msg
    assert "'test-model'" in msg
    assert "3 attempts" in msg
    assert "HTTP 503" in msg
    assert "error type 'test_error'" in msg and "error code '503'" in msg
    assert "overloaded" not in msg  # the server's text is withheld unless opted in
    assert "include_upstream_body=True" in msg
    assert "max_retries" in msg  # the fix
    assert PHI not in msg
    assert err.__cause__ is None
    assert err.__context__ is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_permanent_statuses_are_not_retried(server: ChatServer, status: int) -> None:
    sleeps = Sleeps()
    server.push(Fault.error(status, "nope"))
    with pytest.raises(GenerationError) as info:
        make(server, sleeps).generate(PROMPT)
    assert len(server.requests) == 1
    assert sleeps == []
    assert info.value.status == status
    assert f"HTTP {status}" in str(info.value)
    assert "1 attempt:" in str(info.value)
    assert "Fix:" in str(info.value)


@pytest.mark.parametrize(
    "message",
    [
        # OpenAI / Azure / vLLM
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130512 tokens. Please reduce the length of the messages.",
        # llama.cpp server
        "the request exceeds the available context size, try increasing it",
    ],
)
def test_an_over_long_prompt_is_a_context_length_error(server: ChatServer, message: str) -> None:
    server.push(Fault.error(400, message))
    with pytest.raises(ContextLengthError) as info:
        make(server).generate(PROMPT)
    assert len(server.requests) == 1  # not retried
    assert info.value.status == 400 and "smaller budget" in str(info.value)


def test_other_400s_are_not_context_length_errors(server: ChatServer) -> None:
    server.push(Fault.error(400, "Invalid value for 'temperature'"))
    with pytest.raises(GenerationError) as info:
        make(server).generate(PROMPT)
    assert not isinstance(info.value, ContextLengthError)


# --- upstream text never reaches errors, logs or the terminal (F4) ------------------------------

MARKER = "ZQX7731-Pettersson-MRN448812"
ECHO_PROMPT = [Message("system", "Summarise the note."), Message("user", f"Note of {MARKER}.")]
_ECHOES = {
    "400 body": Fault(
        status=400,
        body=json.dumps(
            {
                "error": {
                    "message": "Invalid prompt: {tail}",
                    "type": "invalid_request_error",
                    "code": "bad_prompt",
                }
            }
        ).encode(),
    ),
    "422 body": Fault(
        status=422,
        body=json.dumps(
            {"detail": [{"loc": ["body", "messages", 1], "msg": "bad", "input": "{tail}"}]}
        ).encode(),
    ),
    "reason phrase": Fault(status=400, body=b"{}", reason="Rejected {tail}"),
    "malformed header line": Fault(bad_header="X-Echo {tail}"),
    "200 with an error object, no choices": Fault(
        status=200, body=json.dumps({"error": {"message": "failed on {tail}"}}).encode()
    ),
}


def _everything_said(err: BaseException) -> str:
    """The message, notes, chained exceptions and traceback text of ``err``."""
    return "".join(traceback.format_exception(err))


@pytest.mark.parametrize("channel", list(_ECHOES))
def test_upstream_echo_of_the_prompt_reaches_no_error_log_or_terminal(
    server: ChatServer,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    channel: str,
) -> None:
    server.push(*[_ECHOES[channel]] * 2)
    caplog.set_level(logging.DEBUG)  # every logger: ours, openai's, httpx's, httpcore's
    with pytest.raises(GenerationError) as info:
        make(server, max_retries=1).generate(ECHO_PROMPT)
    err = info.value
    # the fault did happen, echoing the marker...
    assert len(server.requests) >= 1
    # ...and nothing of it was kept
    assert MARKER not in _everything_said(err)
    assert MARKER not in caplog.text
    assert all(MARKER not in r.getMessage() for r in caplog.records)
    out, errtext = capfd.readouterr()
    assert MARKER not in out and MARKER not in errtext
    assert err.__context__ is None and err.__cause__ is None
    assert caplog.records  # the capture was live: DEBUG records were seen and cleaned


def test_a_status_failure_is_recorded_as_status_type_code_and_body_hash(
    server: ChatServer,
) -> None:
    fault = _ECHOES["400 body"]
    server.push(fault)
    with pytest.raises(GenerationError) as info:
        make(server).generate(ECHO_PROMPT)
    sent = fault.body.replace(b"{tail}", f"of {MARKER}.".encode())  # type: ignore[union-attr]
    msg = str(info.value)
    assert "HTTP 400 (error type 'invalid_request_error'; error code 'bad_prompt'; " in msg
    assert f"body sha256 {body_digest(sent)})" in msg


def test_a_connection_failure_keeps_the_class_name_only(server: ChatServer) -> None:
    server.push(*[_ECHOES["malformed header line"]] * 2)
    with pytest.raises(GenerationError) as info:
        make(server, max_retries=1).generate(ECHO_PROMPT)
    assert "connection failed (RemoteProtocolError)" in str(info.value)
    assert "illegal header line" not in str(info.value)


def test_unsafe_type_and_code_are_left_out(server: ChatServer) -> None:
    body = {"error": {"type": "x y <script>", "code": "{tail}", "message": "m"}}
    server.push(Fault(status=400, body=json.dumps(body).encode()))
    with pytest.raises(GenerationError) as info:
        make(server).generate(ECHO_PROMPT)
    assert "error type" not in str(info.value) and "error code" not in str(info.value)
    assert MARKER not in str(info.value)


def test_include_upstream_body_opts_in_to_the_servers_text(
    server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.push(
        Fault.error(500, "failed on: {prompt}"),
        Fault(status=400, body=b'{"error": {"message": "bad temperature"}}', reason="Nope"),
    )
    caplog.set_level(logging.DEBUG, logger="budgetctx")
    with pytest.raises(GenerationError) as info:
        make(server, include_upstream_body=True).generate(ECHO_PROMPT)
    msg = str(info.value)
    assert "server said: bad temperature" in msg
    assert "reason phrase: Nope" in msg
    assert "include_upstream_body=True to see it" not in msg
    # what is found verbatim is still cut out (best effort: the reason it is opt-in)
    assert "failed on: [prompt text removed]" in caplog.text
    assert MARKER not in caplog.text


def test_context_length_is_recognised_without_keeping_the_text(server: ChatServer) -> None:
    body = {"error": {"message": "{prompt} is too long", "code": "context_length_exceeded"}}
    server.push(Fault(status=400, body=json.dumps(body).encode()))
    with pytest.raises(ContextLengthError) as info:
        make(server).generate(ECHO_PROMPT)
    assert "longer than the model's context window" in str(info.value)
    assert MARKER not in str(info.value)


def test_timeouts_are_retried(server: ChatServer) -> None:
    server.push(Fault.slow(0.8))
    gen = make(server, timeout=0.3)
    t0 = time.perf_counter()
    out = gen.generate(PROMPT)
    assert out.meta["attempts"] == 2
    assert out.text == "echo: " + PHI
    assert time.perf_counter() - t0 < 0.8  # the slow reply was not waited for


def test_timeouts_exhausted_raise(server: ChatServer) -> None:
    server.push(Fault.slow(0.6), Fault.slow(0.6))
    with pytest.raises(GenerationError) as info:
        make(server, timeout=0.2, max_retries=1).generate(PROMPT)
    msg = str(info.value)
    assert "2 attempts" in msg
    assert "no response within 0.2 s" in msg
    assert "raise timeout" in msg
    assert info.value.status is None


def test_connection_refused_is_retried_then_raised() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = Sleeps()
    gen = OpenAIGenerator("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2, _sleep=sleeps)
    with pytest.raises(GenerationError) as info:
        gen.generate(PROMPT)
    msg = str(info.value)
    assert "3 attempts" in msg
    assert "connection failed" in msg
    assert f"127.0.0.1:{port}" in msg
    assert len(sleeps) == 2


@pytest.mark.parametrize(
    "body",
    [
        b'{"id": "x", "choices": [',
        b"{}",
        b'{"choices": []}',
        b'{"choices": [{"message": null}]}',
        b'{"choices": [{"message": {"content": 42}}]}',
        b"[1, 2]",
        b"<html>bad gateway</html>",
        b'{"error": {"message": "upstream died"}}',
    ],
)
def test_malformed_200_is_retried(server: ChatServer, body: bytes) -> None:
    server.push(Fault.malformed(body))
    out = make(server).generate(PROMPT)
    assert out.meta["attempts"] == 2
    assert out.text == "echo: " + PHI


def test_malformed_200_exhausted_is_a_generation_error(server: ChatServer) -> None:
    body = b'{"object": "chat.completion"}'
    server.push(*[Fault.malformed(body)] * 2)
    with pytest.raises(GenerationError) as info:
        make(server, max_retries=1).generate(PROMPT)
    assert info.value.status == 200
    assert "no 'choices'" in str(info.value)
    assert f"body sha256 {body_digest(body)}" in str(info.value)
    assert "/v1" in str(info.value)  # the fix


# --- batches ------------------------------------------------------------------------------------


def test_batch_keeps_order_and_bounds_concurrency() -> None:
    prompts = [[Message("user", f"p{i}")] for i in range(10)]
    with ChatServer(delay=0.05) as server:
        server.on("p0", Fault.slow(0.25))  # the first prompt finishes last
        out = make(server, concurrency=3).generate_batch(prompts)
    assert [g.text for g in out] == [f"echo: p{i}" for i in range(10)]
    assert len(server.requests) == 10
    assert 2 <= server.max_in_flight <= 3


def test_batch_stops_at_the_first_permanent_failure() -> None:
    prompts = [[Message("user", f"p{i}")] for i in range(12)]
    with ChatServer(delay=0.05) as server:
        server.on("p1", Fault.error(400, "bad"))
        gen = make(server, concurrency=3)
        with pytest.raises(GenerationError) as info:
            gen.generate_batch(prompts)
        time.sleep(0.1)
        n_sent = len(server.requests)
    assert info.value.status == 400
    assert "(prompt 1 of the batch)" in info.value.__notes__
    assert n_sent < len(prompts)  # the rest were cancelled


def test_batch_edge_cases(server: ChatServer) -> None:
    gen = make(server, concurrency=1)
    assert gen.generate_batch([]) == []
    out = gen.generate_batch([[Message("user", "a")], [Message("user", "b")]])
    assert [g.text for g in out] == ["echo: a", "echo: b"]
    with pytest.raises(InvalidParameterError, match=r"prompts\[1\]"):
        gen.generate_batch([[Message("user", "a")], []])
    assert len(server.requests) == 2  # the bad batch sent nothing


# --- bad arguments ------------------------------------------------------------------------------


def test_no_key_and_no_base_url_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="OPENAI_API_KEY") as info:
        OpenAIGenerator("gpt-4o")
    assert "base_url" in str(info.value)
    with pytest.raises(InvalidParameterError, match="OPENAI_API_KEY"):
        get_generator("openai:gpt-4o")


def test_azure_needs_version_endpoint_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidParameterError, match="OPENAI_API_VERSION"):
        OpenAIGenerator("m", azure_endpoint="https://x.openai.azure.com", api_key="k")
    with pytest.raises(InvalidParameterError, match="AZURE_OPENAI_ENDPOINT"):
        OpenAIGenerator("m", azure_deployment="d", api_version="2024-10-21", api_key="k")
    with pytest.raises(InvalidParameterError, match="AZURE_OPENAI_API_KEY"):
        OpenAIGenerator("m", azure_endpoint="https://x.openai.azure.com", api_version="v")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("temperature", -0.1),
        ("temperature", float("nan")),
        ("max_tokens", 0),
        ("max_tokens", 1.5),
        ("seed", "1"),
        ("timeout", 0),
        ("max_retries", -1),
        ("backoff", -1.0),
        ("max_backoff", -1.0),
        ("concurrency", 0),
        ("extra_body", {"x": object()}),
        ("model", ""),
    ],
)
def test_bad_options_are_refused(option: str, value: Any) -> None:
    options: dict[str, Any] = {"model": "m", option: value}
    with pytest.raises(InvalidParameterError) as info:
        OpenAIGenerator(base_url="http://127.0.0.1:9/v1", **options)
    assert info.value.parameter == option


@pytest.mark.parametrize("messages", [[], "hello", [{"role": "user", "content": "x"}]])
def test_bad_messages_are_refused(server: ChatServer, messages: Any) -> None:
    with pytest.raises(InvalidParameterError, match="Message"):
        make(server).generate(messages)
    assert server.requests == []


def test_the_fake_server_takes_a_client_reset_quietly(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client that rejects a response closes its connection with a reset; the handler thread,
    # waiting for the next request on it, must not report it (socketserver prints a traceback).
    errors: list[object] = []
    done = threading.Event()
    monkeypatch.setattr(type(server._httpd), "handle_error", lambda *a: errors.append(a))
    shutdown_request = type(server._httpd).shutdown_request

    def finished(self: Any, request: socket.socket) -> None:
        shutdown_request(self, request)
        done.set()

    monkeypatch.setattr(type(server._httpd), "shutdown_request", finished)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    host, port = server._httpd.server_address[:2]
    with socket.create_connection((str(host), int(port))) as sock:
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        reply = b""
        while not reply.endswith(b"}"):  # the whole reply: the server now only reads
            reply += sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset
    assert done.wait(5)
    assert errors == []
