"""The typed run config (vistool_trainer/config.py) is the schema's, key for key: every section's
fields are the schema's properties, every default is the schema's default, and a resolved config
goes to the typed form and back to the same JSON. The schema is read here on its own terms
(schemas/run-config.schema.json), not through the dataclasses."""
import dataclasses
import json
import typing

import pytest

from vistool_trainer.checkout import repo_root
from vistool_trainer.config import PolicyConfig, RlConfig, RunConfig, from_dict, to_dict
from vistool_trainer.run.run_config import resolve_config, resolved_schema

JSON_NAME = {"schema": "$schema"}


def sections(cls: type, schema: dict, path: str = ""):
    """(dotted path, dataclass, schema node) for the run config and each nested section."""
    yield path or "(top level)", cls, schema
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        sub = hints[f.name]
        if isinstance(sub, type) and dataclasses.is_dataclass(sub):
            yield from sections(sub, schema["properties"][f.name], f"{path}{f.name}.")


def test_every_section_has_exactly_the_schemas_keys():
    for path, cls, node in sections(RunConfig, resolved_schema()):
        fields = {JSON_NAME.get(f.name, f.name) for f in dataclasses.fields(cls)}
        assert fields == set(node["properties"]), f"{path}: only in the dataclass {fields - set(node['properties'])}, only in the schema {set(node['properties']) - fields}"


def test_every_default_is_the_schemas_default():
    for path, cls, node in sections(RunConfig, resolved_schema()):
        instance = cls()
        for f in dataclasses.fields(cls):
            value = getattr(instance, f.name)
            if dataclasses.is_dataclass(value) or f.name == "rewards":
                continue  # sections are checked on their own; rewards is the env's config, a dict
            assert value == node["properties"][JSON_NAME.get(f.name, f.name)].get("default"), f"{path}{f.name}"


def test_a_resolved_config_goes_to_the_typed_form_and_back_unchanged():
    raw = json.loads((repo_root() / "examples" / "micro-cpu.vistool.json").read_text())
    config = resolve_config(raw, repo_root())
    assert isinstance(config, RunConfig) and isinstance(config.rl, RlConfig)
    assert config.rl.clip_ratio_high == raw["rl"].get("clip_ratio_high", 0.28)
    assert from_dict(RunConfig, to_dict(config)) == config
    again = resolve_config(to_dict(config), repo_root())
    assert to_dict(again) == to_dict(config)


def test_the_typed_form_refuses_a_key_it_does_not_have_and_names_where():
    with pytest.raises(ValueError, match=r"policy\.lora\.: unknown key\(s\) rank"):
        from_dict(PolicyConfig, {"lora": {"rank": 4}}, "policy.")


def test_the_trainer_refuses_a_config_that_asks_for_verl_and_says_how_to_run_it(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "verl.vistool.json"
    path.write_text(json.dumps({"engine": "verl", "output_dir": str(tmp_path / "run")}))
    done = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(path)], capture_output=True, text=True,
                          cwd=repo_root(), timeout=120)
    assert done.returncode == 2
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert failed["event"] == "failed" and "engine 'verl'" in failed["error"] and "config export --to verl" in failed["error"]
    assert not (tmp_path / "run").exists(), "nothing is written for a run this trainer will not do"
