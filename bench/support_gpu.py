"""The GPU recipe of the shipped support model (issue 13), and the GPU embedding figure (issue 14).

Two steps, because the GPU machine holds neither biocite's dependencies nor the MiniLM package:

  device  (on a CUDA machine; bench/support_gpu.sh prepares it) fine-tunes the cross-encoder with each
          recipe in VARIANTS on the same seeded training pairs, fits the aggregator on held-back TRAIN
          claims for each, picks the variant with the best calibration-slice macro-F1 (never a dev figure),
          and writes its delta (core/shipped.py) to --out. It also times MiniLM document embedding on the GPU.
  finish  (here, CPU) rebuilds the head from the pinned backbone plus the delta, refits the ranker and the
          aggregator on this machine's int8 CPU scores (what inference sees), and writes core/shipped/support/.

The MiniLM weights travel to the GPU machine rounded to float16 (the device's 64 MiB transfer limit); the
frozen word embeddings are not shipped, so the installed model uses the exact float32 ones.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# chosen before training: epochs and learning rate around the CPU recipe's; all pairs; 128 tokens
COMMON = ["support.train_pairs=12000", "support.batch_size=32", "support.max_length=128",
          "support.freeze_word_embeddings=true"]  # fmt: skip
VARIANTS: dict[str, list[str]] = {
    "e2_lr3e-5": ["support.epochs=2", "support.lr=3e-5"],
    "e4_lr3e-5": ["support.epochs=4", "support.lr=3e-5"],
    "e4_lr5e-5": ["support.epochs=4", "support.lr=5e-5"],
    # second round (same call pattern), added because the calibration figure rose with epochs
    "e6_lr5e-5": ["support.epochs=6", "support.lr=5e-5"],
    "e8_lr5e-5": ["support.epochs=8", "support.lr=5e-5"],
}
FIRST_ROUND = "e2_lr3e-5,e4_lr3e-5,e4_lr5e-5"


SMOKE = [
    "support.train_pairs=96",
    "support.max_length=48",
    "support.calibration_claims=24",
    "support.calibration_hard_per_type=3",
]  # a minutes-long CPU rehearsal of the device step


def embed_throughput(
    base: Path, out: Path, dev: str, copies: int = 4, limit: int | None = None
) -> dict[str, Any]:
    """MiniLM documents/s on the GPU, fp32 and fp16, on the embedded corpus's real abstracts (x4)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from biocite.index.readers import read_documents
    from biocite.settings import DEFAULT_CORPUS

    texts = ([doc.text for doc in read_documents(DEFAULT_CORPUS[:1]).values()] * copies)[:limit]
    report: dict[str, Any] = {"documents": len(texts), "device": _device_name(dev)}
    model = SentenceTransformer(str(base), device=dev)
    ref = model.encode(texts[:512], batch_size=256, normalize_embeddings=True)
    for precision in ("fp32", "fp16") if dev == "cuda" else ("fp32",):
        if precision == "fp16":
            model = model.half()
        for batch in (256, 1024):
            model.encode(texts[: min(2048, len(texts))], batch_size=batch)  # warm-up
            _sync(dev)
            t0 = time.perf_counter()
            vecs = model.encode(texts, batch_size=batch, normalize_embeddings=True)
            _sync(dev)
            seconds = time.perf_counter() - t0
            cos = float(np.min(np.sum(vecs[:512].astype(np.float32) * ref, axis=1)))
            report[f"{precision}_batch{batch}"] = {
                "seconds": round(seconds, 2),
                "docs_per_s": round(len(texts) / seconds, 1),
                "min_cosine_vs_fp32": round(cos, 5),
            }
            print(precision, batch, report[f"{precision}_batch{batch}"], flush=True)
    (out / "embed_gpu.json").write_text(json.dumps(report, indent=2))
    return report


def _device_name(dev: str) -> str:
    import torch

    return torch.cuda.get_device_name(0) if dev == "cuda" else "cpu"


def _sync(dev: str) -> None:
    import torch

    if dev == "cuda":
        torch.cuda.synchronize()


