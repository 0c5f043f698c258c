"""Evaluation harness: datasets, metrics, resumable sweeps, reports (extra ``eval``)."""

from __future__ import annotations

__all__: list[str] = []
