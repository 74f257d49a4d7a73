"""Fault injection through the installed `biocite` executable: the table in tests/cli/faults.py.

Each case runs the real console script in a subprocess and must end with its documented exit code, no
traceback, one `error:` line on stderr when it fails, and its own check (documents kept, no wrong hit).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.faults import CASES, Case, Lab, run_case


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    lab = Lab(Path(tmp_path_factory.mktemp("faults")))
    lab.build_base()
    return lab


def test_the_table_has_at_least_40_cases() -> None:
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fault(lab: Lab, case: Case) -> None:
    outcome = run_case(lab, case)
    assert outcome.ok, f"{case.name}: " + "; ".join(outcome.problems)
