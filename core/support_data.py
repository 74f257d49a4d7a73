"""Training and evaluation pairs of the support model: (claim, evidence sentence) -> one of four labels.

Sources (one loader each), every split by claim or question with a seeded hash:
- Citation-Integrity (train split only; dev stays untouched for the figures): the annotated evidence
  sentence -> supports (SUPPORT) or contradicts (REFUTE); another sentence of the cited abstract -> neutral;
  a claim without evidence (NEI) against a sentence of its cited abstract -> neutral; a sentence of a
  same-topic other abstract (BM25 near miss) or a random abstract -> not_relevant.
- K-QA physician NLI labels (train questions only): the statement against the answer sentence that shares
  most content words with it -> Entailment = supports, Contradiction = contradicts, Neutral = neutral.
- PubMedQA (train questions only): a conclusion sentence of the long answer against the abstract's
  sentence (its conclusion removed) sharing most words -> supports; against the best sentence of a
  same-topic other abstract (BM25) -> not_relevant. The held-back (calibration) questions give whole
  passages of real length for the aggregator instead (`pubmedqa_passages`).
- Generated hard cases from supported claims (`perturb`): negation, reversed direction, changed number,
  swapped entity, an extra unsupported clause. Every type has TRAIN templates and HELD-OUT templates; the
  held-out ones never reach training and give the hard-case figure.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from rank_bm25 import BM25Okapi

from biocite import pubmedqa
from biocite.heads import data_fingerprint
from biocite.kqa import load_nli_labels, split_of
from biocite.sentences import split_text
from biocite.settings import DATA_DIR
from biocite.tokenize import tokenize, tokenize_many

LABELS = ["supports", "contradicts", "neutral", "not_relevant"]
CITINT_DIR = DATA_DIR / "citint"
CORPUS_FILE = DATA_DIR / "corpus" / "abstracts.jsonl"


@dataclass(frozen=True)
class Pair:
    claim: str
    evidence: str  # one sentence
    label: str  # one of LABELS
    source: str  # citint | kqa | pubmedqa | hard:<type>
    group: str  # the claim/question it came from (split key)
    template: str = ""  # hard cases: the template that made it


class Passage(NamedTuple):
    """A claim against a whole passage (the aggregator's calibration rows)."""

    claim: str
    sentences: list[str]
    label: str  # one of LABELS
    kind: str  # where it came from: cited | other | copy | hard:<type>[:pubmedqa] | pubmedqa_<cited|near|random>


def bucket(key: str, seed: int) -> float:
    """A stable number in [0, 1) per key and seed (the split hash)."""
    digest = hashlib.sha256(f"{seed}:{' '.join(key.lower().split())}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


# --- text helpers -------------------------------------------------------------------------------------

_MARKER = re.compile(r"\s*[\[(]?\s*<\|(?:multi_|other_)?cit\|>\s*(?:,\s*[\w\s–-]*)?[\])]?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+|\d+(?:\.\d+)?")
STOPWORDS = frozenset(
    "a an the and or but of in on at to for with by from as is are was were be been being this that these "
    "those it its their there which who whom whose what when where while than then also can could may might "
    "will would should has have had do does did not no into over under between among such other more most "
    "some any all each both either neither only very well we our they them he she his her study studies "
    "shown show showed shows found reported report reports suggest suggests suggested".split()
)


def clean_claim(text: str) -> str:
    return " ".join(_MARKER.sub("", text).split())


def content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS and len(w) > 2}


def overlap(a: str, b: str) -> float:
    wa, wb = content_words(a), content_words(b)
    return len(wa & wb) / (len(wa) ** 0.5 * len(wb) ** 0.5) if wa and wb else 0.0


def best_sentence(claim: str, sentences: Sequence[str]) -> int:
    scores = [overlap(claim, s) for s in sentences]
    return max(range(len(sentences)), key=scores.__getitem__)


# --- Citation-Integrity -------------------------------------------------------------------------------


def load_citint(split: str) -> tuple[list[dict[str, Any]], dict[int, list[str]]]:
    """Claims of a split (`train` | `dev`) and the corpus {doc_id: sentences}."""
    claims = [
        json.loads(x) for x in (CITINT_DIR / f"claims_{split}.jsonl").read_text().splitlines() if x.strip()
    ]
    corpus: dict[int, list[str]] = {}
    for line in (CITINT_DIR / "corpus.jsonl").read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            corpus[int(d["doc_id"])] = [s.strip() for s in d["abstract"] if s.strip()]
    return claims, corpus


@dataclass
class CitClaim:
    """One Citation-Integrity claim with its cited abstract and annotated evidence (sentence indices)."""

    id: str
    claim: str
    label: str  # supports | contradicts | neutral (NEI)
    doc_id: int
    sentences: list[str]
    evidence: list[int]


def citint_claims(split: str) -> tuple[list[CitClaim], dict[int, list[str]]]:
    raw, corpus = load_citint(split)
    out = []
    for c in raw:
        doc = int(c["cited_doc_ids"][0])
        sentences = corpus.get(doc) or []
        if not sentences:
            continue
        evidence: list[int] = []
        label = "neutral"
        for d, evs in c["evidence"].items():
            if int(d) != doc:
                continue
            for ev in evs:
                label = "supports" if ev["label"] == "SUPPORT" else "contradicts"
                evidence.extend(i for i in ev["sentences"] if i < len(sentences))
        out.append(
            CitClaim(
                f"citint:{split}:{c['id']}",
                clean_claim(c["claim"]),
                label,
                doc,
                sentences,
                sorted(set(evidence)),
            )
        )
    return out, corpus


class _PostingsOkapi(BM25Okapi):
    """rank-bm25's BM25Okapi whose `get_scores` reads each query term's postings instead of looping over every
    document's dictionary in Python (50 ms -> well under 1 ms a query over the Citation-Integrity abstracts).
    The arithmetic is rank-bm25's, term by term in the same order, so the scores are the same floats."""

    def __init__(self, corpus: list[list[str]]) -> None:
        super().__init__(corpus)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, freqs in enumerate(self.doc_freqs):
            for term, tf in freqs.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(i)
                tfs.append(tf)
        self.postings = {t: (np.array(d), np.array(f)) for t, (d, f) in postings.items()}
        doc_len = np.array(self.doc_len)
        self.length_norm = self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)

    def get_scores(self, query: list[str]) -> np.ndarray:
        score = np.zeros(self.corpus_size)
        for q in query:
            q_freq = np.zeros(self.corpus_size, dtype=int)
            if q in self.postings:
                docs, tfs = self.postings[q]
                q_freq[docs] = tfs
            score += (self.idf.get(q) or 0) * (q_freq * (self.k1 + 1) / (q_freq + self.length_norm))
        return score


