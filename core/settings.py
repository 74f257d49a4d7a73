"""One typed settings object, loaded from a YAML preset, then environment, then CLI overrides.

Precedence (highest first): dotted CLI overrides (`--set index.k1=1.2`), environment variables
(`BIOCITE_INDEX__K1=1.2`), the preset file (`configs/<preset>.yaml` or a path), the defaults below.
"""

from __future__ import annotations

import difflib
import os
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from biocite.errors import BiociteError, first_problem

# configs/ and data/ install as the packages biocite.configs and biocite.data (an editable checkout maps
# them to the repository's folders), so a built wheel finds them without the repository.
CONFIGS_DIR = Path(str(files("biocite.configs")))
DATA_DIR = Path(os.environ.get("BIOCITE_DATA_DIR", str(files("biocite.data"))))
DEFAULT_CORPUS = [DATA_DIR / "corpus" / "abstracts.jsonl", DATA_DIR / "pubmed_xml"]


def default_home() -> Path:
    return Path(os.environ.get("BIOCITE_HOME", Path.home() / ".cache" / "biocite"))


class CorpusSettings(BaseModel):
    paths: list[Path] = Field(default_factory=lambda: list(DEFAULT_CORPUS))


class IndexSettings(BaseModel):
    dir: Path | None = None  # default: <home>/index/<corpus name>
    # local: the engines below in the index folder; milvus: BM25 + dense in one Milvus collection
    engine: Literal["local", "milvus"] = "local"
    milvus_uri: str = ""  # engine=milvus: http://host:19530; empty = milvus-lite file in the index folder
    milvus_collection: str = "biocite"
    ray_workers: int = Field(default=2, ge=1)  # `index build --ray auto` without a cluster: local Ray CPUs
    # tantivy: on-disk BM25 for large corpora (index/lexical.py); its scores are Lucene's, not rank-bm25's
    bm25_backend: Literal["bm25s", "rank_bm25", "tantivy"] = "bm25s"
    k1: float = Field(default=1.5, ge=0)
    b: float = Field(default=0.75, ge=0, le=1)
    # rank-bm25's floor for negative IDF, as a share of the mean IDF
    epsilon: float = Field(default=0.25, ge=0)
    stem: bool = True
    dense_model: str = "minilm"  # "minilm", "mpnet", or a sentence-transformers folder
    # ivfpq: IVF-PQ candidates re-scored exactly from float16 vectors on disk (index/ivfpq.py), for large corpora
    faiss_kind: Literal["auto", "flat", "hnsw", "ivfpq"] = "auto"
    hnsw_above: int = Field(default=100_000, ge=0)  # auto: flat up to this many vectors, HNSW above
    ivf_nlist: int = Field(default=0, ge=0)  # ivfpq: inverted lists; 0 = about 4 sqrt(N)
    pq_m: int = Field(default=48, ge=1)  # ivfpq: PQ sub-quantizers (48 x 4 bits = 24 B a vector at 384-d)
    pq_bits: Literal[4, 8] = 4  # ivfpq: 4 = fast-scan codes
    # ivfpq: lists searched per query, and candidates re-scored exactly from the float16 vectors; both
    # chosen on the PubMedQA train split at 1M documents (bench/scale_engines.py: dense recall@10 0.77 at
    # 64/200, 0.91 at 1024/2000, 5 ms a query)
    ivf_nprobe: int = Field(default=1024, ge=1)
    rescore_k: int = Field(default=2000, ge=1)
    embed_batch_size: int = Field(default=64, ge=1)
    # bf16 autocast: 2.5x faster embedding on CPUs with native bf16 (avx512_bf16 / AMX), cosine to fp32
    # 0.99998 on the default corpus; "auto" uses it only where the CPU has it.
    embed_precision: Literal["auto", "fp32", "bf16"] = "auto"
    # where the dense model embeds: "cpu", "cuda" / "cuda:N" (an error when torch sees no such GPU), or
    # "auto" (the first GPU when torch sees one). On a GPU, "auto" precision is float16: 3,070 abstracts/s
    # on one H200 vs ~100/s on 2 CPU cores, cosine to fp32 >= 0.9995 (docs/SCALING.md).
    embed_device: str = Field(default="cpu", pattern=r"^(cpu|auto|cuda(:\d+)?)$")
    bm25_k: int = Field(default=50, ge=1)  # candidates from BM25
    dense_k: int = Field(default=50, ge=1)  # candidates from FAISS
    fusion: Literal["rrf", "weighted"] = "weighted"  # measured best on PubMedQA validation
    rrf_k: int = Field(default=60, ge=0)
    dense_weight: float = Field(default=0.6, ge=0, le=1)  # weighted fusion; tuned on the PubMedQA train split
    # neither reranker helped (bench/retrieval_pubmedqa.py)
    reranker: Literal["none", "dense", "cross"] = "none"
    rerank_k: int = Field(default=20, ge=1)  # how many fused candidates the reranker sees
    dense_rerank_model: str = "minilm"  # reranker=dense: "minilm", "mpnet" or a sentence-transformers folder
    reranker_path: Path | None = None  # default: <home>/models/reranker/


