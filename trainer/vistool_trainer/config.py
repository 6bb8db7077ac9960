"""The run config as typed sections, in the way TRL's GRPOConfig types its trainer's settings.

schemas/run-config.schema.json stays the one definition (docs/ARCHITECTURE.md, contract 1): a
config is validated against it and its defaults are filled from it (run/run_config.py) before it
becomes a RunConfig here. These dataclasses give the trainer attribute access and types, and only
that: each field's default and help text (`field(metadata={"help": ...})`, as TRL writes them) and
each section's docstring are read from the schema by `schema_section`, so no default is written
twice. tests/test_typed_config.py checks that the fields are the schema's, key for key. `rewards`
stays a dict: it is the env's reward config, which the trainer passes to the env server as it is
and never reads.

The checks a JSON Schema cannot express that concern training (ε_high below ε_low, a GRPO group of
one, micro-model shapes the architecture rejects, a pixel range upside down) run in the sections'
`__post_init__`, so every entry point that builds a config gets them (`python -m vistool_trainer
train`, the demo, a test's `replace`). The editor and `vistool config validate` run the same rules
in env/config/semantic-checks.ts, under the codes these errors quote.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, TypeVar

from .checkout import repo_root

SCHEMA_PATH = repo_root() / "schemas" / "run-config.schema.json"

# JSON keys that are not Python names.
_JSON_NAMES = {"schema": "$schema"}

Section = TypeVar("Section")


class ConfigError(ValueError):
    """A run config the trainer refuses; the message names the key, the value and the fix."""


@cache
def run_config_schema() -> dict[str, Any]:
    if not SCHEMA_PATH.exists():
        raise ConfigError(f"run config schema {SCHEMA_PATH} is missing: the trainer must run from a vistool checkout")
    return json.loads(SCHEMA_PATH.read_text())


def schema_node(path: str) -> dict[str, Any]:
    """The schema's node for a dotted key path ("" is the whole config, "rl.clip_ratio_high" a key)."""
    node = run_config_schema()
    for key in filter(None, path.split(".")):
        node = node["properties"][key]
    return node


def schema_default(path: str) -> Any:
    """The schema's default for a dotted key path (a copy: a list or object default is never shared)."""
    return copy.deepcopy(schema_node(path)["default"])


def schema_section(path: str) -> Callable[[type[Section]], type[Section]]:
    """A class decorator, under @dataclass: every annotated field gets the schema's default and, as
    its help text, the schema's description; a field whose type is another section gets that
    section. The class's docstring is the schema's description of the section."""
    def fill(cls: type[Section]) -> type[Section]:
        node = schema_node(path)
        module = sys.modules[cls.__module__]
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            key = _JSON_NAMES.get(name, name)
            if key not in node["properties"]:
                raise TypeError(f"{cls.__name__}.{name}: the run config schema has no key {'.'.join(filter(None, [path, key]))}")
            sub = node["properties"][key]
            section = getattr(module, annotation, None) if isinstance(annotation, str) else annotation
            help_text = {"help": sub.get("description", "")}
            if isinstance(section, type) and dataclasses.is_dataclass(section):
                setattr(cls, name, field(default_factory=section, metadata=help_text))
            elif isinstance(sub["default"], (list, dict)):
                setattr(cls, name, field(default_factory=lambda default=sub["default"]: copy.deepcopy(default), metadata=help_text))
            else:
                setattr(cls, name, field(default=sub["default"], metadata=help_text))
        cls.__doc__ = node.get("description", cls.__doc__)
        return cls
    return fill


@dataclass
@schema_section('data.generate')
class DataGenerateConfig:
    kind: Literal['table', 'vbar', 'hbar', 'grouped', 'line', 'geometry', 'search']
    n_train: int
    n_eval: int
    difficulty: int
    image_size: str
    families: list[str] | None
    labels: list[str] | None
    min_top_gap: float
    shuffle_labels: bool
    categories: list[str] | None
    max_pixels: int | None