class NearMiss:
    """BM25 over a set of abstracts: the most similar *other* abstract to a text (same topic, other study)."""

    def __init__(self, docs: dict[str, list[str]]) -> None:
        self.ids = sorted(docs)
        self.docs = docs
        self.bm25 = _PostingsOkapi(list(tokenize_many(" ".join(docs[i]) for i in self.ids)))

    def other(self, text: str, exclude: str) -> str | None:
        scores = self.bm25.get_scores(tokenize(text))
        for i in np.argsort(-scores, kind="stable")[:3]:
            if self.ids[i] != exclude:
                return self.ids[i]
        return None


def citint_pairs(claims: Sequence[CitClaim], corpus: dict[int, list[str]], seed: int) -> list[Pair]:
    rng = random.Random(seed)
    near = NearMiss({str(k): v for k, v in corpus.items()})
    doc_ids = sorted(corpus)
    out: list[Pair] = []
    for c in claims:
        add = lambda ev, label, c=c: out.append(Pair(c.claim, ev, label, "citint", c.id))  # noqa: E731
        for i in c.evidence:
            add(c.sentences[i], c.label)
        rest = [i for i in range(len(c.sentences)) if i not in c.evidence]
        if rest:
            # the hardest same-abstract distractor: the non-evidence sentence closest to the claim
            add(c.sentences[max(rest, key=lambda i: overlap(c.claim, c.sentences[i]))], "neutral")
        other = near.other(c.claim, str(c.doc_id))
        if other is not None:
            sents = corpus[int(other)]
            add(sents[best_sentence(c.claim, sents)], "not_relevant")
        rand = rng.choice(doc_ids)
        if rand != c.doc_id and corpus[rand]:
            add(rng.choice(corpus[rand]), "not_relevant")
    return out


