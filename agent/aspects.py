"""What a chat follow-up "What about X?" asks of (issue 12): X in place of the asked outcome, or of the entity.

"What about falls?" after "Does vitamin D supplementation prevent fractures in older people?" asks of vitamin D
and falls; "What about montelukast?" after "Does budesonide reduce exacerbations?" asks of montelukast and
exacerbations. The words stand where the entity stands in either, and no lexicon here tells a drug from an
outcome. This model reads it: a logistic regression over the phrase's embedding, P(the phrase names an outcome).

Training data (reproducible from the repository, `train_aspects`): the asked subject (the entity, when it names no
disease or people) and the asked outcome of each question of
- the PubMedQA development questions of the TRAIN part of the shared split by question
  (`biocite.pubmedqa.split_questions`, seed 13); the held-out part is never used for training;
- the K-QA questions and the BioGen 2024 and 2025 topics (none of their figures reads follow-ups).
The labels are silver: the roles `agent/coverage.py` reads from each question's wording. C is chosen by 5-fold
cross-validation on the training rows (balanced accuracy). `bench/follow_up_aspects.py` measures it.

The artifact is a `biocite.heads.LinearModel` JSON file, trained on first use (seconds) when missing or of another
version.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biocite import kqa
from biocite.agent.coverage import asked_outcome, asked_subject, names_disease_or_people
from biocite.agent.evidence import TextEncoder
from biocite.agent.findings import agent_models_dir
from biocite.heads import LinearArtifact, LinearModel, choose_c
from biocite.pubmedqa import SPLIT_SEED, TRAIN_SHARE, load_questions, split_questions
from biocite.settings import Settings
from biocite.topics import load_topics

KIND = "aspect"
# 2: abbreviated diseases ("COPD") are no entity examples; 3: "between A and B" outcomes; 4: a verb's noun is no
# cut ("valve replacement"), nor are "damage" heading an outcome and lay phrases; "every" / "later" ... are cut;
# 5: a question opening after a comma, or with "And", has a subject ("I have asthma, can I take | ibuprofen?");
# 6: "problems" is no outcome; 7: "call" is a verb ("general practitioners | call | patients"); 8: "complementary
# and alternative medicine" is one phrase; 9: "risk of | X" and "heal | X" name the outcome; 10: the outcome goes
# on across "with" only next to its opener ("affect patients with | an ileal pouch" is no outcome); 11: "how long" is
# no entity example
ARTIFACT_VERSION = 11
LABELS = ["entity", "outcome"]
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 1.0)
EMBEDDERS = ("minilm", "mpnet")  # the tests' hashing embedder places no phrase by meaning


class AspectModel(LinearArtifact):
    """P(a phrase names an outcome, not the entity asked about)."""

    def outcome_probabilities(self, phrases: Sequence[str], encoder: TextEncoder) -> list[float]:
        if not phrases:
            return []
        return [float(p) for p in self.linear.predict_proba(encoder.encode(list(phrases)))[:, 1]]

    @classmethod
    def load(cls, path: Path) -> AspectModel | None:
        """None for an artifact of another version, label set or layout (the caller retrains it)."""
        linear = LinearModel.load(path, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS)
        return None if linear is None else cls(linear)


def training_questions() -> list[str]:
    """The TRAIN part of the PubMedQA split, the K-QA questions and the BioGen topics."""
    train, _ = split_questions(load_questions())
    biogen = [t.question for spec in ("biogen2024", "biogen2025") for t in load_topics(spec).topics]
    return [q.question for q in train] + [q.question for q in kqa.load_questions()] + biogen


def labelled_phrases(questions: Sequence[str]) -> list[tuple[str, int]]:
    """(phrase, 1 for the asked outcome / 0 for the asked entity) of each question that names either."""
    rows = []
    for question in questions:
        subject, outcome = asked_subject(question), asked_outcome(question)
        if subject and not names_disease_or_people(subject.split()):
            rows.append((subject, 0))
        if outcome:
            rows.append((outcome, 1))
    return rows


def fit_aspects(x: np.ndarray, y: np.ndarray, c: float) -> LinearModel:
    return LinearModel.fit(x, y, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS, c=c)


def train_aspects(
    encoder: TextEncoder, embedder_name: str, questions: Sequence[str] | None = None
) -> AspectModel:
    from sklearn.metrics import balanced_accuracy_score

    rows = labelled_phrases(training_questions() if questions is None else questions)
    x, y = encoder.encode([p for p, _ in rows]), np.asarray([label for _, label in rows])
    c, cv_scores = choose_c(x, y, C_GRID, fit_aspects, balanced_accuracy_score)
    meta = {
        "embedder": embedder_name,
        "split": {"seed": SPLIT_SEED, "train_share": TRAIN_SHARE},
        "phrases": len(rows),
        "outcomes": int(y.sum()),
        "C": c,
        "C_cv_scores": cv_scores,
    }
    return AspectModel(fit_aspects(x, y, c).model_copy(update={"meta": meta}))


def load_aspects(settings: Settings, embedder: Any, encoder: TextEncoder) -> AspectModel | None:
    """The cached model for this embedder, trained and saved on first use; None for an embedder it cannot use."""
    name = str(getattr(embedder, "name", ""))
    if name not in EMBEDDERS:
        return None
    path = agent_models_dir(settings) / f"aspects-{name}.json"
    if path.is_file() and (model := AspectModel.load(path)) is not None:
        return model
    model = train_aspects(encoder, name)
    model.save(path)
    return model
