"""Which IVF-PQ codes lose the PubMedQA source abstracts? A one-off on a 200k subset of the 1M scale index.

    python bench/ivfpq_codes.py   # needs the index written by `bench/scale_engines.py --out /tmp/wt14-scale`

Rows: every real document (ids < 40,000,000) + random synthetic ones up to 200k, from the float16 file.
Queries: the PubMedQA TRAIN split (300 questions; the validation split is not looked at). For each FAISS
factory string (IVF1024, nprobe 64) the top 200 / 1,000 candidates are re-scored exactly, as
index/ivfpq.py does; printed: recall@10 of the source abstract, and the exact-search recall.
Results: bench/ivfpq_codes_results.txt.
"""

import sys
import time

import faiss
import numpy as np

from biocite.embedder import Embedder
from biocite.index.rerank import train_questions

d = (sys.argv[1] if len(sys.argv) > 1 else "/tmp/wt14-scale") + "/index/"
vec = np.load(d + "dense_f16.npy", mmap_mode="r")
ids = np.load(d + "dense_ids.npy")
real = np.flatnonzero(ids < 40_000_000)
rng = np.random.default_rng(0)
synth = rng.choice(np.flatnonzero(ids >= 40_000_000), 200_000 - len(real), replace=False)
rows = np.sort(np.concatenate([real, synth]))
X = np.asarray(vec[rows], dtype=np.float32)
sub_ids = ids[rows]
qs = train_questions()
Q = Embedder("minilm").encode([q.question for q in qs])
want = np.array([int(q.pmid) for q in qs])
S = Q @ X.T
exact_top = np.argsort(-S, axis=1)[:, :10]
print("exact", np.mean([w in sub_ids[t] for w, t in zip(want, exact_top, strict=True)]))
for fac in ["IVF1024,PQ48x4fs", "IVF1024,PQ96x4fs", "IVF1024,PQ48", "IVF1024,PQ96"]:
    t = time.time()
    ix = faiss.index_factory(384, fac, faiss.METRIC_INNER_PRODUCT)
    ix.train(X[rng.choice(len(X), 60_000, replace=False)])
    ix.add(X)
    faiss.extract_index_ivf(ix).nprobe = 64
    for rk in (200, 1000):
        _, found = ix.search(Q, rk)
        rec = []
        for qi, row in enumerate(found):
            c = np.unique(row[row >= 0])
            sc = X[c] @ Q[qi]
            top = c[np.argsort(-sc)[:10]]
            rec.append(want[qi] in sub_ids[top])

        print(
            fac,
            "rescore",
            rk,
            "recall",
            round(float(np.mean(rec)), 3),
            "build s",
            round(time.time() - t, 1),
            flush=True,
        )
