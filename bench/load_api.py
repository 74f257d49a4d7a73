"""Load test of the HTTP API: 50 concurrent clients on loopback for 60 s, half asking (POST /v1/ask,
extractive mode) and half searching (GET /v1/search), against `biocite serve` started as a subprocess.

Prints per endpoint: completed requests, throughput, p50/p99 latency of the 200s and of the 429s, the count
of each status code (anything other than 200 and 429 is an error), the server's RSS at start / middle / end,
the queue state after the run, and the load average (the box is shared: read timings beside it).
A client that gets 429 waits min(Retry-After, --max-backoff) s before its next request, as a polite client
would; the answer queue holds one running request and `server.queue_size` waiting ones.

    python bench/load_api.py [--clients 50] [--seconds 60] [--set index.dir=DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import psutil

from biocite.pubmedqa import read_items

REPO = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, overrides: list[str], log: Path) -> subprocess.Popen:
    args = [sys.executable, "-m", "biocite", "serve", "--host", "127.0.0.1", "--port", str(port)]
    for item in overrides:
        args += ["--set", item]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_WAIT_POLICY": "PASSIVE",
        "TOKENIZERS_PARALLELISM": "false",
    }
    env.pop("BIOCITE_API_TOKEN", None)
    return subprocess.Popen(args, cwd=REPO, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def wait_healthy(base: str, proc: subprocess.Popen, timeout: float = 300) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}; see its log")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("the server did not become healthy")


class Results:
    def __init__(self) -> None:
        self.codes: dict[str, Counter[str]] = defaultdict(Counter)
        self.latency: dict[tuple[str, str], list[float]] = defaultdict(list)

    def add(self, endpoint: str, code: str, seconds: float) -> None:
        self.codes[endpoint][code] += 1
        self.latency[endpoint, code].append(seconds)


async def client(
    http: httpx.AsyncClient, endpoint: str, questions: list[str], offset: int, deadline: float,
    results: Results, max_backoff: float,
) -> None:  # fmt: skip
    i = offset
    while time.monotonic() < deadline:
        question = questions[i % len(questions)]
        i += 1
        started = time.monotonic()
        try:
            if endpoint == "ask":
                r = await http.post("/v1/ask", json={"question": question, "mode": "extractive"})
            else:
                r = await http.get("/v1/search", params={"q": question, "k": 10})
            code = str(r.status_code)
        except httpx.HTTPError as exc:
            r, code = None, f"error:{type(exc).__name__}"
        results.add(endpoint, code, time.monotonic() - started)
        if r is not None and r.status_code == 429:
            await asyncio.sleep(min(float(r.headers.get("retry-after", "1")), max_backoff))


async def sample_rss(proc: psutil.Process, out: list[tuple[float, float]], stop: asyncio.Event) -> None:
    t0 = time.monotonic()
    while not stop.is_set():
        out.append((time.monotonic() - t0, proc.memory_info().rss / 2**20))
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass


async def run_load(
    base: str, pid: int, clients: int, seconds: float, max_backoff: float, only: str | None
) -> dict:
    questions = [item.question for item in read_items()]
    results, rss, stop = Results(), [], asyncio.Event()
    limits = httpx.Limits(max_connections=clients + 5, max_keepalive_connections=clients + 5)
    async with httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as http:
        sampler = asyncio.create_task(sample_rss(psutil.Process(pid), rss, stop))
        deadline = time.monotonic() + seconds
        started = time.monotonic()
        await asyncio.gather(*(
            client(http, only or ("ask" if n % 2 == 0 else "search"), questions, 7 * n, deadline, results, max_backoff)
            for n in range(clients)
        ))  # fmt: skip
        wall = time.monotonic() - started
        stop.set()
        await sampler
        queue = (await http.get("/healthz")).json()["queue"]
    return {"results": results, "rss": rss, "wall": wall, "queue": queue}


def report(run: dict, args: argparse.Namespace, ready_s: float, load: tuple, load_end: tuple) -> str:
    results: Results = run["results"]
    wall = run["wall"]
    lines = [
        f"biocite API load test: {args.clients} clients (half ask extractive, half search k=10) for "
        f"{args.seconds:.0f} s on loopback; overrides {args.set}",
        f"server ready in {ready_s:.1f} s; load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"after {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f} ({os.cpu_count()} CPUs, shared)",
        f"after 429 a client waits min(Retry-After, {args.max_backoff:g} s); run took {wall:.1f} s",
        "",
        f"{'endpoint':<8} {'status':<22} {'count':>6} {'per s':>7} {'p50 ms':>9} {'p99 ms':>9}",
    ]
    errors = 0
    for endpoint in ("ask", "search"):
        for code, count in sorted(results.codes[endpoint].items()):
            lat = [s * 1000 for s in results.latency[endpoint, code]]
            lines.append(
                f"{endpoint:<8} {code:<22} {count:>6} {count / wall:>7.2f} {percentile(lat, 0.5):>9.1f} "
                f"{percentile(lat, 0.99):>9.1f}"
            )
            errors += 0 if code in ("200", "429") else count
    rss = run["rss"]
    middle = rss[len(rss) // 2] if rss else (0, float("nan"))
    lines += [
        "",
        f"errors other than 429: {errors}",
        f"server RSS MiB: start {rss[0][1]:.0f}, middle {middle[1]:.0f} (t={middle[0]:.0f} s), "
        f"end {rss[-1][1]:.0f}, max {max(r for _, r in rss):.0f}",
        "server RSS MiB every 10 s: "
        + ", ".join(
            f"{min(rss, key=lambda x: abs(x[0] - t))[1]:.0f}" for t in range(0, int(rss[-1][0]) + 1, 10)
        ),
        f"queue after the run: {run['queue']}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-backoff", type=float, default=2.0, help="Cap on the wait after a 429 (s).")
    parser.add_argument("--set", action="append", default=None, help="Settings override (repeatable).")
    parser.add_argument("--only", choices=["ask", "search"], help="All clients on one endpoint (diagnosis).")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "load_api_results.txt")
    args = parser.parse_args(argv)
    args.set = args.set or []  # the default index (<home>/index/default)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"biocite_load_api_{port}.log"
    proc = start_server(port, args.set, log)
    try:
        ready_s = wait_healthy(base, proc)
        load = os.getloadavg()
        run = asyncio.run(run_load(base, proc.pid, args.clients, args.seconds, args.max_backoff, args.only))
        text = report(run, args, ready_s, load, os.getloadavg())
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(text)
    args.out.write_text(text + "\n")
    print(f"\nwrote {args.out} (server log: {log})")


if __name__ == "__main__":
    main()