# --- K-QA -----------------------------------------------------------------------------------------------


def kqa_pairs(seed: int, side: str = "train") -> list[Pair]:
    label_of = {"Entailment": "supports", "Contradiction": "contradicts", "Neutral": "neutral"}
    out = []
    for row in load_nli_labels():
        if split_of(row.question, seed) != side or row.label not in label_of:
            continue
        sentences = split_text(row.answer)
        if sentences:
            ev = sentences[best_sentence(row.claim, sentences)]
            out.append(Pair(row.claim, ev, label_of[row.label], "kqa", f"kqa:{row.question}"))
    return out


# --- PubMedQA -------------------------------------------------------------------------------------------


def load_abstracts() -> dict[str, str]:
    out = {}
    with CORPUS_FILE.open() as f:
        lines = list(f)
    for line in lines:
        if line.strip():
            d = json.loads(line)
            out[str(d["pmid"])] = d.get("abstract") or ""
    return out


@lru_cache(maxsize=1)  # `biocite train support` reads it twice: for the pairs and the calibration passages
def _pubmedqa_conclusions() -> tuple[dict[str, list[str]], dict[str, list[str]], NearMiss]:
    """For each PubMedQA question whose abstract holds its long answer: the abstract's sentences with the
    conclusion removed (where any remain), the long answer's sentences of 8 words or more, and a near-miss
    index over those abstracts. Callers must not change them."""
    abstracts = load_abstracts()
    contexts: dict[str, list[str]] = {}
    conclusions: dict[str, list[str]] = {}
    for item in pubmedqa.read_items():
        text = abstracts.get(str(item.pmid), "")
        long_answer = item.long_answer.strip()
        if not text or long_answer[:60] not in text:
            continue
        contexts[item.pmid] = split_text(text.replace(long_answer, " "))
        conclusions[item.pmid] = [s for s in split_text(long_answer) if len(s.split()) >= 8]
    contexts = {p: s for p, s in contexts.items() if s}
    return contexts, conclusions, NearMiss(contexts)


def _side(side: str) -> set[str]:
    train, held_out = pubmedqa.split_questions(pubmedqa.load_questions())
    return {q.pmid for q in (train if side == "train" else held_out)}


def pubmedqa_pairs(side: str = "train") -> list[Pair]:
    """A conclusion sentence vs its own abstract (supports) and vs a near-miss abstract (not relevant), for
    the questions on `side` of the shared PubMedQA split (`pubmedqa.split_questions`), so no question the
    agent's PubMedQA figures hold out ever trains the support model."""
    keep = _side(side)
    contexts, conclusions, near = _pubmedqa_conclusions()
    out = []
    for pmid in sorted(conclusions):
        if pmid not in keep or not conclusions[pmid]:
            continue
        claim = conclusions[pmid][0]
        group = f"pubmedqa:{pmid}"
        sents = contexts.get(pmid, [])
        if sents:
            out.append(Pair(claim, sents[best_sentence(claim, sents)], "supports", "pubmedqa", group))
        other = near.other(claim, pmid)
        if other is not None:
            o = contexts[other]
            out.append(Pair(claim, o[best_sentence(claim, o)], "not_relevant", "pubmedqa", group))
    return out