class LLMSettings(BaseModel):
    backend: Literal["llamacpp", "openai"] = "llamacpp"
    # a model id known to `biocite models`, or a GGUF path, or an endpoint's model name
    model: str = "qwen1.5b"
    base_url: str | None = None  # OpenAI-compatible endpoint, e.g. http://localhost:8000/v1
    api_key_env: str = "OPENAI_API_KEY"  # name of the environment variable holding the key
    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=400, ge=1)
    n_ctx: int = Field(default=4096, ge=512)
    threads: int = Field(default=2, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)


class AgentSettings(BaseModel):
    mode: Literal["generate", "extractive"] = "generate"
    max_rounds: int = Field(default=2, ge=1)  # retrieval rounds before abstaining
    docs_per_round: int = Field(default=10, ge=1)
    evidence_per_doc: int = Field(default=2, ge=1)
    min_evidence: int = Field(default=2, ge=1)  # evidence sentences needed to answer
    min_relevance: float = Field(default=0.35, ge=0, le=1)
    max_sentences: int = Field(default=10, ge=1)
    max_words: int = Field(default=150, ge=1)
    max_citations_per_sentence: int = Field(default=3, ge=1)
    # verified support probability needed to keep a sentence
    min_support: float = Field(default=0.5, ge=0, le=1)
    # who verifies a generated sentence against its cited evidence: the support model (core/support.py,
    # calibrated P(supports)) or the generating LLM's P(yes); an injected `judge` always wins (tests)
    verifier: Literal["support", "llm"] = "support"
    max_question_chars: int = Field(default=1000, ge=1)
    # Added by the agent (issue 3); read by agent/graph.py.
    # the best evidence sentence must reach this (bench/agent_calibrate.py)
    min_top_relevance: float = Field(default=0.55, ge=0, le=1)
    # the best hit of a query, when its best sentence reaches min_top_relevance, lends that relevance less
    # relevance_margin to its answer-bearing sentences before the relevance bars (agent/evidence.py
    # `lend_relevance`): its conclusion, worded otherwise than the question, is quoted rather than its aim
    lend_relevance: bool = True
    max_evidence: int = Field(default=8, ge=1)  # evidence sentences shown to the generator
    # relevance = w * cosine + (1 - w) * lexical overlap with the question
    cosine_weight: float = Field(default=0.6, ge=0.0, le=1.0)
    # generate mode: top evidence sentences also judged relevant by the LLM (0 = off). Off: on 30 TRAIN
    # questions it changed no abstention and cost one verdict (bench/agent_answers_results.txt, 2026-12-05)
    judge_top: int = Field(default=0, ge=0)
    # ... and dropped when the LLM's P(relevant) is below this
    judge_veto: float = Field(default=0.2, ge=0, le=1)
    # other abstracts tried when a sentence's own citations do not support it
    recite_candidates: int = Field(default=2, ge=0)
    # evidence beyond the top min_evidence must score >= best - margin
    relevance_margin: float = Field(default=0.2, ge=0, le=1)
    # sentences the generator is asked for (max_sentences is the hard cap)
    answer_sentences: int = Field(default=4, ge=1)
    # Issue 12: answer-bearing evidence, entity coverage and the bottom line (agent/findings.py, ...).
    answer_model: bool = True  # score sentences for answering the question (trained on first use)
    # evidence order = (1 - w) * relevance + w * P(answer-bearing); hand-set (not fitted), see README Figures
    answer_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # ... then (1 - r) * that + r * the retrieval score of the sentence's abstract (1.0 = its query's best hit);
    # r fitted on the TRAIN questions by bench/agent_retrieval_weight.py
    retrieval_weight: float = Field(default=0.4, ge=0.0, le=1.0)
    # list the key concepts no evidence abstract covers; abstain when no indexed abstract does
    coverage: bool = True
    # a concept needs a term in at most this share of the indexed documents; the lowest of 0.0005, 0.001,
    # 0.002, 0.005, 0.01, 0.03 keeps source abstracts of TRAIN questions uncovered least often (6.3 %)
    max_concept_df: float = Field(default=0.0005, ge=0.0, le=1.0)
    # the asked outcome ("prevent | fractures") is checked when a term is in at most this share: the grid
    # value with the best (swapped outcomes detected - source abstracts missed) on TRAIN questions
    # (bench/agent_concepts.py: 1.000 - 0.010 before the association and effect-verb readings; after them the
    # grid prefers 0.2 by 0.023, kept at 0.1: at 0.2 template words such as "response" become outcomes); 0 turns
    # the outcome check off
    max_outcome_df: float = Field(default=0.1, ge=0.0, le=1.0)
    # the setting ("in | oesophageal cancer", "among | older women") is checked when a term is in at most this
    # share, then the subject ("Does | aspirin prevent ..."): each the grid value with the best (swapped
    # settings / subjects detected - source abstracts missed) on TRAIN questions among those missing at most
    # 0.05 of them, the two together (bench/agent_concepts.py: setting 1.000 - 0.013 at 0.2 and at 1.0, ties
    # go to the stricter bar, which drops "in risk | groups" and "in | disease prevention"; subject
    # 0.851 - 0.023), the subject's at most 0.02: looser, the template words of patients' questions ("how
    # long", "is it normal") become the entity; 0 turns either check off
    max_setting_df: float = Field(default=0.2, ge=0.0, le=1.0)
    max_subject_df: float = Field(default=0.02, ge=0.0, le=1.0)
    # an evidence abstract other than the lead's is dropped when it lacks a concept of the question (at this
    # looser bar, every role) that the lead abstract names and adds no key or topic concept the lead lacks as
    # rare in the index as the rarest it lacks (coverage.off_topic): the grid value with the most off-topic
    # abstracts dropped minus twice the on-topic ones, on the hand-read other abstracts of 300 TRAIN answers
    # (bench/agent_topic.py); 0 turns the check off
    max_topic_df: float = Field(default=0.05, ge=0.0, le=1.0)
    models_dir: Path | None = None  # default: <home>/models/agent/
    # who reads a yes/no question's bottom line: in generate mode the LLM (its answer-word mass, under the head
    # `biocite train verdict --llm` fits) when that head beats the cues; "always" asks the LLM in extractive mode
    # too (one short call, ~2 s more an answer; the quotes stay verbatim), "generate" keeps extractive LLM-free
    llm_verdict: Literal["generate", "always"] = "generate"


