"""Can the evidence sentence be ranked first more often (issue 13: top-1 >= 0.75, top-2 >= 0.85)? A negative
result, kept so that it is not tried again blind.

Task: a Citation-Integrity claim against the 5 sentences stored for its cited paper; the annotated evidence
is one of them (always sentence 0 in the stored data, so every score below breaks ties at random, never by
position: a tie broken toward the first sentence counts as a hit and inflates sparse lexical scores, e.g.
bigram recall 0.50 with ties to sentence 0, 0.30 at random).

1. Features (default): the shipped ranker's features (`biocite.support.rank_features`: the support model's
   probabilities, MiniLM cosine, word overlap, each also as the gap to the passage's best) plus stemmed
   word recall of the claim and its bigram recall. A `Ranker` (logistic) is fitted on the held-back
   calibration claims of TRAIN (as `biocite train support` fits it) and scored on the 292 DEV claims.
2. `--listwise-epochs N`: a MiniLM cross-encoder (the pinned all-MiniLM-L6-v2 with a 1-logit head) fine-tuned
   with a softmax over each claim's 5 sentences on all TRAIN claims with evidence, on this CPU; DEV top-1/2
   after each epoch.

    python bench/evidence_ranker.py [--listwise-epochs 0]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402

import numpy as np  # noqa: E402
import Stemmer  # noqa: E402

from biocite.models import model_path  # noqa: E402
from biocite.settings import load_settings  # noqa: E402
from biocite.support import Ranker, SupportModel, rank_features  # noqa: E402
from biocite.support_data import CitClaim, calibration_side, citint_claims, content_words  # noqa: E402

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_CITATION_MARK = re.compile(r"\[?\(?<\|[a-z_]+\|>\)?\]?")
_stem = Stemmer.Stemmer("english").stemWord


def clean(claim: str) -> str:
    return " ".join(_CITATION_MARK.sub(" ", claim).split())


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = [_stem(w.lower()) for w in _WORD.findall(text)]
    return set(zip(words, words[1:], strict=False))


def lexical(claim: str, sentences: Sequence[str]) -> np.ndarray:
    """Stemmed word recall and bigram recall of the claim in each sentence, raw and as the gap to the best."""
    words, pairs = {_stem(w) for w in content_words(claim)}, _bigrams(claim)
    rows = [
        [
            len(words & {_stem(w) for w in content_words(s)}) / (len(words) or 1),
            len(pairs & _bigrams(s)) / (len(pairs) or 1),
        ]
        for s in sentences
    ]
    x = np.asarray(rows, dtype=np.float64)
    return np.column_stack([x, x - x.max(axis=0)])


def top_k(score: Callable[[int], np.ndarray], claims: Sequence[CitClaim]) -> tuple[float, float]:
    """Top-1 / top-2 of the annotated evidence, ties broken at random (seeded)."""
    rng = np.random.default_rng(0)
    hits1 = hits2 = 0
    for i, c in enumerate(claims):
        s = score(i)
        order = np.lexsort((rng.random(len(s)), -s))
        hits1 += int(order[0]) in c.evidence
        hits2 += bool(set(c.evidence) & set(order[:2].tolist()))
    return round(hits1 / len(claims), 3), round(hits2 / len(claims), 3)


def feature_rankers() -> None:
    settings = load_settings()
    seed = settings.support.seed
    train, _ = citint_claims("train")
    cal = [c for c in train if c.evidence and calibration_side(c.id, seed)][
        : settings.support.calibration_claims
    ]
    dev = [c for c in citint_claims("dev")[0] if c.evidence]
    model = SupportModel.load(settings)
    feats = {}
    for name, claims in (("cal", cal), ("dev", dev)):
        scored = model.score([c.claim for c in claims], [c.sentences for c in claims])
        feats[name] = [
            np.column_stack(
                [rank_features(c.claim, c.sentences, p, cos), lexical(clean(c.claim), c.sentences)]
            )
            for c, (p, cos) in zip(claims, scored, strict=True)
        ]
    print(f"claims with annotated evidence: {len(cal)} calibration (TRAIN) / {len(dev)} DEV")
    single = ["p_supports", "cosine", "overlap", "word_recall", "bigram_recall"]
    for name, col in zip(single, (0, 3, 5, 7, 8), strict=True):
        print(f"  {name:<22} DEV top-1 / top-2 {top_k(lambda i, k=col: feats['dev'][i][:, k], dev)}")
    gold = [j in c.evidence for c in cal for j in range(len(c.sentences))]
    for name, cols in (("shipped features", list(range(7))), ("+ word and bigram recall", list(range(11)))):
        ranker = Ranker.fit(np.concatenate([x[:, cols] for x in feats["cal"]]), gold, seed)
        dev_scores = [ranker.score(x[:, cols]) for x in feats["dev"]]
        print(f"  ranker, {name:<24} DEV top-1 / top-2 {top_k(dev_scores.__getitem__, dev)}")


def listwise(epochs: int, seed: int = 13, max_length: int = 128, claims_per_step: int = 4) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    random.seed(seed)
    path = model_path(load_settings(), "minilm")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    train = [c for c in citint_claims("train")[0] if c.evidence and len(c.sentences) == 5]
    dev = [c for c in citint_claims("dev")[0] if c.evidence]
    steps = epochs * (len(train) // claims_per_step)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, (steps - s) / (steps - warm))
    )

    def logits(batch: Sequence[CitClaim]) -> torch.Tensor:
        enc = tok(
            [clean(c.claim) for c in batch for _ in c.sentences],
            [s for c in batch for s in c.sentences],
            truncation=True, max_length=max_length, padding=True, return_tensors="pt",
        )  # fmt: skip
        return model(**enc).logits[:, 0]

    def dev_top_k() -> tuple[float, float]:
        model.eval()
        with torch.no_grad():
            scores = [logits([c]).numpy() for c in dev]
        model.train()
        return top_k(lambda i: scores[i], dev)

    print(
        f"listwise cross-encoder: {len(train)} TRAIN claims, {len(dev)} DEV; before fine-tuning {dev_top_k()}"
    )
    started = time.perf_counter()
    for epoch in range(epochs):
        random.shuffle(train)
        for i in range(0, len(train) - claims_per_step + 1, claims_per_step):
            batch = train[i : i + claims_per_step]
            target = torch.tensor([c.evidence[0] for c in batch])
            loss = torch.nn.functional.cross_entropy(logits(batch).view(len(batch), 5), target)
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
        print(f"  epoch {epoch + 1}: DEV top-1 / top-2 {dev_top_k()} ({time.perf_counter() - started:.0f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listwise-epochs", type=int, default=0, help="also fine-tune a listwise cross-encoder")
    args = ap.parse_args()
    feature_rankers()
    if args.listwise_epochs:
        listwise(args.listwise_epochs)


if __name__ == "__main__":
    main()