def pubmedqa_passages(
    side: str, seed: int, keep: Callable[[str], bool] = lambda _group: True, max_questions: int | None = None
) -> list[Passage]:
    """Whole passages of real length (a median of 10 sentences, where Citation-Integrity's have 5): each
    question's first conclusion sentence vs its own abstract with the conclusion removed (supports; kind
    "pubmedqa_cited"), vs the near-miss abstract ("pubmedqa_near") and vs a random one ("pubmedqa_random"; both
    not_relevant), for the first `max_questions` (all by default) questions on `side` of the shared split whose
    group `keep` accepts."""
    rng = random.Random(seed)
    questions = _side(side)
    contexts, conclusions, near = _pubmedqa_conclusions()
    ids = sorted(contexts)
    out: list[Passage] = []
    taken = 0
    for pmid in sorted(conclusions):
        if pmid not in questions or pmid not in contexts or not conclusions[pmid]:
            continue
        if not keep(f"pubmedqa:{pmid}"):
            continue
        if max_questions is not None and taken >= max_questions:
            break
        taken += 1
        claim = conclusions[pmid][0]
        out.append(Passage(claim, contexts[pmid], "supports", "pubmedqa_cited"))
        for kind, other in (("near", near.other(claim, pmid)), ("random", rng.choice(ids))):
            if other is not None and other != pmid:
                out.append(Passage(claim, contexts[other], "not_relevant", f"pubmedqa_{kind}"))
    return out


def as_claims(passages: Sequence[Passage]) -> list[CitClaim]:
    """The supported passages as claims whose evidence is the sentence sharing most words (for `hard_cases`)."""
    return [
        CitClaim(f"passage:{i}", p.claim, "supports", i, p.sentences, [best_sentence(p.claim, p.sentences)])
        for i, p in enumerate(passages)
        if p.label == "supports"
    ]


# --- generated hard cases -----------------------------------------------------------------------------

Perturb = Callable[[str, random.Random, Sequence[str]], str | None]

_AUX = re.compile(r"\b(is|are|was|were|can|could|may|might|will|would|should|has|have|had|does|do|did)\b")


