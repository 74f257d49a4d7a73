"""Every figure of issue 13 for the installed support model (trained on first use), with its split.

    python bench/support_model.py [--quick] [--train --backbone mpnet --device cuda]

Same arguments as `python -m biocite.support_eval`; writes bench/support_model_results.json beside this
file (the results .txt holds the figures quoted in the README, with the machine they were measured on).
"""

from __future__ import annotations

import sys
from pathlib import Path

from biocite.support_eval import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--json" not in args:
        args += ["--json", str(Path(__file__).with_name("support_model_results.json"))]
    sys.exit(main(args))