@dataclass
@schema_section('data')
class DataConfig:
    train: str | None
    eval: str | None
    generate: DataGenerateConfig


@dataclass
@schema_section('policy.lora')
class PolicyLoraConfig:
    enabled: bool
    r: int
    alpha: int
    dropout: float
    target_modules: list[str]


@dataclass
@schema_section('policy.micro')
class PolicyMicroConfig:
    text_hidden: int
    text_layers: int
    text_heads: int
    text_kv_heads: int
    text_intermediate: int
    vision_hidden: int
    vision_depth: int
    vision_heads: int
    vision_intermediate: int
    vocab_size: int
    min_pixels: int
    max_pixels: int


@dataclass
@schema_section('policy.view')
class PolicyViewConfig:
    latest_images: int | None
    images_first: bool


@dataclass
@schema_section('policy')
class PolicyConfig:
    model: str
    dtype: Literal['auto', 'float32', 'bfloat16', 'float16']
    gradient_checkpointing: bool | None
    system_prompt: str | dict[str, str] | None
    min_pixels: int | None
    max_pixels: int | None
    lora: PolicyLoraConfig
    micro: PolicyMicroConfig
    view: PolicyViewConfig

    def __post_init__(self) -> None:
        refuse(pixel_range_problems("policy", self.min_pixels, self.max_pixels))
        if self.model == "micro":
            refuse(micro_shape_problems(self.micro) + pixel_range_problems("policy.micro", self.micro.min_pixels, self.micro.max_pixels))


@dataclass
@schema_section('env')
class EnvConfig:
    url: str | None
    token_file: str | None
    tools: bool
    max_turns: int
    max_tool_calls: int
    images: Literal['path', 'inline']
    node: str


@dataclass
@schema_section('curriculum.perception')
class CurriculumPerceptionConfig:
    train: str | None
    eval: str | None
    n_train: int
    n_eval: int
    difficulty: int
    image_size: str | None
    steps: int
    max_seconds: float | None
    batch_size: int
    lr: float


@dataclass
@schema_section('curriculum')
class CurriculumConfig:
    perception_first: bool
    perception: CurriculumPerceptionConfig


@dataclass
@schema_section('sft')
class SftConfig:
    enabled: bool
    steps: int
    max_seconds: float | None
    batch_size: int
    calls_alongside_answers: bool
    calls_first: bool
    calls_without_images_steps: int
    calls_without_images_until_acc: float | None
    after_tool_turns_first: int
    no_tool_fraction: float
    direct_answer_fraction: float
    tool_trajectories_steps: int
    after_tool_until_acc: float | None
    tool_trajectories_until_acc: float | None
    mixture_until_direct_rate: float | None
    hold_earlier_skills: float | None
    probe_tasks: int
    probe_every: int
    lr: float
    weight_decay: float
    betas: list[float]
    micro_batch_size: int | None
    use_dynamic_bsz: bool
    max_token_len_per_gpu: int


@dataclass
@schema_section('rl')
class RlConfig:
    enabled: bool
    steps: int
    max_seconds: float | None
    prompts_per_step: int
    group_size: int
    ppo_mini_batch_size: int | None
    ppo_epochs: int
    lr: float
    temperature: float
    max_new_tokens: int
    advantage: Literal['grpo', 'dr_grpo']
    clip_ratio_low: float
    clip_ratio_high: float
    clip_ratio_c: float
    loss_agg_mode: Literal['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm']
    loss_agg_scope: Literal['mini_batch', 'micro_batch']
    train_turns: Literal['all', 'final']
    loss_scale_factor: float | None
    kl_coef: float
    kl_estimator: Literal['k1', 'abs', 'k2', 'k3']
    dynamic_sampling: bool
    dynamic_sampling_metric: Literal['reward', 'accuracy']
    max_num_gen_batches: int
    failed_groups: Literal['drop', 'keep']
    mask_truncated_turns: bool
    micro_batch_size: int
    use_dynamic_bsz: bool
    ppo_max_token_len_per_gpu: int
    max_grad_norm: float
    rollout_engine: Literal['hf', 'vllm']
    vllm_gpu_memory_utilization: float
    rollout_is: Literal['off', 'token', 'sequence']
    rollout_is_threshold: float
    betas: list[float]
    fresh_tasks: int
    fold_lora_for_sampling: bool

    def __post_init__(self) -> None:
        refuse(rl_problems(self))


