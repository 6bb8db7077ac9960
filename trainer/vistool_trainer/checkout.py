"""Where the vistool checkout is: the trainer reads the run-config schema, the env server bundle
and the CLI from the repository it was installed from (an editable install), never from a copy."""
from __future__ import annotations

from pathlib import Path


def repo_root() -> Path:
    """The repository root: the folder above trainer/ (where bin/ and dist/ live)."""
    return Path(__file__).resolve().parents[2]