class EvaluatorSettings(BaseModel):
    nugget_model: str = "minilm"
    # "support": citation support/correctness by the support model (core/support.py), completeness by the
    # trained head; both are trained once on first use. "head"/"llm": the earlier judges.
    judge: Literal["support", "llm", "head"] = "support"
    bootstrap_samples: int = Field(default=1000, ge=1)
    seed: int = 13
    nuggetizer: Literal["clause", "llm"] = "clause"
    # the nugget matcher's score: "token-recall" (no LLM) or "llm" (the configured LLM's P(yes) that the answer
    # states the nugget: closer to K-QA's physicians, one LLM call per (nugget, answer); bench/kqa_llm_matcher.py)
    nugget_score: Literal["token-recall", "llm"] = "token-recall"
    nugget_matcher: Path | None = None  # default: <home>/models/evaluator/nugget_matcher.json
    completeness_head: Path | None = None  # default: <home>/models/evaluator/completeness_head/
    citation_head: Path | None = None  # default: <home>/models/evaluator/citation_head/
    cache_dir: Path | None = None  # judge cache + log; default: <home>/cache/evaluator/
    # LLM judge: abstract windows judged per citation (most similar first); head: all
    llm_windows: int = Field(default=2, ge=1)
    # extra BM25 abstracts per question for correctness / misattribution (0 = trace only)
    retrieved_k: int = Field(default=0, ge=0)


