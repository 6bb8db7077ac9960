"""The GPU check: what the bundled trainer does on a real GPU with a model of Qwen2.5-VL-3B's
dimensions (random weights built from an explicit config: nothing is downloaded), and the micro
demo's first RL steps on CUDA through the real env server. scripts/gpu/check.sh runs it;
scripts/gpu/README.md says how it travels and what each number means.

Every stage writes its result to OUT/results.jsonl the moment it finishes (a killed run keeps
what it measured) and is guarded on its own: one failing stage is recorded and the next runs.
`--cpu-dry-run` runs the same code on a CPU at tiny dimensions, for checking the script itself.
It trains nothing that is kept and measures; it never writes outside OUT and its work folder.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "trainer"))  # the GPU image has no editable install of the trainer

import torch  # noqa: E402

H200_BF16_PEAK = 989e12  # dense bf16 FLOP/s, NVIDIA's H200 SXM datasheet


@dataclass
class Plan:
    """What the check measures at which sizes (the GPU run, or the CPU dry run's tiny version)."""

    device: str
    size_name: str
    token_budgets: tuple[int, ...]
    row_length: int
    image_tokens: int
    generate_batches: tuple[int, ...]
    new_tokens: int
    demo_sft_steps: int
    demo_rl_steps: int
    demo_eval_n: int
    dry_run: bool


GPU_PLAN = Plan("cuda", "qwen2.5-vl-3b", (1024, 4096, 8192), 1024, 256, (32, 64), 256, 300, 4, 64, False)
DRY_PLAN = Plan("cpu", "tiny", (128, 256), 128, 16, (2, 4), 8, 12, 2, 8, True)


@dataclass
class Context:
    plan: Plan
    out: Path
    work: Path
    node: str
    carry: Path
    deadline: float
    results: Path
    summary: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    def left(self) -> float:
        return self.deadline - time.time()

    def record(self, record: dict[str, Any]) -> None:
        record = {"time": round(time.time(), 3), **record}
        with open(self.results, "a") as handle:
            handle.write(json.dumps(record, default=_plain) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        print(json.dumps(record, default=_plain), flush=True)


def _plain(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    return str(value)


def run_stage(context: Context, name: str, needs_s: float, body: Callable[[Context], dict[str, Any]]) -> None:
    """One guarded stage: its record, or the error that stopped it; skipped when the budget is short."""
    if context.left() < needs_s:
        context.record({"stage": name, "ok": False, "skipped": f"{context.left():.0f} s left, needs ~{needs_s:.0f} s"})
        context.summary.append(f"{name:<12} skipped (budget)")
        return
    started = time.perf_counter()
    try:
        result = body(context)
        context.record({"stage": name, "ok": True, "seconds": round(time.perf_counter() - started, 2), **result})
        context.summary.append(f"{name:<12} ok    {result.get('summary', '')}")
    except Exception as error:  # noqa: BLE001 — every stage is guarded; the record says what failed
        context.record({"stage": name, "ok": False, "seconds": round(time.perf_counter() - started, 2),
                        "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()[-3000:]})
        context.summary.append(f"{name:<12} FAILED {type(error).__name__}: {str(error)[:160]}")
    finally:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


# ---- helpers -------------------------------------------------------------------------------------

def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def memory_now(device: torch.device) -> int:
    return torch.cuda.memory_allocated(device) if device.type == "cuda" else 0


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak(device: torch.device) -> int:
    return torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0


def gib(value: float) -> float:
    return round(value / 2**30, 3)


def training_flops(counts: dict[str, int], size: Any, rows: int, length: int, image_tokens: int, trained_fraction: float = 0.4) -> float:
    """Model FLOPs of one forward+backward (3 × forward; recomputation not counted): decoder layers
    (2 · parameters per token, plus causal attention 2 · hidden · length per token per layer),
    the LM head on the scored positions only, and the vision tower on 4 patches per image token."""
    tokens = rows * length
    text = 2 * counts["text_layers"] * tokens + 2 * size.layers * size.hidden * length * tokens
    head = 2 * size.hidden * size.vocab * tokens * trained_fraction
    patches = rows * image_tokens * 4
    vision = 2 * counts["vision"] * patches + 4 * size.vision_depth * size.vision_hidden * 64 * patches
    return 3.0 * (text + head + vision)


# ---- stages --------------------------------------------------------------------------------------

def _blob_ids() -> dict[str, str]:
    """git's blob id of the files the measurements depend on (`git log --find-object=ID` names the
    commit): the device gets the working tree without its history."""
    import hashlib

    files = ["scripts/gpu/check.py", "trainer/vistool_trainer/model/policy.py", "trainer/vistool_trainer/trainers/grpo.py",
             "trainer/vistool_trainer/trainers/sft.py", "trainer/vistool_trainer/engines/training_engine.py",
             "trainer/vistool_trainer/engines/master_weights.py"]
    ids = {}
    for name in files:
        data = (REPO / name).read_bytes()
        ids[name] = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return ids


def stage_environment(context: Context) -> dict[str, Any]:
    import transformers

    info: dict[str, Any] = {"python": sys.version.split()[0], "torch": torch.__version__, "transformers": transformers.__version__,
                            "cuda_available": torch.cuda.is_available(), "plan": context.plan.__dict__, "files": _blob_ids()}
    try:
        import peft
        info["peft"] = peft.__version__
    except ImportError:
        info["peft"] = None
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info.update(gpu=props.name, gpu_memory_gib=gib(props.total_memory), capability=f"{props.major}.{props.minor}",
                    cuda=torch.version.cuda)
        # The bf16 matrix rate here, as a ceiling beside the datasheet's (8192³, median of 10).
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            a @ b
        times = []
        for _ in range(10):
            begin, finish = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            a @ b
            finish.record()
            torch.cuda.synchronize()
            times.append(begin.elapsed_time(finish) / 1000)
        info["bf16_matmul_tflops_measured"] = round(2 * 8192**3 / sorted(times)[5] / 1e12, 1)
        del a, b
    info["summary"] = f"torch {info['torch']}, transformers {info['transformers']}, {info.get('gpu', 'cpu')}"
    return info


def _policy(context: Context) -> Any:
    if "policy" not in context.state:
        from vistool_trainer.model.reference_sizes import SIZES, parameter_counts, random_policy

        started = time.perf_counter()
        policy = random_policy(SIZES[context.plan.size_name], context.plan.device, torch.bfloat16, seed=0)
        synchronize(policy.device)
        context.state["policy"] = policy
        context.state["counts"] = parameter_counts(policy.model)
        context.state["build_s"] = round(time.perf_counter() - started, 1)
    return context.state["policy"]


def stage_forward(context: Context) -> dict[str, Any]:
    """The trainer's scoring (image features placed into the embeddings, LM head on loss positions
    only) against transformers' own forward with pixel_values, on one batch with two images per row."""
    from PIL import Image

    from vistool_trainer.model.conversation_encoding import expand_images
    from vistool_trainer.model.policy import score_tokens

    policy = _policy(context)
    generator = torch.Generator().manual_seed(1)
    images = []
    for index in range(2):
        pixels = (torch.rand((224, 448, 3), generator=generator) * 255).to(torch.uint8).numpy()
        images.append({"type": "image", "ref": f"forward-{index}", "image": Image.fromarray(pixels, "RGB")})
    conversations = []
    for row in range(2):
        conversations.append([
            {"role": "user", "content": [images[0], {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["D"]}}</tool_call>'}]},
            {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION: The edited image follows."}, images[1]]},
            {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>" if row else "<answer>high</answer>"}]},
        ])
    inputs = policy.batch([policy.encoder.encode(c, add_generation_prompt=False) for c in conversations])
    policy.model.eval()
    with torch.no_grad():
        log_probs, mask, _ = score_tokens(policy.model, inputs)
        logits = policy.model(**expand_images(inputs), use_cache=False).logits[:, :-1].float()
    reference = torch.log_softmax(logits, -1).gather(-1, inputs["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    on = mask.bool()
    difference = (log_probs[on] - reference[on]).abs()
    # Without the images (what transformers 5.17 did with the old mm_encoder_outputs call): far off.
    without = {k: v for k, v in inputs.items() if k not in ("pixel_values", "unique_grid_thw", "image_index", "image_grid_thw")}
    with torch.no_grad():
        blind = policy.model(**{k: v for k, v in without.items() if k != "loss_mask"}, use_cache=False).logits[:, :-1].float()
    blind_lp = torch.log_softmax(blind, -1).gather(-1, inputs["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    ok = bool(torch.isfinite(log_probs[on]).all()) and float(difference.max()) < 0.05
    counts = context.state["counts"]
    if not ok:
        raise AssertionError(f"scoring differs from transformers' forward by {float(difference.max()):.4f} nats (bf16)")
    return {"parameters": counts, "build_s": context.state["build_s"], "image_tokens": int((inputs["input_ids"] == policy.processor.image_token_id).sum()),
            "scored_tokens": int(on.sum()), "max_abs_logprob_diff_vs_hf_forward": float(difference.max()),
            "mean_abs_logprob_diff_vs_hf_forward": float(difference.mean()),
            "max_abs_logprob_diff_without_images": float((log_probs[on] - blind_lp[on]).abs().max()),
            "summary": f"{counts['total'] / 1e9:.2f}B params; scoring = HF forward to {float(difference.max()):.4f} nats (bf16)"}


def stage_generate(context: Context) -> dict[str, Any]:
    """Policy.sample_turns (the rollout path: every sampling field explicit, KV cache) on rows of
    one image and a question, `new_tokens` per turn; a random model almost never writes the end
    token, so nearly every row runs to the limit."""
    from PIL import Image

    policy = _policy(context)
    plan = context.plan
    pixels = (torch.rand((224, 448, 3), generator=torch.Generator().manual_seed(2)) * 255).to(torch.uint8).numpy()
    image = {"type": "image", "ref": "generate", "image": Image.fromarray(pixels, "RGB")}
    prompt = [{"role": "user", "content": [image, {"type": "text", "text": "Question: Is the revenue of D low, medium or high?"}]}]
    prompt_tokens = len(policy.encoder.encode(prompt, add_generation_prompt=True).input_ids)
    torch.manual_seed(0)
    policy.sample_turns([prompt] * 2, max_new_tokens=8, temperature=1.0, greedy=False)  # warm-up
    device = policy.device
    rates = {}
    for batch in plan.generate_batches:
        reset_peak(device)
        synchronize(device)
        started = time.perf_counter()
        turns = policy.sample_turns([prompt] * batch, max_new_tokens=plan.new_tokens, temperature=1.0, greedy=False)
        synchronize(device)
        seconds = time.perf_counter() - started
        tokens = sum(len(turn.token_ids) for turn in turns)
        rates[str(batch)] = {"sequences": batch, "new_tokens": tokens, "seconds": round(seconds, 3),
                             "tokens_per_s": round(tokens / seconds, 1), "peak_gib": gib(peak(device))}
    text = ", ".join(f"{b}x{plan.new_tokens}: {r['tokens_per_s']:.0f} tok/s" for b, r in rates.items())
    return {"prompt_tokens": prompt_tokens, "batches": rates, "summary": text}


def _engine(policy: Any, master_weights: bool = True) -> Any:
    from vistool_trainer.engines.training_engine import TrainingEngine

    return TrainingEngine(policy, master_weights=master_weights)


def stage_memory(context: Context) -> dict[str, Any]:
    """Peak memory and time of one SFT step and one RL mini-batch (one micro-batch of the token
    budget, optimizer step included) at each budget, gradient checkpointing off and on; full
    fine-tune with fp32 masters (18 bytes of state per parameter)."""
    from vistool_trainer.algorithms.micro_batches import MicroBatching
    from vistool_trainer.model.reference_sizes import SIZES, synthetic_conversations
    from vistool_trainer.run.run_config import resolve_config
    from vistool_trainer.trainers.grpo import MiniBatchContext, _mini_batch_step, _sampling_log_probs
    from vistool_trainer.trainers.sft import sft_step

    plan = context.plan
    policy = _policy(context)
    device = policy.device
    size = SIZES[plan.size_name]
    counts = context.state["counts"]
    engine = _engine(policy)
    optimizer = engine.make_optimizer(1e-6, 0.0, 1.0)
    rl = resolve_config({}).rl
    suppressed = tuple(policy.processor.control_token_ids)
    measurements: list[dict[str, Any]] = []
    try:
        # Warm-up: AdamW allocates its state on the first step; kernels load.
        engine.train_mode()
        sft_step(policy, optimizer, synthetic_conversations(policy, 1, plan.row_length, plan.image_tokens, 99), engine=engine)
        # The optimizer step alone (on zero gradients), to separate compute from the update.
        for tensor in engine.trained_tensors():
            tensor.grad = torch.zeros_like(tensor)
        synchronize(device)
        started = time.perf_counter()
        optimizer.step()
        engine.masters.write_to_model()
        synchronize(device)
        optimizer_s = time.perf_counter() - started
        engine.zero_grad(optimizer)
        synchronize(device)
        state_bytes = memory_now(device)  # bf16 weights, fp32 masters, AdamW moments; no gradients
        for checkpointing in (False, True):
            policy.set_gradient_checkpointing(checkpointing)
            for budget in plan.token_budgets:
                rows = max(1, budget // plan.row_length)
                encoded = synthetic_conversations(policy, rows, plan.row_length, plan.image_tokens, budget)
                split = MicroBatching(max_tokens=budget)
                flops = training_flops(counts, size, rows, plan.row_length, plan.image_tokens)
                for kind in ("sft", "rl"):
                    record: dict[str, Any] = {"kind": kind, "tokens": rows * plan.row_length, "rows": rows,
                                              "gradient_checkpointing": checkpointing}
                    engine.zero_grad(optimizer)  # the last step's fp32 gradients go before this one is measured
                    try:
                        if kind == "rl":
                            reset_peak(device)
                            synchronize(device)
                            started = time.perf_counter()
                            old, _ = _sampling_log_probs(policy, encoded, split, 1.0, suppressed)
                            synchronize(device)
                            record["logprob_pass_s"] = round(time.perf_counter() - started, 3)
                            record["logprob_pass_peak_over_state_gib"] = gib(peak(device) - state_bytes)
                            advantages = torch.tensor([1.0 if i % 2 else -1.0 for i in range(rows)])
                        engine.train_mode(dropout=kind == "sft")
                        reset_peak(device)
                        synchronize(device)
                        started = time.perf_counter()
                        if kind == "sft":
                            sft_step(policy, optimizer, encoded, engine=engine, micro_batching=split)
                        else:
                            _mini_batch_step(MiniBatchContext(policy, engine, optimizer, rl, split=split, suppressed=suppressed), encoded, old,
                                             advantages)
                        synchronize(device)
                        seconds = time.perf_counter() - started
                        compute = max(seconds - optimizer_s, 1e-9)
                        record.update(step_s=round(seconds, 3), compute_s=round(compute, 3), peak_gib=gib(peak(device)),
                                      peak_over_state_gib=gib(peak(device) - state_bytes),
                                      model_tflops=round(flops / 1e12, 1),
                                      mfu=round(flops / compute / H200_BF16_PEAK, 3) if device.type == "cuda" else None)
                    except torch.OutOfMemoryError as error:
                        record["error"] = f"out of memory: {str(error)[:200]}"
                        engine.zero_grad(optimizer)
                        for parameter in policy.model.parameters():  # a backward cut short may leave bf16 gradients
                            parameter.grad = None
                        torch.cuda.empty_cache()
                    measurements.append(record)
                    context.record({"stage": "memory-point", **record})
                    if context.left() < 60:
                        raise TimeoutError("budget nearly spent: stopping the memory sweep here")
    finally:
        policy.set_gradient_checkpointing(False)
        engine.close()
        del optimizer, engine
    slopes = {}
    for kind in ("sft", "rl"):
        for checkpointing in (False, True):
            points = [(m["tokens"], m["peak_over_state_gib"]) for m in measurements
                      if m["kind"] == kind and m["gradient_checkpointing"] == checkpointing and "peak_over_state_gib" in m]
            if len(points) >= 2:
                (t0, m0), (t1, m1) = points[0], points[-1]
                slopes[f"{kind}_{'ckpt' if checkpointing else 'no_ckpt'}_mib_per_token"] = round((m1 - m0) * 1024 / (t1 - t0), 4)
    best = [m for m in measurements if m.get("mfu")]
    line = f"state {gib(state_bytes)} GiB; " + ", ".join(f"{k}={v}" for k, v in slopes.items())
    if best:
        line += f"; MFU up to {max(m['mfu'] for m in best):.2f}"
    return {"state_gib": gib(state_bytes), "optimizer_step_s": round(optimizer_s, 3), "points": measurements, "slopes": slopes,
            "summary": line}


def stage_precision(context: Context) -> dict[str, Any]:
    """The share of weights one SFT step at lr 1e-6 moves: fp32 masters (the engine's default)
    against AdamW stepping the bf16 weights themselves."""
    from vistool_trainer.model.reference_sizes import synthetic_conversations
    from vistool_trainer.trainers.sft import sft_step

    plan = context.plan
    policy = _policy(context)
    encoded = synthetic_conversations(policy, 1, plan.row_length, plan.image_tokens, 7)
    result: dict[str, Any] = {}
    for masters in (True, False):
        engine = _engine(policy, master_weights=masters)
        optimizer = engine.make_optimizer(1e-6, 0.0, 1.0)
        engine.train_mode()
        before = [p.detach().clone() for p in policy.model.parameters() if p.requires_grad]
        loss = sft_step(policy, optimizer, encoded, engine=engine)
        after = [p.detach() for p in policy.model.parameters() if p.requires_grad]
        total = sum(b.numel() for b in before)
        model_moved = sum(int((a != b).sum()) for a, b in zip(after, before)) / total
        entry = {"loss": loss, "bf16_weights_moved": round(model_moved, 5)}
        if masters:
            # Masters start as the bf16 weights exactly; a master moved iff it differs from them now.
            entry["fp32_masters_moved"] = round(sum(int((m != b.float()).sum()) for m, b in zip(engine.masters.masters, before)) / total, 5)
        result["fp32_masters" if masters else "bf16_adamw"] = entry
        engine.close()
        del engine, optimizer, before, after
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    result["summary"] = (f"lr 1e-6: fp32 masters moved {result['fp32_masters']['fp32_masters_moved']:.1%} "
                         f"(bf16 copy {result['fp32_masters']['bf16_weights_moved']:.1%}); bf16 AdamW moved "
                         f"{result['bf16_adamw']['bf16_weights_moved']:.1%}")
    return result


def stage_lora(context: Context) -> dict[str, Any]:
    """The one-GPU recipe's setting (run/demo.py REAL_MODEL_SETTINGS): LoRA rank 64 on every
    attention and MLP projection over the bf16 model, checkpointed layers; its training state and
    one RL mini-batch at the largest budget. It changes the model in place, so it runs last."""
    from peft import LoraConfig, get_peft_model

    from vistool_trainer.algorithms.micro_batches import MicroBatching
    from vistool_trainer.model.reference_sizes import synthetic_conversations
    from vistool_trainer.run.demo import REAL_MODEL_SETTINGS
    from vistool_trainer.run.run_config import resolve_config
    from vistool_trainer.trainers.grpo import MiniBatchContext, _mini_batch_step, _sampling_log_probs

    plan = context.plan
    policy = _policy(context)
    device = policy.device
    synchronize(device)
    base_bytes = memory_now(device)
    policy.model = get_peft_model(policy.model, LoraConfig(r=REAL_MODEL_SETTINGS["policy.lora.r"], lora_alpha=REAL_MODEL_SETTINGS["policy.lora.alpha"],
                                                           lora_dropout=0.05, target_modules=REAL_MODEL_SETTINGS["policy.lora.target_modules"]))
    policy.set_gradient_checkpointing(True)
    trainable = sum(p.numel() for p in policy.model.parameters() if p.requires_grad)
    engine = _engine(policy)
    optimizer = engine.make_optimizer(1e-5, 0.0, 1.0)
    rl = resolve_config({}).rl
    suppressed = tuple(policy.processor.control_token_ids)
    budget = plan.token_budgets[-1]
    rows = max(1, budget // plan.row_length)
    encoded = synthetic_conversations(policy, rows, plan.row_length, plan.image_tokens, 11)
    split = MicroBatching(max_tokens=budget)
    advantages = torch.tensor([1.0 if i % 2 else -1.0 for i in range(rows)])
    points = []
    for attempt in range(2):  # the first step allocates AdamW's state; the second is the one measured
        old, _ = _sampling_log_probs(policy, encoded, split, 1.0, suppressed)
        engine.train_mode(dropout=False)
        engine.zero_grad(optimizer)
        synchronize(device)
        state = memory_now(device)
        reset_peak(device)
        started = time.perf_counter()
        _mini_batch_step(MiniBatchContext(policy, engine, optimizer, rl, split=split, suppressed=suppressed), encoded, old, advantages)
        synchronize(device)
        points.append({"step_s": round(time.perf_counter() - started, 3), "state_gib": gib(state), "peak_gib": gib(peak(device)),
                       "peak_over_state_gib": gib(peak(device) - state)})
    engine.close()
    context.state.clear()  # the model now carries adapters: nothing after this reuses it
    measured = points[-1]
    return {"trainable_parameters": trainable, "base_model_gib": gib(base_bytes), "tokens": rows * plan.row_length, **measured,
            "summary": f"LoRA r64: {trainable / 1e6:.0f}M trainable, state {measured['state_gib']} GiB, RL mini-batch of "
                       f"{rows * plan.row_length} tokens peaks at {measured['peak_gib']} GiB in {measured['step_s']} s"}


def stage_release(context: Context) -> dict[str, Any]:
    """Free the 3B model before the demo (its run is a separate process on the same GPU)."""
    context.state.clear()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        return {"allocated_gib": gib(torch.cuda.memory_allocated()), "summary": "released"}
    return {"summary": "released"}


def _demo_config(context: Context, root: Path) -> Path:
    from vistool_trainer.config import to_dict
    from vistool_trainer.run.demo import demo_config

    plan = context.plan
    data = root / "data"
    if not data.exists():
        shutil.copytree(context.carry / "tasks", data)
    overrides = {"sft.steps": plan.demo_sft_steps, "sft.probe_every": max(1, plan.demo_sft_steps // 3),
                 "rl.steps": plan.demo_rl_steps, "eval.n": plan.demo_eval_n, "eval.every_steps": 0,
                 "checkpoint.every_steps": 2, "checkpoint.keep": 2, "env.node": context.node, "threads": 0,
                 "logging.rollouts_per_step": 32}
    if plan.dry_run:
        overrides.update({"sft.batch_size": 4, "rl.prompts_per_step": 2, "rl.group_size": 4, "sft.probe_tasks": 8})
    config = demo_config(str(root.parent), 60.0, "micro", plan.device, "tools", overrides)
    config.output_dir = str(root / "run")
    config.data.train = str(data / "train" / "tasks.jsonl")
    config.data.eval = str(data / "eval" / "tasks.jsonl")
    path = root / "config.json"
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_dict(config), indent=2))
    return path


def _train(context: Context, config: Path, log: Path, *extra: str, timeout: float) -> int:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "trainer"), os.environ.get("PYTHONPATH", "")]),
                   "PYTHONUNBUFFERED": "1"}
    with open(log, "a") as handle:
        done = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(config), *extra], cwd=REPO,
                              stdout=handle, stderr=subprocess.STDOUT, env=environment, timeout=timeout)
    return done.returncode


def _metrics(run: Path) -> list[dict[str, Any]]:
    path = run / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def stage_demo(context: Context) -> dict[str, Any]:
    """The micro demo's tools arm on this device: SFT, then the first RL steps, through the real env
    server (carried node and bundle), evaluated after each stage; the run directory comes back."""
    root = context.work / "demo"
    config = _demo_config(context, root)
    started = time.perf_counter()
    code = _train(context, config, root / "train.log", timeout=max(60.0, context.left() - 150))
    seconds = time.perf_counter() - started
    run = root / "run"
    archive = context.out / "demo-run.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(run, arcname="demo-run", filter=lambda info: None if info.name.endswith("optimizer.pt") else info)
        tar.add(root / "train.log", arcname="demo-run/train-stdout.log")
    metrics = _metrics(run)
    rl = [m for m in metrics if m.get("stage") == "rl"]
    evals = {m.get("label"): {k: v for k, v in m.items() if k.startswith("eval/")} for m in metrics if m.get("stage") == "eval"}
    sft = [m for m in metrics if m.get("stage") == "sft"]
    status = json.loads((run / "run.json").read_text()).get("status") if (run / "run.json").exists() else None
    keys = ("reward/mean", "acc/mean", "tool/call_rate", "timing/step_s", "timing/gen_s", "timing/env_s", "timing/train_s",
            "actor/loss", "actor/grad_norm", "actor/ppo_kl", "memory/trainer_peak_rss_mb")
    result = {"exit_code": code, "status": status, "seconds": round(seconds, 1), "archive": archive.name,
              "archive_mib": round(archive.stat().st_size / 2**20, 2), "sft_steps": len(sft),
              "sft_step_s_median": sorted(m["timing/step_s"] for m in sft)[len(sft) // 2] if sft else None,
              "sft_last_loss": sft[-1]["sft/loss"] if sft else None,
              "rl_steps": [{k: m.get(k) for k in ("rl/step", *keys)} for m in rl], "evaluations": evals}
    if code != 0 or status != "finished":
        raise RuntimeError(f"the demo run ended with exit {code}, status {status}: {json.dumps(result)[:1500]}")
    context.state["demo_metrics"] = rl
    result["summary"] = (f"{len(sft)} SFT + {len(rl)} RL steps on {context.plan.device} in {seconds:.0f} s; RL step "
                         + ", ".join(f"{m.get('timing/step_s', 0):.1f}s" for m in rl))
    return result


def stage_resume(context: Context) -> dict[str, Any]:
    """The same demo run stopped after its first RL step and resumed: its RL metrics against the
    uninterrupted run's (same RNG state, CUDA generators included, and the same fp32 weights)."""
    uninterrupted = context.state.get("demo_metrics")
    if not uninterrupted:
        raise RuntimeError("the demo stage did not finish: nothing to compare with")
    root = context.work / "resume"
    config = _demo_config(context, root)
    stop_after = context.plan.demo_sft_steps + 1
    first = _train(context, config, root / "train.log", "--max-steps", str(stop_after), timeout=max(60.0, context.left() - 60))
    second = _train(context, config, root / "train.log", "--resume", timeout=max(60.0, context.left() - 30))
    resumed = [m for m in _metrics(root / "run") if m.get("stage") == "rl"]
    compared = ("reward/mean", "acc/mean", "actor/loss", "actor/grad_norm", "actor/ppo_kl", "actor/entropy", "response_length/mean")
    rows = []
    for a, b in zip(uninterrupted, resumed):
        rows.append({"rl/step": a.get("rl/step"), **{key: [a.get(key), b.get(key)] for key in compared}})
    equal = all(a.get(key) == b.get(key) for a, b in zip(uninterrupted, resumed) for key in compared) and len(resumed) == len(uninterrupted)
    with tarfile.open(context.out / "resume-run.tar.gz", "w:gz") as tar:
        tar.add(root / "run" / "metrics.jsonl", arcname="resume-run/metrics.jsonl")
        tar.add(root / "train.log", arcname="resume-run/train-stdout.log")
    return {"exit_codes": [first, second], "steps_compared": len(rows), "identical": equal, "rows": rows,
            "summary": f"resumed after RL step 1: RL metrics {'identical' if equal else 'DIFFER'} over {len(rows)} steps"}


# ---- main ----------------------------------------------------------------------------------------

STAGES: list[tuple[str, float, Callable[[Context], dict[str, Any]]]] = [
    ("environment", 10, stage_environment),
    ("forward", 60, stage_forward),
    ("generate", 60, stage_generate),
    ("memory", 90, stage_memory),
    ("precision", 40, stage_precision),
    ("lora", 40, stage_lora),
    ("release", 5, stage_release),
    ("demo", 90, stage_demo),
    ("resume", 90, stage_resume),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: OUT/../gpu-check-work)")
    parser.add_argument("--node", required=True, help="the node binary the env server runs on")
    parser.add_argument("--carry", type=Path, default=REPO / ".gpu-check")
    parser.add_argument("--cpu-dry-run", action="store_true", help="the same stages at tiny sizes on the CPU")
    parser.add_argument("--budget-s", type=float, default=450.0, help="stop starting stages past this many seconds")
    parser.add_argument("--stages", default=",".join(name for name, _, _ in STAGES))
    args = parser.parse_args(argv)
    plan = DRY_PLAN if args.cpu_dry_run else GPU_PLAN
    if not args.cpu_dry_run and not torch.cuda.is_available():
        print("check: torch sees no CUDA device; use --cpu-dry-run on a machine without one", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(os.environ.get("TMPDIR", "/tmp")) / "vistool-gpu-check-work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    context = Context(plan, args.out, work, args.node, args.carry, time.time() + args.budget_s, args.out / "results.jsonl")
    chosen = set(args.stages.split(","))
    for name, needs, body in STAGES:
        if name in chosen:
            run_stage(context, name, needs if not plan.dry_run else 0, body)
    summary = "\n".join(["", "=== vistool GPU check" + (" (CPU dry run)" if plan.dry_run else "") + " ===", *context.summary,
                         f"results: {context.results}"])
    (args.out / "summary.txt").write_text(summary + "\n")
    print(summary, flush=True)
    failed = [line for line in context.summary if "FAILED" in line]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
