"""`biocite corpus download` against a local NLM-layout server (tests/nlm_mirror.py) on 127.0.0.1.

    python bench/corpus_download.py [--big 600]

Fixture files: three baseline files (20, 20 and `--big` citations of the shipped 2016 MEDLINE sample,
gzipped) and two update files (a replacement + 5 new citations; two deletions). Three runs of the installed
`biocite` in a subprocess, each printed with what the server saw:
1. `--all` with baseline file 2 served corrupt once and file 3's connection dropped half-way once;
2. a run killed with SIGKILL while file 3 is being fetched (slowly), then run again;
3. `--updates` with a wrong published checksum for one update file (expected exit 2 naming it).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.nlm_mirror import Mirror, MirrorState, pubmed_like_files  # noqa: E402

BIOCITE = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
B2, B3 = "baseline/pubmed26n0002.xml.gz", "baseline/pubmed26n0003.xml.gz"
U5 = "updatefiles/pubmed26n0005.xml.gz"


def download(url: str, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [BIOCITE, "corpus", "download", "--mirror", url, "--out", str(out), "--backoff", "0.1", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def verified(out: Path, files: dict[str, bytes]) -> int:
    return sum(
        (out / p).is_file() and hashlib.md5((out / p).read_bytes()).digest() == hashlib.md5(d).digest()
        for p, d in files.items()
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--big", type=int, default=500, help="citations in baseline file 3")
    args = parser.parse_args()
    files, _ = pubmed_like_files(big=args.big)
    total = sum(len(d) for d in files.values())
    print(f"# corpus download vs a local NLM-layout server ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}); "
          f"{len(files)} files, {total / 1e6:.2f} MB")  # fmt: skip
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "1"
        state = MirrorState(files=dict(files), corrupt_once={B2}, drop_once={B3})
        with Mirror(state) as url:
            started = time.perf_counter()
            result = download(url, out, "--all", "--connections", "4")
            secs = time.perf_counter() - started
        good = verified(out, files)
        print(f"1. corrupt + dropped: exit {result.returncode}, {good}/{len(files)} verified in {secs:.1f} s; "
              f"file 2 GETs {state.gets(B2)}, file 3 GETs {state.gets(B3)}")  # fmt: skip
        ok &= result.returncode == 0 and good == len(files) and len(state.gets(B2)) == 2

        out = Path(tmp) / "2"
        state = MirrorState(files=dict(files), slow={B3: 0.01})
        with Mirror(state) as url:
            cmd = [BIOCITE, "corpus", "download", "--mirror", url, "--out", str(out), "--baseline", "1-3",
                   "--connections", "1"]  # fmt: skip
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            part = out / (B3 + ".part")
            while proc.poll() is None and not (part.is_file() and part.stat().st_size > len(files[B3]) // 3):
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kept = part.stat().st_size
            state.slow.clear()
            state.log.clear()
            result = download(url, out, "--baseline", "1-3", "--connections", "1")
        refetched = [p for m, p, _ in state.log if m == "GET" and not p.endswith((".md5", "/"))]
        print(f"2. killed at {kept:,} of {len(files[B3]):,} bytes of file 3, rerun: exit {result.returncode}, "
              f"{result.stdout.strip()}; file GETs on rerun {refetched} with Range {state.gets(B3)}")  # fmt: skip
        ok &= result.returncode == 0 and refetched == [B3] and state.gets(B3) == [f"bytes={kept}-"]

        out = Path(tmp) / "3"
        state = MirrorState(files=dict(files), wrong_md5={U5})
        with Mirror(state) as url:
            result = download(url, out, "--updates", "--retries", "2")
        message = " ".join(result.stderr.split())
        print(f"3. wrong published MD5: exit {result.returncode}: {message}")
        ok &= result.returncode == 2 and "pubmed26n0005.xml.gz" in message
    print("all as expected" if ok else "NOT as expected")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
