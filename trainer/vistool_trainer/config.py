"""The run config as typed sections, in the way TRL's GRPOConfig types its trainer's settings.

schemas/run-config.schema.json stays the one definition (docs/ARCHITECTURE.md, contract 1): a
config is validated against it and its defaults are filled from it (run/run_config.py) before it
becomes a RunConfig here. These dataclasses give the trainer attribute access and types; the test
tests/test_typed_config.py checks that their fields and defaults are the schema's, key for key, so
the two cannot drift apart. `rewards` stays a dict: it is the env's reward config, which the trainer
passes to the env server as it is and never reads.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal


@dataclass
class DataGenerateConfig:
    """Used when train or eval is null: `vistool data gen` options."""
    kind: Literal['table', 'vbar', 'hbar', 'grouped', 'line', 'geometry'] = 'table'
    n_train: int = 400
    n_eval: int = 100
    difficulty: int = 1
    image_size: str = '224x112'
    families: list[str] | None = None
    labels: list[str] | None = None
    min_top_gap: float = 0.0
    shuffle_labels: bool = False
    categories: list[str] | None = None


@dataclass
class DataConfig:
    """Task data: JSONL files of TaskRecords (env/tasks/record.ts), or a generator spec."""
    train: str | None = None
    eval: str | None = None
    generate: DataGenerateConfig = field(default_factory=DataGenerateConfig)


@dataclass
class PolicyLoraConfig:
    """LoRA adapters via peft."""
    enabled: bool = False
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] = field(default_factory=lambda: ['q_proj', 'k_proj', 'v_proj', 'o_proj'])


@dataclass
class PolicyMicroConfig:
    """Size of the embedded micro Qwen2.5-VL (used when model is 'micro')"""
    text_hidden: int = 128
    text_layers: int = 2
    text_heads: int = 4
    text_kv_heads: int = 2
    text_intermediate: int = 256
    vision_hidden: int = 64
    vision_depth: int = 2
    vision_heads: int = 4
    vision_intermediate: int = 128
    vocab_size: int = 1024
    min_pixels: int = 3136
    max_pixels: int = 50176


@dataclass
class PolicyViewConfig:
    """What the model reads of each conversation: the env server applies it to every prompt it presents (docs/CONTRACTS.md)"""
    latest_images: int | None = None
    images_first: bool = False


@dataclass
class PolicyConfig:
    """The policy model."""
    model: str = 'micro'
    dtype: Literal['auto', 'float32', 'bfloat16', 'float16'] = 'auto'
    gradient_checkpointing: bool | None = None
    system_prompt: str | dict[str, str] | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    lora: PolicyLoraConfig = field(default_factory=PolicyLoraConfig)
    micro: PolicyMicroConfig = field(default_factory=PolicyMicroConfig)
    view: PolicyViewConfig = field(default_factory=PolicyViewConfig)


@dataclass
class EnvConfig:
    """The vistool env server and episode limits."""
    url: str | None = None
    token_file: str | None = None
    tools: bool = True
    max_turns: int = 3
    max_tool_calls: int = 2
    images: Literal['path', 'inline'] = 'path'
    node: str = 'node'


@dataclass
class CurriculumPerceptionConfig:
    """The perception stage: its tasks (geometry `locate`: generated unless train/eval name files) and its SFT budget."""
    train: str | None = None
    eval: str | None = None
    n_train: int = 2000
    n_eval: int = 100
    difficulty: int = 1
    image_size: str | None = None
    steps: int = 300
    max_seconds: float | None = None
    batch_size: int = 32
    lr: float = 0.001


@dataclass
class CurriculumConfig:
    """V-Thinker's two stages: point-localisation SFT (perception) before the interactive stages."""
    perception_first: bool = False
    perception: CurriculumPerceptionConfig = field(default_factory=CurriculumPerceptionConfig)


