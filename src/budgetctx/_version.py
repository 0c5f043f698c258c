"""The package version, importable without importing the whole package."""

from __future__ import annotations

__version__ = "0.2.0"