@dataclass
@schema_section('eval')
class EvalConfig:
    n: int
    before_and_after: bool
    before: bool
    every_steps: int
    max_new_tokens: int
    counterfactual: bool
    max_turns: int | None


@dataclass
@schema_section('checkpoint')
class CheckpointConfig:
    every_steps: int
    sft_every_steps: int
    keep: int


@dataclass
@schema_section('distributed')
class DistributedConfig:
    strategy: Literal['ddp', 'fsdp', 'zero3']
    cpu_offload: bool
    reshard_after_forward: bool


@dataclass
@schema_section('logging')
class LoggingConfig:
    rollouts_per_step: int
    report_to: list[Literal['tensorboard', 'wandb']]
    wandb_project: str
    report_rollouts_per_step: int


@dataclass
@schema_section('')
class RunConfig:
    schema: str  # the file's "$schema" link, for editors; the trainer does not read it
    name: str
    seed: int
    output_dir: str
    device: Literal['auto', 'cpu', 'cuda']
    engine: Literal['vistool', 'verl']
    threads: int
    data: DataConfig
    policy: PolicyConfig
    env: EnvConfig
    rewards: dict[str, Any]  # the env's reward config (env/rewards/config.schema.json), sent to the server as JSON
    curriculum: CurriculumConfig
    sft: SftConfig
    rl: RlConfig
    eval: EvalConfig
    checkpoint: CheckpointConfig
    distributed: DistributedConfig
    logging: LoggingConfig


# ---- The cross-field checks (env/config/semantic-checks.ts has the same rules, under these codes) ----------------------


def refuse(problems: list[str]) -> None:
    if problems:
        raise ConfigError("run config is invalid:\n" + "\n".join(f"  {problem}" for problem in problems))


def rl_problems(rl: RlConfig) -> list[str]:
    """rl/clip-high-below-low and rl/group-too-small, for a run with RL on."""
    if not rl.enabled:
        return []
    problems = []
    if rl.clip_ratio_high < rl.clip_ratio_low:
        fix = max(schema_default("rl.clip_ratio_high"), rl.clip_ratio_low)
        problems.append(f"rl.clip_ratio_high (ε_high = {rl.clip_ratio_high}) is below rl.clip_ratio_low (ε_low = {rl.clip_ratio_low}): "
                        "clip-higher needs ε_high ≥ ε_low, or low-probability tokens can never grow. Set rl.clip_ratio_high to "
                        f"{fix} or more, or lower rl.clip_ratio_low [rl/clip-high-below-low]")
    if rl.group_size < 2:
        problems.append(f"rl.group_size is {rl.group_size}: GRPO's advantage compares rollouts of the same prompt, so a group of "
                        f"{rl.group_size} has no baseline and every advantage is 0. Set rl.group_size to 2 or more (8 is common), "
                        "or turn RL off with rl.enabled: false [rl/group-too-small]")
    if rl.rollout_is != "off" and rl.rollout_engine != "vllm":
        problems.append(f"rl.rollout_is is '{rl.rollout_is}' but rl.rollout_engine is '{rl.rollout_engine}': the importance weights correct "
                        "for a rollout engine that samples from another copy of the weights (vLLM's), and the transformers sampler "
                        "samples the trained model itself, returning no log-probs to weigh by. Set rl.rollout_is to 'off', or "
                        "rl.rollout_engine to 'vllm' [rl/rollout-is-needs-vllm]")
    if rl.fold_lora_for_sampling and rl.rollout_engine != "hf":
        problems.append(f"rl.fold_lora_for_sampling is true but rl.rollout_engine is '{rl.rollout_engine}': folding is for the "
                        "transformers sampler, and the vLLM engine is always sent the folded weights. Set "
                        "rl.fold_lora_for_sampling to false, or rl.rollout_engine to 'hf' [rl/fold-needs-hf]")
    return problems