@dataclass
class SftConfig:
    """Supervised warm-up on the generator's gold trajectories (tool calls replayed through the env server)."""
    enabled: bool = True
    steps: int = 600
    max_seconds: float | None = None
    batch_size: int = 32
    calls_alongside_answers: bool = False
    calls_without_images_steps: int = 0
    calls_without_images_until_acc: float | None = None
    after_tool_turns_first: int = 0
    no_tool_fraction: float = 0.0
    direct_answer_fraction: float = 0.0
    tool_trajectories_steps: int = 0
    after_tool_until_acc: float | None = None
    tool_trajectories_until_acc: float | None = None
    mixture_until_direct_rate: float | None = None
    hold_earlier_skills: float | None = None
    probe_tasks: int = 0
    probe_every: int = 100
    lr: float = 0.001
    weight_decay: float = 0.0
    micro_batch_size: int | None = None
    use_dynamic_bsz: bool = False
    max_token_len_per_gpu: int = 16384


@dataclass
class RlConfig:
    """GRPO/DAPO with the image-tool loop."""
    enabled: bool = True
    steps: int = 20
    max_seconds: float | None = None
    prompts_per_step: int = 4
    group_size: int = 8
    ppo_mini_batch_size: int | None = None
    ppo_epochs: int = 1
    lr: float = 0.0002
    temperature: float = 1.0
    max_new_tokens: int = 48
    advantage: Literal['grpo', 'dr_grpo'] = 'grpo'
    clip_ratio_low: float = 0.2
    clip_ratio_high: float = 0.28
    clip_ratio_c: float = 10.0
    loss_agg_mode: Literal['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] = 'token-mean'
    loss_agg_scope: Literal['mini_batch', 'micro_batch'] = 'mini_batch'
    loss_scale_factor: float | None = None
    kl_coef: float = 0.0
    kl_estimator: Literal['k1', 'abs', 'k2', 'k3'] = 'k3'
    dynamic_sampling: bool = True
    dynamic_sampling_metric: Literal['reward', 'accuracy'] = 'reward'
    max_num_gen_batches: int = 4
    micro_batch_size: int = 32
    use_dynamic_bsz: bool = False
    ppo_max_token_len_per_gpu: int = 16384
    max_grad_norm: float = 1.0
    rollout_engine: Literal['hf', 'vllm'] = 'hf'
    vllm_gpu_memory_utilization: float = 0.3


@dataclass
class EvalConfig:
    """Held-out evaluation (greedy): accuracy with tools, without tools, tool-call rate, format validity."""
    n: int = 100
    before_and_after: bool = True
    before: bool = True
    every_steps: int = 0
    max_new_tokens: int = 48


@dataclass
class CheckpointConfig:
    """Checkpoints under output_dir/checkpoints."""
    every_steps: int = 10
    keep: int = 2


@dataclass
class DistributedConfig:
    """How the processes of a multi-process run (accelerate launch / torchrun) share the training state"""
    strategy: Literal['ddp', 'fsdp', 'zero3'] = 'ddp'
    cpu_offload: bool = False
    reshard_after_forward: bool = True


@dataclass
class LoggingConfig:
    """What goes into the run directory."""
    rollouts_per_step: int = 64
    report_to: list[Literal['tensorboard', 'wandb']] = field(default_factory=list)
    wandb_project: str = 'vistool'
    report_rollouts_per_step: int = 4


@dataclass
class RunConfig:
    """A whole run config: what schemas/run-config.schema.json describes, every default filled."""
    schema: str = '../schemas/run-config.schema.json'  # the file's "$schema" link, for editors; the trainer does not read it
    name: str = 'run'
    seed: int = 1
    output_dir: str = 'runs/run'
    device: Literal['auto', 'cpu', 'cuda'] = 'auto'
    engine: Literal['vistool', 'verl'] = 'vistool'
    threads: int = 0
    data: DataConfig = field(default_factory=DataConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    rewards: dict[str, Any] = field(default_factory=dict)  # the env's reward config (env/rewards/config.schema.json), sent to the server as JSON
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    sft: SftConfig = field(default_factory=SftConfig)
    rl: RlConfig = field(default_factory=RlConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    distributed: DistributedConfig = field(default_factory=DistributedConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)



# JSON keys that are not Python names.
_JSON_NAMES = {"schema": "$schema"}


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
