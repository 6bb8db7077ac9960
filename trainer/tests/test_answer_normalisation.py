"""The trainer's answer normalisation (rollouts/answer_text.py) equals the scorer's on the shared hand-worked cases
(test/fixtures/answer-normalisation.json; test/protocol/answer-normalisation.test.ts holds the TypeScript)."""
import json

import pytest

from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.answer_text import normalize_answer

CASES = json.loads((repo_root() / "test" / "fixtures" / "answer-normalisation.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["why"][:40] for case in CASES])
def test_the_trainer_normalises_as_the_scorer_does(case):
    assert normalize_answer(case["text"]) == case["normalized"], case["why"]
