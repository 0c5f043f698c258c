"""Set objectives: relevance (modular), facility-location coverage, log-det diversity, RCD."""

from __future__ import annotations

from budgetctx.objectives._objectives import (
    FacilityLocation,
    LogDet,
    Objective,
    RCDObjective,
    Relevance,
)

__all__ = ["FacilityLocation", "LogDet", "Objective", "RCDObjective", "Relevance"]
