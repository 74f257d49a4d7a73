"""`biocite index build --ray auto|ADDRESS`: parsing, sentence splitting, tokenising and embedding as Ray
tasks over shards; the driver keeps the single-process build's order and its SQLite store.

Shards. A parse shard is one corpus file: a Ray task reads it, splits and tokenises every abstract and
returns the prepared records; the driver saves each finished shard under `<index>/ray_shards/` (named by
the file's SHA-256, so a changed file is a new shard) and applies the shards in file order, so
replacements and deletions across files come out exactly as in the single-process build. An embedding
shard is `SHARD_DOCS` documents that lack a vector; the driver commits each finished shard to SQLite.
Killed mid-build, a rerun skips the saved parse shards and the committed embedding shards: shards are the
unit of resume. The shard folder is removed once the build completes.

Ray itself (`biocite.cluster.connect_ray`): `auto` joins the cluster RAY_ADDRESS names, else starts a private
local Ray with `index.ray_workers` CPUs; an address joins that cluster, whose workers must see the corpus files
at the same paths.

GPUs. `index.embed_device` names the workers' device, not the driver's: "cuda" (or "cuda:N") makes each
embedding task ask Ray for one GPU (Ray gives the task its own CUDA_VISIBLE_DEVICES, so it embeds on
"cuda") and is refused before any work when the cluster has no GPU; "auto" asks for one when the cluster
has GPUs and embeds on CPUs otherwise. The driver only reads the model's name and dimension, on its CPU.
"""

from __future__ import annotations

import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biocite.cluster import connect_ray
from biocite.embedder import Embedder
from biocite.errors import BiociteError
from biocite.index.readers import Deletion, ReadStats, iter_records
from biocite.index.store import prepare
from biocite.models import file_sha256

if TYPE_CHECKING:
    from biocite.index.store import DocStore, Prepared
    from biocite.settings import Settings

# = build.EMBED_CHUNK: the same batches as the single-process build, so bf16 gives the same numbers
SHARD_DOCS = 256
SHARD_DIR = "ray_shards"


def parse_shard(path: str, stem: bool) -> tuple[list[Prepared | Deletion], ReadStats]:
    """One corpus file, parsed, split and tokenised (runs on a Ray worker)."""

    stats = ReadStats()
    records: list[Prepared | Deletion] = []
    for record in iter_records([Path(path)], stats):
        records.append(record if isinstance(record, Deletion) else prepare(record, stem, split=True))
    return records, stats


def embed_shard(texts: list[str], settings: Settings) -> Any:
    """Vectors of one embedding shard (runs on a Ray worker; the model loads once per worker process)."""

    return Embedder.from_settings(settings).encode(texts, batch_size=settings.index.embed_batch_size)


def worker_gpus(device: str, cluster_gpus: float) -> int:
    """GPUs an embedding task asks Ray for under `index.embed_device`: 1 for a GPU device ("auto" only
    when the cluster has one), else 0. A GPU device on a cluster without GPUs is refused: Ray would
    otherwise queue the tasks forever."""
    if device == "cpu" or (device == "auto" and not cluster_gpus):
        return 0
    if not cluster_gpus:
        raise BiociteError(
            f"index.embed_device is {device!r} but the Ray cluster has no GPU; "
            "use index.embed_device=cpu or auto, or join a cluster with GPU workers"
        )
    return 1


def _on_device(settings: Settings, device: str) -> Settings:
    return settings.model_copy(update={"index": settings.index.model_copy(update={"embed_device": device})})


def _merge(total: ReadStats, part: ReadStats) -> None:
    for field in ("files", "records", "malformed", "empty_abstracts", "deleted", "warnings_dropped"):
        setattr(total, field, getattr(total, field) + getattr(part, field))
    for message in part.warnings:
        total.warn(message)


class RayBuild:
    def __init__(self, ray: Any, index_dir: Path, settings: Settings) -> None:
        self.ray = ray
        self.settings = settings
        self.shards = index_dir / SHARD_DIR
        self.shards.mkdir(exist_ok=True)
        workers = settings.index.ray_workers
        gpus = worker_gpus(settings.index.embed_device, ray.cluster_resources().get("GPU", 0))
        # a task given a GPU sees only its own, as "cuda"; the driver reads the model on its CPU
        self.worker_settings = _on_device(settings, "cuda" if gpus else "cpu")
        self.driver_settings = _on_device(settings, "cpu")
        self.parse = ray.remote(num_cpus=1)(parse_shard)
        self.embed = ray.remote(num_cpus=1, num_gpus=gpus)(embed_shard)
        self.window = max(workers * 2, 2)  # tasks in flight, so results stream back in order

    @classmethod
    def connect(cls, address: str, index_dir: Path, settings: Settings) -> RayBuild:
        return cls(connect_ray(address, settings.index.ray_workers), index_dir, settings)

    def _shard_path(self, path: Path) -> Path:
        return self.shards / f"{path.name}.{file_sha256(path)[:16]}.stem{int(self.settings.index.stem)}.pkl"

    def records(self, files: list[Path], stats: ReadStats) -> Iterator[Prepared | Deletion]:
        """Every file's prepared records, in file order; finished shards come from disk."""
        pending: dict[int, Any] = {}
        targets = [self._shard_path(f) for f in files]
        submit = iter([i for i, t in enumerate(targets) if not t.is_file()])
        for i in range(len(files)):
            while len(pending) < self.window and (j := next(submit, None)) is not None:
                pending[j] = self.parse.remote(str(files[j]), self.settings.index.stem)
            if i in pending:
                records, part = self.ray.get(pending.pop(i))
                tmp = targets[i].with_suffix(".tmp")
                tmp.write_bytes(pickle.dumps((records, part)))
                tmp.replace(targets[i])
            else:
                records, part = pickle.loads(targets[i].read_bytes())
            _merge(stats, part)
            yield from records

    def embed_missing(self, store: DocStore, model: str) -> int:
        """Embed the documents without a vector, one committed shard at a time; returns how many."""
        missing = store.missing_embeddings(model)
        chunks = [missing[i : i + SHARD_DOCS] for i in range(0, len(missing), SHARD_DOCS)]
        pending: dict[Any, list[str]] = {}
        todo = iter(chunks)
        while True:
            while len(pending) < self.window and (chunk := next(todo, None)) is not None:
                docs = store.get_many(chunk)
                pending[self.embed.remote([docs[p].text for p in chunk], self.worker_settings)] = chunk
            if not pending:
                return len(missing)
            [done], _ = self.ray.wait(list(pending), num_returns=1)
            chunk = pending.pop(done)
            store.put_embeddings(model, chunk, self.ray.get(done))
            store.commit()

    def finish(self) -> None:
        shutil.rmtree(self.shards, ignore_errors=True)