def micro_shape_problems(micro: PolicyMicroConfig) -> list[str]:
    """micro/heads-do-not-divide, micro/head-dim and micro/kv-heads: shapes Qwen2.5-VL's attention rejects."""
    problems = []
    for hidden_key, heads_key, tower in (("text_hidden", "text_heads", "text"), ("vision_hidden", "vision_heads", "vision")):
        hidden, heads = getattr(micro, hidden_key), getattr(micro, heads_key)
        if heads < 1:
            continue
        if hidden % heads:
            problems.append(f"policy.micro.{hidden_key} ({hidden}) is not divisible by policy.micro.{heads_key} ({heads}): each {tower} "
                            f"attention head gets hidden/heads dimensions. Set policy.micro.{heads_key} to a count that divides {hidden} "
                            "[micro/heads-do-not-divide]")
        elif tower == "text" and ((hidden // heads) % 2 or hidden // heads < 8):
            problems.append(f"the text head dimension (policy.micro.text_hidden / policy.micro.text_heads = {hidden // heads}) must be even "
                            "and at least 8: Qwen2.5-VL's multimodal rotary embedding splits half of it across time, height and width. "
                            "Change policy.micro.text_heads or policy.micro.text_hidden [micro/head-dim]")
    if micro.text_kv_heads > 0 and micro.text_heads % micro.text_kv_heads:
        problems.append(f"policy.micro.text_heads ({micro.text_heads}) is not a multiple of policy.micro.text_kv_heads ({micro.text_kv_heads}): "
                        "grouped-query attention shares each key/value head among an equal number of query heads. Set "
                        "policy.micro.text_kv_heads to a divisor of policy.micro.text_heads [micro/kv-heads]")
    return problems


def pixel_range_problems(where: str, min_pixels: int | None, max_pixels: int | None) -> list[str]:
    """policy/pixels-range, for policy and policy.micro."""
    if min_pixels is None or max_pixels is None or min_pixels <= max_pixels:
        return []
    return [f"{where}.min_pixels ({min_pixels}) is larger than {where}.max_pixels ({max_pixels}): the image processor needs min ≤ max. "
            f"Lower {where}.min_pixels or raise {where}.max_pixels [policy/pixels-range]"]


# ---- JSON form ---------------------------------------------------------------------------------------------------------


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _section_type(hint: Any) -> type | None:
    return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None


def from_dict(cls: type, values: dict[str, Any], where: str = "") -> Any:
    """A section built from its JSON form; a key the section does not have is an error that names it."""
    names = {_JSON_NAMES.get(f.name, f.name): f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"run config {where or '(top level)'}: unknown key(s) {', '.join(unknown)}")
    kwargs = {}
    for json_name, value in values.items():
        f = names[json_name]
        section = _section_type(_hints(cls)[f.name])
        kwargs[f.name] = from_dict(section, value, f"{where}{json_name}.") if section and isinstance(value, dict) else value
    return cls(**kwargs)


def to_dict(section: Any) -> dict[str, Any]:
    """The JSON form (what config.json holds): keys as the schema spells them."""
    out = {}
    for f in dataclasses.fields(section):
        value = getattr(section, f.name)
        out[_JSON_NAMES.get(f.name, f.name)] = to_dict(value) if dataclasses.is_dataclass(value) else _copy(value)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
