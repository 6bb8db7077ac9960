"""The demo's policy reads exactly the token ids it read when its numbers were published
(trainer/tests/golden/demo-prompts.json, written by demo_prompts.py before the presentation moved
to the env server): the opening prompt and the prompt after one tool observation in both arms, and
the sequences SFT trains on. A difference names the first case and position that moved."""
import json

from demo_prompts import GOLDEN, compute, demo_data


def _first_difference(expected, actual, where=""):
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected.keys() | actual.keys():
            if key not in expected or key not in actual:
                return f"{where}.{key}: present in only one of golden and now"
            found = _first_difference(expected[key], actual[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (a, b) in enumerate(zip(expected, actual)):
            found = _first_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        return None if len(expected) == len(actual) else f"{where}: {len(expected)} items in the golden file, {len(actual)} now"
    return None if expected == actual else f"{where}: golden {expected!r}, now {actual!r}"


def test_the_demo_policy_reads_the_golden_token_ids(tmp_path):
    train_path, eval_path = demo_data(tmp_path)
    golden = json.loads(GOLDEN.read_text())
    actual = compute(tmp_path, train_path, eval_path)
    assert golden["arms"]["tools"]["after_observation"]["ids"] != golden["arms"]["text"]["after_observation"]["ids"]
    difference = _first_difference(golden, json.loads(json.dumps(actual)))
    assert difference is None, f"the demo's prompts moved: {difference}"
