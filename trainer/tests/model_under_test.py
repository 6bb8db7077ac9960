"""Which policy a suite's runs use: the embedded micro policy (the default), or the Qwen-faithful
fixture (`VISTOOL_TEST_POLICY=qwen-micro`, what `make test-qwen` sets): a tiny Qwen2.5-VL with
Qwen2.5's real tokenizer, its 151,936-row padded vocabulary and Qwen2.5-VL's image-processor
defaults (vistool_trainer/model/qwen_fixture.py). Tests that build a run config or a policy take
its `policy` section from here instead of naming "micro", so the same tests run on both.

The fixture is written once per machine into VISTOOL_QWEN_FIXTURE_DIR (default: a folder under the
system's temporary directory), under a file lock so parallel test processes share one copy.
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Any

QWEN_MICRO = "qwen-micro"


def policy_under_test() -> str:
    name = os.environ.get("VISTOOL_TEST_POLICY", "micro")
    if name not in ("micro", QWEN_MICRO):
        raise ValueError(f"VISTOOL_TEST_POLICY is {name!r}: use 'micro' (the default) or {QWEN_MICRO!r}")
    return name


def on_qwen_fixture() -> bool:
    return policy_under_test() == QWEN_MICRO


def qwen_fixture_dir() -> Path:
    """The fixture's save_pretrained folder, written on first use (`python -m vistool_trainer fixture qwen-micro`)."""
    from vistool_trainer.model.qwen_fixture import FIXTURE_VERSION, write_qwen_fixture

    directory = Path(os.environ.get("VISTOOL_QWEN_FIXTURE_DIR") or Path(tempfile.gettempdir()) / "vistool-qwen-micro-fixture")
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.parent / f".{directory.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = directory / "vistool-fixture.json"
        saved = json.loads(marker.read_text()) if marker.exists() else {}
        if (saved.get("fixture"), saved.get("version")) != (QWEN_MICRO, FIXTURE_VERSION):
            write_qwen_fixture(directory)
    return directory


def policy_section(**extra: Any) -> dict[str, Any]:
    """A run config's `policy` section for the policy under test (micro: a 400-token vocabulary)."""
    if on_qwen_fixture():
        return {"model": str(qwen_fixture_dir()), **extra}
    return {"model": "micro", "micro": {"vocab_size": 400}, **extra}
