"""Local LLM speed and yes/no calibration on the installed GGUF models (prints figures, no asserts).

    python bench/llm_speed.py [smollm2 qwen0.5b qwen1.5b]

For each model: load time, RSS growth, prompt and generation tokens/s on a ~280-token prompt (llama.cpp's
own timings, prompt cache off; once as answered, once forced to 128 tokens), then P(yes) from
`yes_probability` on 4 easy entailment pairs. The machine is shared (2 cores): the load average is printed
with every figure.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import psutil
from langchain_core.messages import HumanMessage, SystemMessage

from biocite.llm import LlamaCppChatModel, unload_models, yes_probability
from biocite.models import model_path
from biocite.settings import Settings

ABSTRACT = (
    "Background: Aspirin is widely used for the secondary prevention of cardiovascular events, but its role "
    "early after suspected acute myocardial infarction was uncertain. Methods: In a randomised factorial "
    "trial, 17,187 patients entering 417 hospitals up to 24 hours after the onset of suspected acute "
    "myocardial infarction were allocated to one hour of intravenous streptokinase, one month of oral "
    "enteric-coated aspirin 160 mg/day, both active treatments, or neither. Results: Aspirin alone produced "
    "a highly significant 23% reduction in 5-week vascular mortality (804 vascular deaths among 8587 "
    "patients allocated aspirin versus 1016 among 8600 allocated placebo), and streptokinase alone produced "
    "a similar reduction. The combination was significantly better than either agent alone. Aspirin "
    "significantly reduced non-fatal reinfarction and non-fatal stroke, and was not associated with any "
    "significant increase in cerebral haemorrhage or in bleeds requiring transfusion. Conclusions: Early "
    "aspirin reduces mortality after suspected myocardial infarction at low risk and cost."
)
QUESTION = "Does early aspirin reduce mortality after myocardial infarction? Answer in three sentences."

JUDGE = "You check whether evidence supports a claim. Answer with exactly one word: yes or no."
PAIRS = [  # (evidence, claim, supported)
    ("Aspirin produced a 23% reduction in 5-week vascular mortality compared with placebo.",
     "Aspirin reduced mortality.", True),
    ("Aspirin did not reduce mortality; deaths were more frequent in the aspirin group than with placebo.",
     "Aspirin reduced mortality.", False),
    ("Metformin lowered HbA1c by 1.1 percentage points compared with placebo over 24 weeks.",
     "Metformin improves glycaemic control.", True),
    ("Vitamin D supplementation had no effect on the incidence of fractures in older adults.",
     "Vitamin D supplementation prevents fractures.", False),
]  # fmt: skip


def load_avg() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def bench(model_id: str, settings: Settings) -> None:
    path = model_path(settings, model_id)
    rss0 = psutil.Process().memory_info().rss
    started = time.perf_counter()
    model = LlamaCppChatModel(model_path=str(path), n_ctx=4096, threads=settings.llm.threads, max_tokens=128)
    model._server()
    load_s = time.perf_counter() - started
    rss = (psutil.Process().memory_info().rss - rss0) / 1e6
    size = path.stat().st_size / 1e6
    print(f"\n{model_id}: {path.name} ({size:.0f} MB), load {load_s:.1f} s, RSS +{rss:.0f} MB")

    messages = [SystemMessage("You answer biomedical questions from the abstract given."),
                HumanMessage(f"Abstract: {ABSTRACT}\n\nQuestion: {QUESTION}")]  # fmt: skip
    answer = ""
    for label, extra in [("answer", {}), ("128 tok", {"ignore_eos": True, "max_tokens": 128})]:
        started = time.perf_counter()
        reply = model.invoke(messages, cache_prompt=False, **extra)
        wall = time.perf_counter() - started
        t = reply.response_metadata["timings"]
        answer = answer or reply.text
        print(f"  {label:>7}: prompt {t['prompt_n']} tok at {t['prompt_per_second']:.1f} tok/s, "
              f"generation {t['predicted_n']} tok at {t['predicted_per_second']:.1f} tok/s, "
              f"wall {wall:.1f} s ({load_avg()})")  # fmt: skip
    print(f"  answer: {answer[:300]!r}")

    right = 0
    for evidence, claim, supported in PAIRS:
        prompt = (
            f"Evidence: {evidence}\nClaim: {claim}\nDoes the evidence support the claim? Answer yes or no."  # noqa: E501
        )
        started = time.perf_counter()
        p = yes_probability(model, [SystemMessage(JUDGE), HumanMessage(prompt)])
        ok = p is not None and (p > 0.5) == supported
        right += ok
        shown = "undetermined" if p is None else f"{p:.3f}"
        print(f"  P(yes)={shown:>12} gold={'yes' if supported else 'no ':3} {'ok ' if ok else 'MISS'} "
              f"{time.perf_counter() - started:.1f} s  {claim} | {evidence[:60]}...")  # fmt: skip
    print(f"  entailment: {right}/{len(PAIRS)} right")
    unload_models()


def main() -> None:
    settings = Settings()
    for model_id in sys.argv[1:] or ["smollm2", "qwen0.5b", "qwen1.5b"]:
        bench(model_id, settings)


if __name__ == "__main__":
    main()
