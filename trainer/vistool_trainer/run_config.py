"""Run config: read the JSON, fill defaults from schemas/run-config.schema.json (the single source
of truth, ARCHITECTURE contract 1), validate, and resolve paths. Unknown keys are errors.
Errors name the key path and what would be valid.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema

from .environment_check import repo_root

SCHEMA_PATH = repo_root() / "schemas" / "run-config.schema.json"


class ConfigError(ValueError):
    pass


def load_schema() -> dict[str, Any]:
    if not SCHEMA_PATH.exists():
        raise ConfigError(f"run config schema {SCHEMA_PATH} is missing: the trainer must run from a vistool checkout")
    return json.loads(SCHEMA_PATH.read_text())


def _fill_defaults(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    filled = dict(value)
    for key, sub in schema.get("properties", {}).items():
        if key not in filled and "default" in sub:
            filled[key] = copy.deepcopy(sub["default"])
        if sub.get("type") == "object" and isinstance(filled.get(key), dict):
            filled[key] = _fill_defaults(filled[key], sub)
    return filled


def validate_config(config: dict[str, Any]) -> None:
    validator = jsonschema.Draft7Validator(load_schema())
    errors = sorted(validator.iter_errors(config), key=lambda error: list(error.absolute_path))
    if errors:
        lines = []
        for error in errors[:10]:
            where = ".".join(str(part) for part in error.absolute_path) or "(top level)"
            lines.append(f"  {where}: {error.message}")
        raise ConfigError("run config is invalid (see schemas/run-config.schema.json):\n" + "\n".join(lines))


def resolve_config(raw: dict[str, Any], base_dir: Path | None = None) -> dict[str, Any]:
    """Validate `raw`, fill every default, validate again, and make paths absolute."""
    validate_config(raw)
    config = _fill_defaults(raw, load_schema())
    validate_config(config)
    base = base_dir or Path.cwd()
    config["output_dir"] = str((base / config["output_dir"]).resolve()) if not Path(config["output_dir"]).is_absolute() else config["output_dir"]
    for key in ("train", "eval"):
        path = config["data"].get(key)
        if path and not Path(path).is_absolute():
            config["data"][key] = str((base / path).resolve())
    return config


def load_config(path: Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"run config {path} does not exist") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"run config {path} is not valid JSON: {error}") from None
    for dotted, value in (overrides or {}).items():
        target = raw
        *parents, leaf = dotted.split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return resolve_config(raw, Path.cwd())