class SupportSettings(BaseModel):
    """The support model (core/support.py, issue 13): training recipe and where the artifact lives."""

    path: Path | None = None  # default: <home>/models/support/
    # "shipped": install the GPU-trained artifact that ships with biocite (core/shipped/, checksum-verified);
    # "train": fine-tune on this machine with the recipe below (`biocite train support` always trains)
    source: Literal["shipped", "train"] = "shipped"
    backbone: str = "minilm"  # "minilm", "mpnet" or a sentence-transformers folder
    device: str = "auto"  # training device: "auto" (cuda when available), "cpu", "cuda"
    train_pairs: int = Field(default=2800, ge=40)  # balanced over the 4 labels
    epochs: int = Field(default=1, ge=1)
    batch_size: int = Field(default=16, ge=1)
    lr: float = Field(default=5e-5, gt=0)
    max_length: int = Field(default=80, ge=16)  # tokens of (claim, sentence)
    freeze_word_embeddings: bool = False  # the GPU recipe freezes them: the shipped delta leaves them out
    max_sentences: int = Field(default=10, ge=1)  # sentences scored per passage (most claim words first)
    calibration_claims: int = Field(default=150, ge=10)  # held-back train claims fitting the aggregator
    calibration_hard_per_type: int = Field(default=20, ge=0)
    # score with dynamic int8 Linear layers (CPU); the aggregator is fitted on the same int8 scores
    int8: bool = True
    seed: int = 13


class BatchSettings(BaseModel):
    """`biocite batch`: the official run header, retries and parallel workers (issue 5)."""

    team_id: str = "biocite"
    run_name: str | None = None  # default: the run file's name without extension
    contact_email: str = ""  # the validator warns while it is empty
    # extra tries of a topic that raised, before it is recorded as failed
    retries: int = Field(default=2, ge=0)
    workers: int = Field(default=4, ge=1)  # OpenAI-compatible endpoints only; the local model uses 1


