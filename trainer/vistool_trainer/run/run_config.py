"""Run config: read the JSON, fill defaults from schemas/run-config.schema.json (the single source
of truth, docs/ARCHITECTURE.md, contract 1), validate, and resolve paths. Unknown keys are errors.
Errors name the key path and what would be valid.

The `rewards` section is the reward module's own schema, referenced (`$ref`) from the run config
schema and resolved here through a `referencing` registry that reads schema files from this
checkout only — never from the network.
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from ..algorithms.sft_schedule import TARGET_KEYS
from ..checkout import repo_root
from ..config import SCHEMA_PATH, ConfigError, RunConfig, from_dict, run_config_schema

REWARD_SCHEMA_PATH = repo_root() / "env" / "rewards" / "config.schema.json"


def load_schema() -> dict[str, Any]:
    return copy.deepcopy(run_config_schema())


def _schema_base_uri(schema: dict[str, Any]) -> str:
    return str(schema.get("$id") or SCHEMA_PATH.as_uri())


def _retrieve_from_checkout(uri: str) -> Resource:
    """Map a schema URI under the run config schema's base (its `$id`) to a file in this checkout."""
    base = urlparse(_schema_base_uri(load_schema()))
    wanted = urlparse(uri)
    if (wanted.scheme, wanted.netloc) != (base.scheme, base.netloc):
        raise NoSuchResource(ref=uri)
    path = (repo_root() / wanted.path.lstrip("/")).resolve()
    if repo_root().resolve() not in path.parents or not path.is_file():
        raise NoSuchResource(ref=uri)
    return Resource.from_contents(json.loads(path.read_text()))


@lru_cache(maxsize=1)
def schema_registry() -> Registry:
    return Registry(retrieve=_retrieve_from_checkout)  # type: ignore[call-arg]


def _resolve_refs(node: dict[str, Any], base_uri: str) -> dict[str, Any]:
    """`node` with `allOf: [{$ref}]` merged in (the form the run config schema uses to reference
    another schema while keeping its own description and default)."""
    merged = {key: value for key, value in node.items() if key not in ("allOf", "$ref")}
    refs = [part["$ref"] for part in node.get("allOf", []) if "$ref" in part] + ([node["$ref"]] if "$ref" in node else [])
    for ref in refs:
        target = schema_registry().resolver(base_uri=base_uri).lookup(ref).contents
        for key, value in target.items():
            merged.setdefault(key, value)
    return merged


def resolved_schema(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run config schema with every referenced sub-schema inlined (for defaults and tests)."""
    schema = schema or load_schema()
    base = _schema_base_uri(schema)

    def walk(node: dict[str, Any]) -> dict[str, Any]:
        node = _resolve_refs(node, base)
        if "properties" in node:
            node = {**node, "properties": {key: walk(sub) for key, sub in node["properties"].items()}}
        return node

    return walk(schema)


def _fill_defaults(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    filled = dict(value)
    for key, sub in schema.get("properties", {}).items():
        if key not in filled and "default" in sub:
            filled[key] = copy.deepcopy(sub["default"])
        if sub.get("type") == "object" and isinstance(filled.get(key), dict):
            filled[key] = _fill_defaults(filled[key], sub)
    return filled


def validate_config(config: dict[str, Any]) -> None:
    validator = jsonschema.Draft7Validator(load_schema(), registry=schema_registry())
    errors = sorted(validator.iter_errors(config), key=lambda error: list(error.absolute_path))
    if errors:
        lines = []
        for error in errors[:10]:
            where = ".".join(str(part) for part in error.absolute_path) or "(top level)"
            lines.append(f"  {where}: {error.message}")
        raise ConfigError("run config is invalid (see schemas/run-config.schema.json; rewards: env/rewards/config.schema.json):\n" + "\n".join(lines))


def resolve_config(raw: dict[str, Any], base_dir: Path | None = None) -> RunConfig:
    """Validate `raw`, fill every default, validate again, make paths absolute, and type it."""
    validate_config(raw)
    config = _fill_defaults(raw, resolved_schema())
    validate_config(config)
    sft = config["sft"]
    for key in TARGET_KEYS:
        if sft.get(key) is not None and sft["probe_tasks"] == 0:
            raise ConfigError(f"run config is invalid: sft.{key} ends a phase on the SFT probe, but sft.probe_tasks is 0 "
                              f"(no probe runs); set sft.probe_tasks (e.g. 64) or sft.{key} to null")
    base = base_dir or Path.cwd()
    config["output_dir"] = str((base / config["output_dir"]).resolve()) if not Path(config["output_dir"]).is_absolute() else config["output_dir"]
    for key in ("train", "eval"):
        path = config["data"].get(key)
        if path and not Path(path).is_absolute():
            config["data"][key] = str((base / path).resolve())
    resolved = from_dict(RunConfig, config)
    _check_search_budget(resolved)
    _check_fresh_tasks(resolved)
    return resolved


def _check_fresh_tasks(config: RunConfig) -> None:
    """rl/fresh-tasks-too-many, where the generated training split's size is known before any task exists."""
    rl, sft = config.rl, config.sft
    if config.data.train or not rl.enabled or rl.fresh_tasks == 0:
        return
    n_train = config.data.generate.n_train
    needed = 1 + (sft.probe_tasks if sft.enabled else 0)
    if n_train - rl.fresh_tasks < needed:
        raise ConfigError(f"run config is invalid: rl.fresh_tasks ({rl.fresh_tasks}) keeps too many of data.generate.n_train's {n_train} "
                          f"training tasks from SFT, which needs at least {needed} (one to train on"
                          f"{f', and sft.probe_tasks {sft.probe_tasks} for its probe' if sft.enabled and sft.probe_tasks else ''}). "
                          f"Raise data.generate.n_train to {rl.fresh_tasks + needed} or more, or lower rl.fresh_tasks [rl/fresh-tasks-too-many]")


# `data gen --max-pixels`'s default: env/tasks/search/profiles.ts, DEFAULT_MAX_PIXELS.
SEARCH_GENERATOR_MAX_PIXELS = 50176


def _check_search_budget(config: RunConfig) -> None:
    """Search tasks are generated for one image budget: the generator keeps only tasks whose answer is
    illegible in the whole image at that budget and legible in the gold zoom. A policy shown images
    at another budget would read them without a zoom (or not even in it), so the two must agree."""
    generate = config.data.generate
    if generate.kind != "search":
        return
    from ..rollouts.presentation import policy_pixel_bounds  # the policy's side, as its processor is built

    assumed = generate.max_pixels if generate.max_pixels is not None else SEARCH_GENERATOR_MAX_PIXELS
    shown = policy_pixel_bounds(config.policy)["max_pixels"]
    if assumed != shown:
        where = "policy.micro.max_pixels" if config.policy.model == "micro" else "policy.max_pixels"
        raise ConfigError(f"run config is invalid: data.generate.max_pixels ({assumed}"
                          f"{'' if generate.max_pixels is not None else ', the generator default'}) is the image budget the search "
                          f"tasks are generated for, but the policy is shown images at {shown} pixels ({where}); set one to the other")


def read_config_file(path: Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run config file as written (no defaults, not validated), with dotted `overrides` applied."""
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"run config {path} does not exist") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"run config {path} is not valid JSON: {error}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"run config {path} must be a JSON object; got {type(raw).__name__}")
    for dotted, value in (overrides or {}).items():
        target = raw
        *parents, leaf = dotted.split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return raw


def load_config(path: Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    return resolve_config(read_config_file(path, overrides), Path.cwd())
