"""The typed run config (vistool_trainer/config.py) is the schema's, key for key: every section's
fields are the schema's properties, every default is the schema's default, and a resolved config
goes to the typed form and back to the same JSON. The schema is read here on its own terms
(schemas/run-config.schema.json), not through the dataclasses. Every field's help text is the
schema's description, no trainer source writes a schema default again, and the cross-field checks
of env/config/semantic-checks.ts that concern training run wherever a config is built."""
import ast
import dataclasses
import json
import re
import typing

import pytest

from vistool_trainer.checkout import repo_root
from vistool_trainer.config import PolicyConfig, RlConfig, RunConfig, from_dict, to_dict
from vistool_trainer.run.run_config import ConfigError, resolve_config, resolved_schema

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


def test_every_field_carries_the_schemas_description_as_its_help():
    for path, cls, node in sections(RunConfig, resolved_schema()):
        assert cls.__doc__ == node["description"], path
        for f in dataclasses.fields(cls):
            description = node["properties"][JSON_NAME.get(f.name, f.name)]["description"]
            assert f.metadata.get("help") == description, f"{path}{f.name}: the help text is not the schema's description"


# ---- Every default written once: in the schema ------------------------------------------------------------------------

# Parameter names that stand for a schema key under another name.
ALIASES = {"clip_low": "clip_ratio_low", "clip_high": "clip_ratio_high"}
# Values that share a schema key's name and default but are not that setting, each with the reason.
NOT_THE_SETTING = {
    # Scoring and sampling functions default to the unscaled softmax; rl.temperature is passed in.
    ("*", "temperature", 1.0),
    # Qwen2-VL's image processor minimum (56 × 56), for the real model sizes; policy.micro.min_pixels is the micro model's.
    ("trainer/vistool_trainer/model/reference_sizes.py", "min_pixels", 3136),
}


def schema_defaults() -> dict[str, list]:
    """Each leaf key's name → the defaults the schema gives it (a name can sit in several sections)."""
    found: dict[str, list] = {}

    def walk(node: dict) -> None:
        for key, sub in node.get("properties", {}).items():
            if "properties" in sub:
                walk(sub)
            elif "default" in sub:
                found.setdefault(key, []).append(sub["default"])

    walk(resolved_schema())
    return found


