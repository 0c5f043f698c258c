"""A 5 MB document: it works, and peak memory stays under 1 GiB (no dense n x n matrix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, resource, sys
from budgetctx import build_context, get_tokenizer
from budgetctx.representations import DENSE_LIMIT
docs = [json.loads(l)["input"] for l in open(sys.argv[1], encoding="utf-8")]
text, i = "", 0
while len(text) < 5_000_000:
    text += docs[i % len(docs)] + "\n\n"
    i += 1
text = text[:5_000_000]
ctx = build_context(text, 2048, selector=sys.argv[2])


def peak_mib():
    # VmHWM is this process's own peak. ru_maxrss is not: Linux carries the forking parent's
    # peak across exec, so a pytest process holding models would be charged to the child.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


assert ctx.n_units > DENSE_LIMIT, ctx.n_units
print(json.dumps({
    "units": ctx.n_units,
    "tokens_used": ctx.tokens_used,
    "recount": get_tokenizer("o200k_base").count(ctx.text),
    "maxrss_mib": peak_mib(),
    "timings": ctx.timings_ms,
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("selector", ["rcd"])
def test_five_megabyte_document(shared_data: Path, selector: str) -> None:
    source = shared_data / "leval" / "meeting_summ.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(source), selector],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tokens_used"] == out["recount"] <= 2048
    assert out["maxrss_mib"] < 1024, out
