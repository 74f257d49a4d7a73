"""biocite's BioACE-style evaluator, re-implemented from the metric definitions.

Modules:
- `runs`: run-file readers (biocite JSON / JSONL, TREC BioGen 2024 and 2025, BioACE) -> `Run`.
- `evaluate`: `Evaluator` (completeness, correctness, citation support, nuggets), `summarise` (bootstrap 95%
  CIs, undetermined counts, abstentions apart), `compare` (paired differences A - B).
- `nuggets`: clause nuggetizer, token recall of a gold nugget against the whole answer, `MatchModel` (BGMM over
  those recalls -> P(match), threshold, the idf table).
- `calibrate`: fits the `MatchModel` on K-QA (Optuna, multi-objective) and reports held-out agreement.
- `heads`: training data and training of the completeness (K-QA, proxy) and citation-support (CitInt) heads.
- `judges`: `HeadJudge`, `LLMJudge`, `JudgeCache` (JSONL, keyed by model, prompt version and input).
- `sources`: `AbstractSource` protocol (`DictSource`, `StoreSource`) and 3-sentence windows.
- `report`: the self-contained `report.html`; `pipeline`: what the CLI calls.

A biocite run file is JSON `{"run_name": str, "answers": [{"topic_id", "question", "answer": Answer}]}`, or
JSONL with one `{"topic_id", "question", "answer": Answer}` per line (`biocite.records.Answer`).
"""
