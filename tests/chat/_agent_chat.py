"""A synthetic agent transcript, as agents send them: per turn a user question, an assistant
tool call, a JSON tool result and the assistant's answer. Shared by the tests and
``benchmarks/bench_messages.py``; deterministic for a seed."""

from __future__ import annotations

import json
import random
from typing import Any

__all__ = ["SYSTEM", "TOOLS", "agent_transcript"]

SYSTEM = "You are a ward assistant. Use the lab tool; answer in one or two sentences."
_TESTS = ("potassium", "sodium", "creatinine", "hemoglobin", "glucose", "troponin")
_UNITS = {"potassium": "mmol/L", "sodium": "mmol/L", "creatinine": "mg/dL"}
#: The agent's tool definitions (OpenAI ``tools=``), sent unchanged with every request.
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_labs",
            "description": "The last results of one laboratory test for the patient in a bed, "
            "newest last, with units and the lab's normal/low/high flag.",
            "parameters": {
                "type": "object",
                "properties": {
                    "bed": {"type": "integer", "description": "Bed number on the ward, 1-40."},
                    "test": {"type": "string", "enum": list(_TESTS)},
                    "last": {"type": "integer", "description": "How many results, newest last."},
                },
                "required": ["bed", "test"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "page_clinician",
            "description": "Page the clinician on call about a patient; use only for a result "
            "flagged high or low that the user asks to escalate.",
            "parameters": {
                "type": "object",
                "properties": {
                    "bed": {"type": "integer"},
                    "message": {"type": "string", "description": "One sentence, no PHI."},
                },
                "required": ["bed", "message"],
            },
        },
    },
]


def agent_transcript(turns: int = 60, *, seed: int = 0, rows: int = 1) -> list[dict[str, Any]]:
    """``1 + 4 * turns`` messages; the last turn ends on the user's question.

    >>> msgs = agent_transcript(3)
    >>> " ".join(m["role"][0] for m in msgs)
    's u a t a u a t a u'
    """
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for t in range(turns):
        test = rng.choice(_TESTS)
        bed = rng.randint(1, 40)
        messages.append(
            {"role": "user", "content": f"What is the {test} trend for the patient in bed {bed}?"}
        )
        if t == turns - 1:
            break
        call_id = f"call_{t:03d}"
        args = json.dumps({"bed": bed, "test": test, "last": rows})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_labs", "arguments": args},
                    }
                ],
            }
        )
        results = [
            {
                "time": f"2026-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00",
                "value": round(rng.uniform(1, 10), 1),
                "unit": _UNITS.get(test, "g/dL"),
                "flag": rng.choice(["normal", "low", "high"]),
            }
            for _ in range(rows)
        ]
        tool = {"bed": bed, "test": test, "results": results}
        messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(tool)})
        first, last = results[0]["value"], results[-1]["value"]
        direction = "rising" if last > first else "falling"
        messages.append(
            {
                "role": "assistant",
                "content": f"The {test} in bed {bed} is {direction}, from {first} to {last}. "
                f"The latest value is flagged {results[-1]['flag']}.",
            }
        )
    return messages
