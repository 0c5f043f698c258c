"""Where requests go: the OpenAI or Azure OpenAI client built from arguments and environment.

Plain OpenAI-compatible servers read ``base_url`` / ``OPENAI_BASE_URL`` and ``api_key`` /
``OPENAI_API_KEY`` (a local server needs no key); Azure reads ``azure_endpoint`` /
``AZURE_OPENAI_ENDPOINT``, ``api_version`` / ``OPENAI_API_VERSION`` and ``api_key`` /
``AZURE_OPENAI_API_KEY`` (or ``AZURE_OPENAI_AD_TOKEN``). The client's own retries are off:
retrying is ours (see ``_retry``).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import openai

from budgetctx._errors import InvalidParameterError

__all__ = ["make_client", "origin"]

# Placeholder key for local servers (vLLM, Ollama, llama.cpp) that check no key; the client
# refuses to start without one.
_NO_KEY = "not-needed"


def origin(url: str) -> str:
    """scheme://host[:port]/path without credentials, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def make_client(
    *,
    base_url: str | None,
    api_key: str | None,
    api_version: str | None,
    azure_endpoint: str | None,
    azure_deployment: str | None,
    timeout: float,
) -> tuple[openai.OpenAI, str, str | None]:
    """The client, its URL for messages (no credentials) and the Azure deployment, if any.

    >>> make_client(base_url="http://127.0.0.1:8000/v1", api_key=None, api_version=None,
    ...             azure_endpoint=None, azure_deployment=None, timeout=5.0)[1:]
    ('http://127.0.0.1:8000/v1', None)
    """
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
        return client, origin(str(client.base_url)), None

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
    return client, origin(str(client.base_url)), azure_deployment
