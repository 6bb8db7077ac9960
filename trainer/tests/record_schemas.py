"""The run directory's record contracts, read from the same JSON Schemas the TypeScript side
generates its types from (schemas/rollout-record.schema.json, schemas/metrics-line.schema.json)."""
import json
from functools import cache

import jsonschema

from vistool_trainer.checkout import repo_root


@cache
def _validator(name: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads((repo_root() / "schemas" / name).read_text()))


def schema_problems(name: str, value: object) -> list[str]:
    """Every way `value` breaks the schema, as 'path: message' lines (empty when it is valid)."""
    return [f"{'.'.join(map(str, error.absolute_path)) or '(top level)'}: {error.message}"
            for error in _validator(name).iter_errors(value)]


def assert_valid_rollout_records(records: list[dict]) -> None:
    for record in records:
        assert schema_problems("rollout-record.schema.json", record) == [], record.get("prompt_id")


def assert_valid_metrics_lines(lines: list[dict]) -> None:
    for line in lines:
        assert schema_problems("metrics-line.schema.json", line) == [], line
