"""Load on ``budgetctx serve``: requests/s and p50/p99 latency of the proxy against calling the
upstream directly, for ~2k- and ~16k-token chat prompts condensed to a budget.

Three processes on loopback: a canned OpenAI-compatible upstream (Starlette on uvicorn,
this file with ``--role upstream``), ``budgetctx serve`` in front of it, and this load
generator (asyncio + httpx; each ``--clients`` level in turn, by default 1 then 8 concurrent
clients). The upstream recounts every prompt the proxy forwards with
``count_message_tokens`` and counts those over the model's budget; the run reports them with
the HTTP errors (both must be 0). "Added" is the proxy's latency minus the
direct call's at the same concurrency: what condensing and forwarding cost a client.
Informational only: nothing is asserted; run it on a quiet machine (the load average is
printed) and compare figures from one machine only.

    .venv/bin/python benchmarks/bench_serve.py
    .venv/bin/python benchmarks/bench_serve.py --clients 1 16 --requests 400 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
ENV_DATA = "BUDGETCTX_SHARED_DATA"
#: prompt size (o200k_base tokens of the long message) -> the proxy's budget for it
SCENARIOS = {"2k": (2048, 1024), "16k": (16384, 4096)}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _texts() -> list[str]:
    data = Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    path = data / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line)["text"] for line in fh if line.strip()]
    from budgetctx.data import sample_note

    return [sample_note()]


def make_prompts(tokens: int, n: int) -> list[list[dict[str, str]]]:
    """``n`` different chat prompts whose long message has about ``tokens`` tokens."""
    from budgetctx import get_tokenizer

    tok = get_tokenizer("o200k_base")
    texts = _texts()
    prompts = []
    for k in range(n):
        lines: list[str] = []
        used, i = 0, k
        while used < tokens:
            for line in texts[i % len(texts)].splitlines():
                cost = tok.count(line) + 1
                if used + cost > tokens:
                    used = tokens
                    break
                lines.append(line)
                used += cost
            i += 1
        prompts.append(
            [
                {"role": "system", "content": "You summarise clinical notes for a physician."},
                {"role": "user", "content": "\n".join(lines)},
                {"role": "user", "content": "What is the discharge plan?"},
            ]
        )
    return prompts


# --- the upstream -------------------------------------------------------------------------


def run_upstream(port: int, budgets: dict[str, int]) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from budgetctx import count_message_tokens

    stats = {"requests": 0, "checked": 0, "over_budget": 0, "max_ratio": 0.0}

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        stats["requests"] += 1
        budget = budgets.get(body["model"])
        if budget is not None:  # forwarded by the proxy: must be within its budget
            n = count_message_tokens(body["messages"], tokenizer="o200k_base")
            stats["checked"] += 1
            stats["over_budget"] += n > budget
            stats["max_ratio"] = max(stats["max_ratio"], n / budget)
        return JSONResponse(
            {
                "id": "bench",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Home with aspirin."},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 4, "total_tokens": 4},
            }
        )

    async def get_stats(request: Request) -> JSONResponse:
        return JSONResponse(stats)

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/stats", get_stats),
        ]
    )

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# --- the load generator -------------------------------------------------------------------


async def _load(
    url: str, model: str, prompts: list[list[dict[str, str]]], clients: int, total: int
) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[int] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:

        async def worker() -> None:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                body = {"model": model, "messages": prompts[i % len(prompts)]}
                start = time.perf_counter()
                try:
                    r = await client.post(f"{url}/chat/completions", json=body)
                    status = r.status_code
                except httpx.HTTPError:
                    status = 0
                latencies.append(time.perf_counter() - start)
                if status != 200:
                    errors.append(status)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - start
    lat = sorted(latencies)
    return {
        "requests": total,
        "errors": len(errors),
        "error_statuses": sorted(set(errors)),
        "rps": total / wall,
        "p50_ms": 1000 * statistics.median(lat),
        "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
    }


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{url}: the server exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not start within 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=("bench", "upstream"), default="bench")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--budgets", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--requests", type=int, default=160, help="per 2k run; 16k runs 1/4")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.role == "upstream":
        run_upstream(args.port, json.loads(args.budgets))
        return

    budgets = {f"bench-{name}": budget for name, (_, budget) in SCENARIOS.items()}
    up_port, proxy_port = _port(), _port()
    upstream_url = f"http://127.0.0.1:{up_port}/v1"
    config = "".join(
        f'[models."{model}"]\ntokenizer = "o200k_base"\nbudget = {budget}\n\n'
        for model, budget in budgets.items()
    )
    config += f'[upstream]\nbase_url = "{upstream_url}"\ntimeout_s = 120\n'
    config += "[limits]\nselection_timeout_s = 120\n"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "serve.toml"
        cfg.write_text(config, encoding="utf-8")
        try:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        __file__,
                        "--role",
                        "upstream",
                        "--port",
                        str(up_port),
                        "--budgets",
                        json.dumps(budgets),
                    ],
                    env=env,
                )
            )
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        "from budgetctx.cli import main; main()",
                        "serve",
                        "--port",
                        str(proxy_port),
                        "--config",
                        str(cfg),
                    ],
                    env=env,
                    stderr=subprocess.DEVNULL,
                )
            )
            _wait(f"http://127.0.0.1:{up_port}/stats", procs[0])
            _wait(f"http://127.0.0.1:{proxy_port}/healthz", procs[1])
            results = _run_all(args, upstream_url, f"http://127.0.0.1:{proxy_port}/v1")
            stats = httpx.get(f"http://127.0.0.1:{up_port}/stats", timeout=10).json()
        finally:
            for p in procs:
                p.terminate()
                p.wait(timeout=10)
    _print(results, stats, args)
    if args.json is not None:
        args.json.write_text(json.dumps({"results": results, "upstream": stats}, indent=2))


def _run_all(args: argparse.Namespace, direct: str, proxy: str) -> list[dict[str, Any]]:
    rows = []
    for name, (tokens, budget) in SCENARIOS.items():
        prompts = make_prompts(tokens, 8)
        model = f"bench-{name}"
        # warm both paths (imports, tokenizer, connection pools) before timing
        asyncio.run(_load(proxy, model, prompts, 2, 4))
        asyncio.run(_load(direct, "direct", prompts, 2, 4))
        for clients in args.clients:
            total = args.requests if name == "2k" else max(args.requests // 4, clients)
            total = max(total // 4, clients) if clients == 1 else total
            for path, url, m in (("direct", direct, "direct"), ("proxy", proxy, model)):
                row = asyncio.run(_load(url, m, prompts, clients, total))
                rows.append(
                    {"prompt": name, "budget": budget, "clients": clients, "path": path, **row}
                )
    return rows


def _print(rows: list[dict[str, Any]], stats: dict[str, Any], args: argparse.Namespace) -> None:
    print(
        f"# bench_serve: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'prompt':>6} {'budget':>6} {'clients':>7} {'path':>6} {'req':>5} {'err':>4} "
        f"{'req/s':>7} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'added p50':>10} {'added p99':>10}"
    )
    direct = {(r["prompt"], r["clients"]): r for r in rows if r["path"] == "direct"}
    for r in rows:
        d = direct[r["prompt"], r["clients"]]
        added = (
            (f"{r['p50_ms'] - d['p50_ms']:10.1f} {r['p99_ms'] - d['p99_ms']:10.1f}")
            if r["path"] == "proxy"
            else f"{'':>10} {'':>10}"
        )
        print(
            f"{r['prompt']:>6} {r['budget']:>6} {r['clients']:>7} {r['path']:>6} "
            f"{r['requests']:>5} "
            f"{r['errors']:>4} {r['rps']:7.1f} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} {added}"
        )
    print(
        f"forwarded prompts checked by the upstream: {stats['checked']}, over budget: "
        f"{stats['over_budget']}, largest prompt/budget: {stats['max_ratio']:.3f}"
    )


if __name__ == "__main__":
    main()
