"""The fault-injection table (tests/cli/faults.py) run through the installed `biocite` executable, printed
as case / expected exit / got / verdict with the totals the issue asks for: tracebacks, exit codes that
disagree with the outcome, silent wrong results and documents lost from an existing index.

    nice -n 5 .venv/bin/python bench/faults.py [--only SUBSTRING] > bench/faults_results.txt
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cli.faults import CASES, EXE, Lab, run_case  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="", help="run only cases whose name contains this")
    args = parser.parse_args()
    cases = [c for c in CASES if args.only in c.name]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="biocite-faults-") as tmp:
        lab = Lab(Path(tmp))
        lab.build_base()
        built = time.monotonic() - started
        outcomes = [run_case(lab, case) for case in cases]
    width = max(len(c.name) for c in cases)
    print(f"fault-injection table: {len(cases)} cases through {EXE}")
    print(f"python {platform.python_version()}, {platform.machine()}; base index built in {built:.1f} s\n")
    print(f"{'case':<{width}}  expected  got  seconds  verdict")
    for o in outcomes:
        verdict = "ok" if o.ok else "FAIL: " + "; ".join(o.problems)
        print(f"{o.name:<{width}}  {o.expected:>8}  {o.got:>3}  {o.seconds:>7.1f}  {verdict}")
    problems = [p for o in outcomes for p in o.problems]
    tracebacks = sum("traceback" in p for p in problems)
    wrong_codes = sum(o.got != o.expected for o in outcomes)
    # silent: a failure reported as success (exit 0 where the case must fail, e.g. a damaged index that
    # answered), or wrong hits from an index after a failed command
    wrong_hits = sum(
        (o.got == 0 and o.expected != 0) or any("search after the failure" in p for p in o.problems)
        for o in outcomes
    )
    lost = sum(any("index after the failure" in p for p in o.problems) for o in outcomes)
    print(
        f"\n{len(outcomes)} cases: {sum(o.ok for o in outcomes)} ok, {sum(not o.ok for o in outcomes)} failed; "
        f"{tracebacks} tracebacks, {wrong_codes} exit codes that disagree with the outcome, "
        f"{wrong_hits} silent wrong results, {lost} cases with documents lost from an existing index; "
        f"wall {time.monotonic() - started:.0f} s"
    )
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