def restated_defaults(source: str, defaults: dict[str, list], path: str = "") -> list[str]:
    """Places in a Python source that write a schema key's default beside the key: a parameter's
    default, a class field's value, or the fallback of `.get("key", value)`. None is not counted
    (an absent value is everywhere), nor are values other than the schema's."""
    found = []

    def check(name: str, value: ast.expr, line: int) -> None:
        key = ALIASES.get(name, name)
        if key in defaults and isinstance(value, ast.Constant) and value.value is not None and not (
                {("*", name, value.value), (path, name, value.value)} & NOT_THE_SETTING):
            if any(type(value.value) is type(default) and value.value == default for default in defaults[key]):
                found.append(f"line {line}: {name} = {value.value!r}")

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = node.args.posonlyargs + node.args.args
            for arg, value in zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults):
                check(arg.arg, value, value.lineno)
            for arg, value in zip(node.args.kwonlyargs, node.args.kw_defaults):
                if value is not None:
                    check(arg.arg, value, value.lineno)
        elif isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
                    check(statement.target.id, statement.value, statement.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and len(node.args) == 2
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            check(node.args[0].value, node.args[1], node.lineno)
    return found


def test_a_restated_default_is_found():
    defaults = schema_defaults()
    source = ("def loss(x, clip_high: float = 0.28, clip_ratio_c=10.0): ...\n"
              "class Rl:\n    group_size: int = 8\n"
              "value = section.get('max_new_tokens', 48)\n"
              "def fine(clip_high: float = 0.3, steps=None): ...\n")
    assert restated_defaults(source, defaults) == ["line 1: clip_high = 0.28", "line 1: clip_ratio_c = 10.0", "line 3: group_size = 8",
                                                   "line 4: max_new_tokens = 48"]


def test_the_trainer_writes_no_schema_default_of_its_own():
    """Every default is the schema's: the trainer reads it (config.py's `schema_section`, or a
    section's class attribute such as RlConfig.clip_ratio_high), never writes it again."""
    defaults = schema_defaults()
    package = repo_root() / "trainer" / "vistool_trainer"
    found = {str(path.relative_to(repo_root())): hits for path in sorted(package.rglob("*.py"))
             if (hits := restated_defaults(path.read_text(), defaults, str(path.relative_to(repo_root()))))}
    assert not found, "schema defaults written again (read them from vistool_trainer.config instead):\n" + "\n".join(
        f"  {path}: {'; '.join(hits)}" for path, hits in found.items())


# ---- The cross-field checks every entry point runs ----------------------------------------------------------------------

@pytest.mark.parametrize("rl, key, fix, code", [
    ({"clip_ratio_low": 0.3, "clip_ratio_high": 0.25}, r"rl\.clip_ratio_high \(ε_high = 0\.25\)", r"Set rl\.clip_ratio_high to 0\.3", "rl/clip-high-below-low"),
    ({"clip_ratio_low": 0.1, "clip_ratio_high": 0.05}, r"rl\.clip_ratio_high \(ε_high = 0\.05\)", r"Set rl\.clip_ratio_high to 0\.28", "rl/clip-high-below-low"),
    ({"group_size": 1}, r"rl\.group_size is 1", r"Set rl\.group_size to 2 or more", "rl/group-too-small"),
])
def test_the_python_config_refuses_what_the_editor_flags_naming_key_value_and_fix(rl, key, fix, code):
    with pytest.raises(ConfigError, match=key) as refused:
        resolve_config({"rl": rl})
    assert re.search(fix, str(refused.value)) and f"[{code}]" in str(refused.value)
    # The same rule, under the same code, is the editor's (env/config/).
    assert any(f"'{code}'" in path.read_text() for path in (repo_root() / "env" / "config").rglob("*.ts"))
    # A run without RL does not need its RL settings to make sense.
    resolve_config({"rl": {**rl, "enabled": False}})


def test_every_way_of_building_a_config_runs_the_checks():
    with pytest.raises(ConfigError, match="rl/clip-high-below-low"):
        dataclasses.replace(resolve_config({}).rl, clip_ratio_low=0.5)
    with pytest.raises(ConfigError, match="rl/group-too-small"):
        from_dict(RlConfig, {"group_size": 0})
    with pytest.raises(ConfigError, match="rl/clip-high-below-low"):
        RlConfig(clip_ratio_low=0.4, clip_ratio_high=0.3)


@pytest.mark.parametrize("micro, message, code", [
    ({"text_hidden": 130}, r"policy\.micro\.text_hidden \(130\) is not divisible by policy\.micro\.text_heads \(4\)", "micro/heads-do-not-divide"),
    ({"text_hidden": 24, "text_heads": 4}, r"text head dimension .* = 6\) must be even and at least 8", "micro/head-dim"),
    ({"text_heads": 4, "text_kv_heads": 3}, r"policy\.micro\.text_heads \(4\) is not a multiple of policy\.micro\.text_kv_heads \(3\)", "micro/kv-heads"),
    ({"min_pixels": 60000}, r"policy\.micro\.min_pixels \(60000\) is larger than policy\.micro\.max_pixels \(50176\)", "policy/pixels-range"),
])
def test_micro_model_shapes_the_architecture_rejects_are_refused_before_the_model_is_built(micro, message, code):
    with pytest.raises(ConfigError, match=message) as refused:
        resolve_config({"policy": {"micro": micro}})
    assert f"[{code}]" in str(refused.value)
    assert any(f"'{code}'" in path.read_text() for path in (repo_root() / "env" / "config").rglob("*.ts"))
    if code != "policy/pixels-range":  # the micro section sizes nothing when the policy is another model
        resolve_config({"policy": {"model": "Qwen/Qwen2.5-VL-3B-Instruct", "micro": micro}})


def test_the_trainer_refuses_rl_train_turns_final_which_only_the_verl_bridge_carries_out():
    from vistool_trainer.run.train import refuse_bridge_only_settings

    refuse_bridge_only_settings(resolve_config({}))  # 'all', the default: trained here
    with pytest.raises(ValueError, match=r"rl.train_turns is 'final', which only the veRL bridge carries out .*Set rl.train_turns to 'all'"):
        refuse_bridge_only_settings(resolve_config({"rl": {"train_turns": "final"}}))
