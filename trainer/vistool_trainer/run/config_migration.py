"""Loading the run config a checkpoint was trained with, when the schema has moved on since: keys
the run config schema no longer has (REMOVED_KEYS) are dropped with a warning naming each, so an
old checkpoint still evaluates and serves. Nothing else is forgiven: a config that is invalid for
any other reason fails with the schema's own error. Never used for a config someone is about to
train with — there a removed key stays an error (unknown keys are errors, contract 1).
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import RunConfig
from .run_config import ConfigError, read_config_file, resolve_config, validate_config

# Dotted key → why it went and what replaced it (with the commit, so the history can be read).
REMOVED_KEYS: dict[str, str] = {
    "rl.no_tool_reward_scale": "removed in b3a35ae: no-tool down-weighting is the env server's rewards.tool.no_tool_factor "
                               "(it scales only positive rewards); the trainer no longer rescales rewards",
}


def drop_removed_keys(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(a copy of `raw` without the keys in REMOVED_KEYS, the dotted keys dropped)."""
    migrated = copy.deepcopy(raw)
    dropped = []
    for dotted in REMOVED_KEYS:
        *parents, leaf = dotted.split(".")
        section: Any = migrated
        for parent in parents:
            section = section.get(parent) if isinstance(section, dict) else None
        if isinstance(section, dict) and leaf in section:
            del section[leaf]
            dropped.append(dotted)
    return migrated, dropped


def migrate_config(raw: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    """`raw` as the current schema accepts it: unchanged when it is valid; without its removed keys
    (one `warn` per key) when those are all that is wrong; otherwise the schema error of `raw`."""
    try:
        validate_config(raw)
        return raw
    except ConfigError as original:
        migrated, dropped = drop_removed_keys(raw)
        if not dropped:
            raise
        try:
            validate_config(migrated)
        except ConfigError:
            raise original from None
    for dotted in dropped:
        *parents, leaf = dotted.split(".")
        section: Any = raw
        for parent in parents:
            section = section[parent]
        warn(f"run config key {dotted} (value {section[leaf]!r}) is no longer in schemas/run-config.schema.json and was ignored: "
             f"{REMOVED_KEYS[dotted]}")
    return migrated


def load_saved_config(path: Path, warn: Callable[[str], None], overrides: dict[str, Any] | None = None) -> RunConfig:
    """The resolved run config of an existing run or checkpoint (`path`: its config.json, or one
    derived from it), tolerating keys the schema has since removed."""
    return resolve_config(migrate_config(read_config_file(path, overrides), warn), Path.cwd())
