"""The adapter tests run offline: Haystack's telemetry is off before Haystack is imported."""

from __future__ import annotations

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"