class ServerSettings(BaseModel):
    """`biocite serve`: the HTTP API (core/server.py). Local models answer one request at a time."""

    host: str = "127.0.0.1"  # loopback unless told otherwise
    port: int = Field(default=8000, ge=0, le=65535)
    queue_size: int = Field(default=8, ge=0)  # requests waiting behind the running one; more get 429
    # /v1/search k limit (the question limit is agent.max_question_chars)
    max_k: int = Field(default=50, ge=1)
    max_pmids: int = Field(default=50, ge=1)  # /v1/documents PMIDs per request
    search_threads: int = Field(default=2, ge=1)  # concurrent /v1/search and /v1/documents requests
    # thread_ids kept in chat memory, oldest forgotten first
    max_conversations: int = Field(default=256, ge=1)
    retry_after_s: float = Field(default=5.0, gt=0)  # Retry-After per queued request until one has been timed
    token_env: str = "BIOCITE_API_TOKEN"  # when this variable is set, /v1 routes need `Bearer <token>`
    cors_origins: list[str] = Field(default_factory=list)  # CORS is off unless origins are listed
    # Host header names served (others get 400: no DNS rebinding); "*" serves any. `serve --host NAME`
    # adds NAME. Add the names clients use when serving beyond loopback.
    allowed_hosts: list[str] = Field(default_factory=lambda: ["localhost", "127.0.0.1", "::1"])
    # /v1/evaluate work per request: (sentence, cited PMID) pairs judged; more get 422 (a 50 x 20 answer
    # held the single worker for a minute)
    max_eval_citations: int = Field(default=100, ge=1)
    preload: bool = True  # load the index at startup rather than on the first request


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BIOCITE_", env_nested_delimiter="__", extra="forbid")

    preset: str = "default"
    home: Path = Field(default_factory=default_home)
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    evaluator: EvaluatorSettings = Field(default_factory=EvaluatorSettings)
    support: SupportSettings = Field(default_factory=SupportSettings)
    batch: BatchSettings = Field(default_factory=BatchSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        preset = getattr(init_settings, "init_kwargs", {}).get("preset") or os.environ.get(
            "BIOCITE_PRESET", "default"
        )
        return (
            init_settings,
            env_settings,
            YamlConfigSettingsSource(settings_cls, yaml_file=preset_path(preset)),
        )

    @property
    def index_dir(self) -> Path:
        return self.index.dir or self.home / "index" / "default"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def reranker_dir(self) -> Path:
        return self.index.reranker_path or self.models_dir / "reranker"


def preset_path(preset: str) -> Path:
    """A preset name (`default`, `fast`, `test`, `openai`) or a path to a YAML file."""
    path = Path(preset)
    if path.suffix in {".yaml", ".yml"}:
        if not path.is_file():
            raise BiociteError(f"preset file not found: {path}")
        return path
    path = CONFIGS_DIR / f"{preset}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CONFIGS_DIR.glob("*.yaml")))
        raise BiociteError(f"unknown preset {preset!r}; known presets: {known}")
    return path


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Turn ["index.k1=1.2", "llm.model=qwen0.5b"] into a nested dict; values parsed as YAML scalars."""
    nested: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise BiociteError(f"bad override {pair!r}: expected dotted.key=value")
        node = nested
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(raw)
    return nested


def _known_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted setting key, e.g. `index.k1`, `llm.model`."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        keys.append(key)
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            keys.extend(_known_keys(sub, f"{key}."))
    return keys


def check_keys(nested: dict[str, Any], known: list[str], prefix: str = "", where: str = "") -> None:
    """Refuse an unknown setting key (instead of ignoring it), naming the closest valid key."""

    for name, value in nested.items():
        key = f"{prefix}{name}"
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else "; `biocite config show` lists the settings"
            raise BiociteError(f"{where}unknown setting {key!r}{hint}")
        if isinstance(value, dict) and any(k.startswith(f"{key}.") for k in known):
            check_keys(value, known, f"{key}.", where)


def _check_preset(preset: str) -> None:
    """A typo in a preset file is refused like one in `-s` (nested sections would ignore it silently)."""
    path = preset_path(preset)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise BiociteError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if data is not None and not isinstance(data, dict):
        raise BiociteError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    check_keys(data or {}, _known_keys(Settings), where=f"{path}: ")


def load_settings(preset: str | None = None, overrides: list[str] | None = None) -> Settings:
    """The settings for one run. Validation errors become one-line BiociteErrors."""

    kwargs = parse_overrides(overrides or [])
    check_keys(kwargs, _known_keys(Settings))
    if preset:
        kwargs["preset"] = preset
    _check_preset(preset or os.environ.get("BIOCITE_PRESET", "default"))
    try:
        return Settings(**kwargs)
    except ValidationError as exc:
        field, why = first_problem(exc)
        raise BiociteError(f"invalid setting {field}: {why}") from None