def device(base: Path, out: Path, dev: str, smoke: bool, variants: list[str]) -> None:
    import torch

    from biocite.settings import load_settings
    from biocite.support import finetune_head, fit_and_save, training_pairs

    out.mkdir(parents=True, exist_ok=True)
    print("torch", torch.__version__, _device_name(dev), flush=True)
    embed_throughput(base, out, dev, copies=4, limit=256 if smoke else None)
    common = COMMON + (SMOKE if smoke else [])
    train = training_pairs(load_settings(overrides=common))
    print(f"{len(train)} training pairs", flush=True)
    results: dict[str, Any] = {}
    best: tuple[float, str] | None = None
    for name in variants:
        extra = VARIANTS[name]
        settings = load_settings(overrides=common + extra + (["support.epochs=1"] if smoke else []))
        t0 = time.perf_counter()
        head = finetune_head(settings, backbone=base, device=dev, progress=False, train=train)
        head.meta["backbone_name"] = "minilm"  # the same weights, rounded to float16 for the transfer
        trained = time.perf_counter() - t0
        head.model.to(dev)  # on the GPU the selection figures come from its fp32 scores
        meta = fit_and_save(
            settings, head, Path("/tmp/support_variants") / name, extra_meta={"variant": name}
        )
        m = meta["metrics"]
        f1 = m["calibration_slice_half"]["macro_f1"]
        results[name] = {"overrides": common + extra, "train_seconds": round(trained, 1), "metrics": m}
        print(
            name, f"train {trained:.0f} s", "cal macro-F1", f1, m["calibration_slice_half_shaped"], flush=True
        )
        if best is None or f1 > best[0]:  # written at once: a call cut short still returns the best so far
            best = (f1, name)
            _export(head, out, name, common + extra, probe=[(p.claim, p.evidence) for p in train[:32]])
        (out / "variants.json").write_text(json.dumps(results, indent=2, default=str))
    assert best is not None
    print("selected", best[1], flush=True)


def _export(head: Any, out: Path, name: str, overrides: list[str], probe: list[tuple[str, str]]) -> None:
    """The delta in parts of at most 15 MB (the transfer back takes files of at most 16 MB), its meta, and
    the fp32 logits of 32 training pairs, so `finish` can check the rebuilt head against them."""
    from biocite.shipped import DELTA_FILE, export_delta

    head.model.to("cpu")
    head.meta.update(variant=name, variant_overrides=overrides)
    export_delta(head, out / "best")
    for old in out.glob("delta.part*"):
        old.unlink()
    subprocess.run(
        ["split", "-b", "15M", "-d", str(out / "best" / DELTA_FILE), str(out / "delta.part")], check=True
    )
    (out / "best" / DELTA_FILE).unlink()
    probe_out = {"pairs": probe, "logits": head.logits(probe).round(5).tolist()}
    (out / "probe.json").write_text(json.dumps(probe_out))


def finish(parts: list[Path], meta: Path, probe: Path | None) -> None:
    import shutil
    import tempfile

    from biocite.settings import load_settings
    from biocite.shipped import DELTA_FILE, export_shipped, load_delta
    from biocite.support import fit_and_save

    settings = load_settings()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "delta"
        src.mkdir()
        with (src / DELTA_FILE).open("wb") as fh:
            for part in sorted(parts):
                fh.write(part.read_bytes())
        shutil.copyfile(meta, src / "meta.json")
        head = load_delta(settings, src)
        if probe:
            import numpy as np

            ref = json.loads(probe.read_text())
            diff = np.abs(head.logits([tuple(p) for p in ref["pairs"]]) - np.array(ref["logits"])).max()
            print(f"rebuilt head vs the device's fp32 logits on 32 pairs: max |diff| {diff:.4f}")
        origin = f"trained:{head.meta['train_data_sha256'][:16]}"
        artifact = Path(tmp) / "artifact"
        fit_and_save(
            settings, head, artifact, say=print, extra_meta={"origin": origin, "aggregator_device": "cpu"}
        )
        sums = export_shipped(artifact)
    print(json.dumps(sums, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="step", required=True)
    d = sub.add_parser("device")
    d.add_argument("--base", type=Path, required=True, help="the MiniLM sentence-transformers folder")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--device", default="cuda")
    d.add_argument("--smoke", action="store_true", help="tiny settings: rehearse the step on a CPU")
    d.add_argument("--variants", default=FIRST_ROUND, help="comma-separated names from VARIANTS")
    d.add_argument("--parallel-tokenizers", action="store_true", help="tokenize on all cores (embedding)")
    f = sub.add_parser("finish")
    f.add_argument("--meta", type=Path, required=True)
    f.add_argument("--probe", type=Path, help="probe.json of the device step: check the rebuilt head")
    f.add_argument("parts", type=Path, nargs="+")
    args = parser.parse_args()
    if args.step == "device":
        if args.parallel_tokenizers:
            os.environ["TOKENIZERS_PARALLELISM"] = "true"
        device(args.base, args.out, args.device, args.smoke, args.variants.split(","))
    else:
        finish(args.parts, args.meta, args.probe)
    sys.exit(0)


if __name__ == "__main__":
    main()
