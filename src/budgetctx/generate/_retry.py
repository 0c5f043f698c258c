"""When a failed chat request is tried again, and how long to wait first.

* retried: 408, 409, 429, 5xx (not 501/505), timeouts, connection errors, and a 200 whose body
  is not a chat completion;
* waits: exponential backoff with full jitter, ``backoff * 2**(attempt - 1)`` capped at
  ``max_backoff``; a ``Retry-After`` / ``retry-after-ms`` header is a floor for the wait (the
  wait never exceeds ``max_backoff``);
* not retried: every other 4xx (400, 401, 403, 404, 422, ...).
"""

from __future__ import annotations

import email.utils
import math
import random
from collections.abc import Mapping
from datetime import UTC, datetime

__all__ = ["backoff_delay", "retry_after", "retryable_status"]


def retryable_status(status: int) -> bool:
    """True for the statuses worth another try.

    >>> [s for s in (400, 408, 429, 500, 501, 503) if retryable_status(s)]
    [408, 429, 500, 503]
    """
    return status in (408, 409, 429) or (status >= 500 and status not in (501, 505))


def backoff_delay(
    attempt: int,
    *,
    backoff: float,
    max_backoff: float,
    retry_after: float | None,
    rng: random.Random,
) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based).

    >>> backoff_delay(3, backoff=1.0, max_backoff=60.0, retry_after=None, rng=random.Random(0)) <= 4
    True
    """
    cap = min(max_backoff, backoff * 2.0 ** (attempt - 1))
    delay = rng.uniform(0.0, cap)  # full jitter: spreads out a crowd of retries
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, max_backoff)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after``), if any.

    >>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "1500"})
    (2.0, 1.5)
    >>> retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})  # in the past
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