def _neg_aux(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
    m = _AUX.search(claim)
    return claim[: m.end()] + " not" + claim[m.end() :] if m and "not" not in claim.split() else None


def _neg_no(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
    m = re.search(r"\b(a|an|the)\s+(significant|strong|positive|negative|marked|clear)\b", claim, re.I)
    return claim[: m.start()] + "no " + claim[m.start(2) :] if m else None


def _neg_prefix(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
    if len(claim) < 2:
        return None
    return "It is not true that " + claim[0].lower() + claim[1:]


def _flip(pairs: list[tuple[str, str]]) -> Perturb:
    table = {}
    for a, b in pairs:
        table[a], table[b] = b, a
    pattern = re.compile(
        r"\b(" + "|".join(sorted(map(re.escape, table), key=len, reverse=True)) + r")\b", re.I
    )

    def apply(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
        m = pattern.search(claim)
        if not m:
            return None
        word = table[m.group(1).lower()]
        if m.group(1)[0].isupper():
            word = word[0].upper() + word[1:]
        return claim[: m.start()] + word + claim[m.end() :]

    return apply


_DIR_TRAIN = [
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("increasing", "decreasing"),
    ("higher", "lower"),
    ("more", "less"),
    ("upregulated", "downregulated"),
    ("up-regulated", "down-regulated"),
    ("promotes", "inhibits"),
    ("promoted", "inhibited"),
    ("promote", "inhibit"),
    ("positively", "negatively"),
]
_DIR_HELD = [
    ("reduced", "elevated"),
    ("reduces", "raises"),
    ("reduce", "raise"),
    ("reduction", "rise"),
    ("improved", "worsened"),
    ("improves", "worsens"),
    ("improve", "worsen"),
    ("enhanced", "suppressed"),
    ("enhances", "suppresses"),
    ("greater", "smaller"),
    ("better", "worse"),
    ("protective", "harmful"),
    ("activates", "represses"),
    ("activated", "repressed"),
    ("induces", "prevents"),
    ("induced", "prevented"),
]

_NUMBER = re.compile(r"(?<![\w.-])(\d+(?:\.\d+)?)(?![\w.-])")


def _num_scale(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
    nums = [m for m in _NUMBER.finditer(claim) if not 1900 <= float(m.group(1)) <= 2030]
    if not nums:
        return None
    m = rng.choice(nums)
    value = float(m.group(1)) * rng.choice([2, 3, 5]) + 1
    text = f"{value:.1f}" if "." in m.group(1) else str(int(value))
    return claim[: m.start()] + text + claim[m.end() :]


def _num_replace(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
    nums = [m for m in _NUMBER.finditer(claim) if not 1900 <= float(m.group(1)) <= 2030]
    if not nums:
        return None
    m = rng.choice(nums)
    old = float(m.group(1))
    value = old
    while abs(value - old) < max(1.0, 0.3 * old):
        value = rng.uniform(0.1, 3) * old + rng.randint(2, 40)
    text = f"{value:.2f}" if "." in m.group(1) else str(int(value))
    return claim[: m.start()] + text + claim[m.end() :]


_DRUG = re.compile(
    r"\b[A-Za-z]+(?:mab|nib|statin|pril|sartan|olol|mycin|cillin|azole|oxacin|platin|vir|tide|parin|"
    r"semide|dipine|prazole|triptan|gliptin|formin|lukast|dronate|taxel|rubicin|mustine)\b",
    re.I,
)
_DISEASE = re.compile(
    r"\b(?:[A-Za-z]+(?:itis|oma|emia|aemia|osis|pathy|plasia)|cancer|carcinoma|diabetes|asthma|"
    r"hypertension|obesity|stroke|sepsis|malaria|tuberculosis|HIV|COVID-19|Alzheimer's disease|"
    r"Parkinson's disease|depression|schizophrenia|psoriasis|leukemia|lymphoma|melanoma|infection)\b",
    re.I,
)
_POPULATION = re.compile(
    r"\b(children|adults|women|men|infants|neonates|adolescents|elderly|older adults|pregnant women|"
    r"mice|rats|patients|smokers|athletes|veterans|nurses|students)\b",
    re.I,
)


def _swap(pattern: re.Pattern[str]) -> Perturb:
    seen: dict[int, list[str]] = {}

    def apply(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
        m = pattern.search(claim)
        if not m:
            return None
        own = m.group(0).lower()
        if id(pool) not in seen:
            seen.clear()
            seen[id(pool)] = sorted({x.group(0) for c in pool for x in pattern.finditer(c)})
        candidates = [x for x in seen[id(pool)] if x != m.group(0)]
        candidates = [x for x in candidates if x.lower() != own and x.lower() not in claim.lower()]
        if not candidates:
            return None
        return claim[: m.start()] + rng.choice(candidates) + claim[m.end() :]

    return apply


_CLAUSES_TRAIN = [
    "and this effect persisted for more than ten years",
    "and the benefit was twice as large in children",
    "which was confirmed in a large randomized trial in Japan",
    "and it also reduced all-cause mortality by half",
    "especially in patients over 80 years of age",
    "and the same was seen in a cohort of pregnant women",
]
_CLAUSES_HELD = [
    "whereas the opposite held in postmenopausal women",
    "although only after daily supplementation with vitamin D for two years",
    "which in turn explained most of the observed cardiovascular deaths",
    "and it was cost-saving for national health systems",
    "as shown previously by genome-wide sequencing of 12,000 twins",
]


def _clause(clauses: list[str]) -> Perturb:
    def apply(claim: str, rng: random.Random, pool: Sequence[str]) -> str | None:
        base = claim.rstrip(" .;")
        return f"{base}, {rng.choice(clauses)}." if base else None

    return apply


# type -> {template name: (function, held_out)}
TEMPLATES: dict[str, dict[str, tuple[Perturb, bool]]] = {
    "negation": {
        "aux_not": (_neg_aux, False),
        "no_effect": (_neg_no, False),
        "not_true_prefix": (_neg_prefix, True),
    },
    "direction": {"up_down": (_flip(_DIR_TRAIN), False), "reduce_improve": (_flip(_DIR_HELD), True)},
    "number": {"scale": (_num_scale, False), "replace": (_num_replace, True)},
    "swap": {
        "drug": (_swap(_DRUG), False),
        "population": (_swap(_POPULATION), False),
        "disease": (_swap(_DISEASE), True),
    },
    "extra_clause": {"list_a": (_clause(_CLAUSES_TRAIN), False), "list_b": (_clause(_CLAUSES_HELD), True)},
}
HARD_LABEL = {
    "negation": "contradicts",
    "direction": "contradicts",
    "number": "contradicts",
    "swap": "not_relevant",
    "extra_clause": "neutral",
}


def hard_cases(claims: Sequence[CitClaim], *, held_out: bool, seed: int) -> list[Pair]:
    """Perturbed SUPPORT claims against their own evidence sentence (held_out picks the template set)."""
    rng = random.Random(seed)
    supported = [c for c in claims if c.label == "supports" and c.evidence]
    pool = [c.claim for c in supported]
    out = []
    for kind, templates in TEMPLATES.items():
        names = [n for n, (_, h) in templates.items() if h == held_out]
        for c in supported:
            for name in names:
                new = templates[name][0](c.claim, rng, pool)
                if new and new != c.claim:
                    ev = c.sentences[c.evidence[0]]
                    out.append(Pair(new, ev, HARD_LABEL[kind], f"hard:{kind}", c.id, name))
    return out


def sample_per_type(cases: Sequence[Pair], per_type: int, rng: random.Random) -> dict[str, list[Pair]]:
    """Up to `per_type` of the hard cases of each perturbation type, drawn with `rng` in HARD_LABEL order."""
    out = {}
    for kind in HARD_LABEL:
        items = [h for h in cases if h.source == f"hard:{kind}"]
        out[kind] = rng.sample(items, min(per_type, len(items)))
    return out


def copy_pairs(claims: Sequence[CitClaim], seed: int) -> list[Pair]:
    """A sentence of the cited abstract as the claim, against itself or with its lead-in clause cut ->
    supports. Without these, the near-verbatim swap cases (-> not_relevant) teach that high overlap means
    'not relevant', and verbatim quotes were judged not supported."""
    rng = random.Random(seed)
    out = []
    for c in claims:
        long = [s for s in c.sentences if len(s.split()) >= 8]
        if not long:
            continue
        s = rng.choice(long)
        head, sep, tail = s.partition(", ")
        claim = tail[0].upper() + tail[1:] if sep and len(tail.split()) >= 6 and rng.random() < 0.5 else s
        out.append(Pair(claim, s, "supports", "copy", c.id, "copy"))
    return out


# --- the training set ---------------------------------------------------------------------------------


def calibration_side(group: str, seed: int, fraction: float = 0.15) -> bool:
    """True for the claims/questions held back from fine-tuning to fit the aggregation and calibration."""
    return bucket("calib:" + group, seed) < fraction


def balanced(pairs: Sequence[Pair], total: int, seed: int, primary_share: float = 0.5) -> list[Pair]:
    """About total/4 pairs per label. Within a label, Citation-Integrity (real citing claims, the target
    domain) takes up to `primary_share`; the other sources share the rest evenly (round robin), so the
    small ones are not drowned; seeded."""
    rng = random.Random(seed)
    out: list[Pair] = []
    per_label = total // len(LABELS)
    for label in LABELS:
        by_source: dict[str, list[Pair]] = {}
        for p in pairs:
            if p.label == label:
                by_source.setdefault(p.source, []).append(p)
        for items in by_source.values():
            rng.shuffle(items)
        primary = by_source.pop("citint", [])
        picked: list[Pair] = primary[: int(per_label * primary_share)] if by_source else primary[:per_label]
        queues = [by_source[s] for s in sorted(by_source)] + [primary[len(picked) :]]
        while len(picked) < per_label and any(queues):
            for q in queues:
                if q and len(picked) < per_label:
                    picked.append(q.pop())
        out.extend(picked)
    rng.shuffle(out)
    return out


def fingerprint(pairs: Sequence[Pair]) -> str:
    return data_fingerprint(asdict(p) for p in pairs)
