"""Trainer memory on the CPU: peak memory of one RL micro-batch (and one SFT step) against the
tokens in it, with and without gradient checkpointing, and what that implies per GPU for
Qwen2.5-VL-3B and -7B (`npm run bench -- trainer-memory`, `make bench`).

Two measurements, each point in a fresh child process (bf16 weights and compute, as on a GPU;
this machine's CPU has bf16 matrix units), its peak resident memory taken from the kernel's
high-water mark (reset just before the measured pass through /proc/self/clear_refs) minus the
resident memory at that moment, with glibc returning every freed block over 64 KiB at once
(MALLOC_MMAP_THRESHOLD_), so the peak is what the pass held:

1. A whole randomly initialised Qwen2.5-VL of ~45M parameters (text width 256, 4 layers, the
   real 151,936-token vocabulary, a 2-block vision tower): peak memory at 1k, 2k and 4k tokens per
   micro-batch (rows of 1,024 tokens, a 256-token image each, 40 % of the tokens policy-written),
   checkpointing off and on, for the RL update's micro-batch and for an SFT step; the slope of a
   least-squares line is the memory per token.
2. Slices of the 3B and the 7B model at their real widths — the real embedding and vocabulary
   with 1 or 2 decoder layers and 1 or 2 vision blocks. The 1-layer, 1-block slice's peak slope
   (1k, 2k, 4k tokens) holds everything that does not repeat (embedding, LM head and softmax
   slices, merger, and with checkpointing the one layer being recomputed). What one more decoder
   layer or vision block adds per token is the difference between slices in the bytes autograd
   saves for backward (exact; with checkpointing it is a few KiB per token, far under the peak's
   noise, so the peaks' own difference is printed beside it only as a check). A whole model's
   per-token slope is the 1-layer slice's + (layers − 1) × per layer + (blocks − 1) × per block:
   measured at the true widths, so no scaling law stands between a small model and the table.

The table adds the training state per GPU (bytes per parameter for the strategy, below) to the
activations of one micro-batch of 8192 tokens (`rl.ppo_max_token_len_per_gpu`): the 1-layer
slice's fixed part (the line's intercept: the LM head's slice buffers, one layer's gradients) plus
the whole model's part per token. It is a CPU measurement
of what autograd holds; a GPU adds its allocator's caching and kernels' workspaces. The GPU
check (scripts/gpu/check.sh) measures the real thing at the 3B size.

It never trains anything that is kept.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "trainer"))

ROW_LENGTH, IMAGE_TOKENS = 1024, 256
SMALL_TOKENS = (1024, 2048, 4096)
SLICE_TOKENS = (1024, 2048)
SLICE_BASE_TOKENS = (1024, 2048, 4096)
# Training state per parameter (bytes), fp32 master weights everywhere: what each strategy keeps
# on one GPU of N. The whole bf16 copy that samples rollouts stays on every GPU in all three.
#   replicated: bf16 weights 2 + fp32 masters 4 + fp32 gradients 4 + AdamW moments 8
#   FSDP2 (engines/fully_sharded.py): bf16 copy 2 + (fp32 shard 4 + fp32 grad 4 + AdamW 8) / N
#   ZeRO-3 (DeepSpeed bf16): bf16 copy 2 + (bf16 partition 2 + fp32 master 4 + fp32 grad 4 + AdamW 8) / N
STRATEGIES = {"replicated": (18.0, 0.0), "FSDP": (2.0, 16.0), "ZeRO-3": (2.0, 18.0)}
GPUS = (1, 4, 8)
BUDGET_TOKENS = 8192


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def measure_point(point: dict[str, Any]) -> dict[str, Any]:
    """One measurement (run in its own process): build the model, then the measured pass."""
    import torch

    from vistool_trainer.algorithms.micro_batches import MicroBatching
    from vistool_trainer.engines.training_engine import TrainingEngine
    from vistool_trainer.model.reference_sizes import QwenVlSize, random_policy, synthetic_conversations
    from vistool_trainer.run.run_config import resolve_config
    from vistool_trainer.trainers.grpo import MiniBatchContext, _mini_batch_step, _sampling_log_probs
    from vistool_trainer.trainers.sft import sft_step

    torch.set_num_threads(int(point.get("threads", 2)))
    size = QwenVlSize(**{**point["size"], "vision_full_attention": tuple(point["size"]["vision_full_attention"]),
                         "mrope_section": tuple(point["size"]["mrope_section"])})
    policy = random_policy(size, "cpu", torch.bfloat16, seed=0, gradient_checkpointing=point["checkpointing"])
    if point.get("layers_only"):
        # A slice trains only its layers and blocks: other weights' gradients are per-parameter
        # memory, not per-token, and would only make the slice bigger.
        for name, parameter in policy.model.named_parameters():
            parameter.requires_grad_(".layers." in name or ".blocks." in name)
    rows = point["tokens"] // ROW_LENGTH
    encoded = synthetic_conversations(policy, rows, ROW_LENGTH, IMAGE_TOKENS, seed=point["tokens"])
    split = MicroBatching(max_tokens=point["tokens"])
    engine = TrainingEngine(policy, master_weights=False)  # activations are the subject; state is counted apart
    optimizer = torch.optim.SGD(engine.trained_tensors(), lr=0.0)
    suppressed = tuple(policy.processor.control_token_ids)
    result: dict[str, Any] = {**point, "parameters": sum(p.numel() for p in policy.model.parameters())}
    if point["kind"] == "rl":
        old, _ = _sampling_log_probs(policy, encoded, split, 1.0, suppressed)
        engine.train_mode(dropout=False)
        advantages = torch.tensor([1.0 if i % 2 else -1.0 for i in range(rows)])
        rl = resolve_config({}).rl
        context = MiniBatchContext(policy, engine, optimizer, rl, split=split, suppressed=suppressed)
        run = lambda: _mini_batch_step(context, encoded, old, advantages)  # noqa: E731
    else:
        engine.train_mode()
        run = lambda: sft_step(policy, optimizer, encoded, engine=engine, micro_batching=split)  # noqa: E731
    resettable = _reset_peak()
    before = _rss_kib()
    started = time.perf_counter()
    run()
    result.update(seconds=round(time.perf_counter() - started, 2), peak_mib=round((_peak_kib() - before) / 1024, 1),
                  peak_resettable=resettable)
    result["saved_mib"] = round(saved_for_backward(engine, policy, encoded, suppressed) / 2**20, 3)
    return result


def saved_for_backward(engine: Any, policy: Any, encoded: list[Any], suppressed: tuple[int, ...]) -> int:
    """Bytes autograd keeps for backward after the forward of the same micro-batch (what each
    layer adds, exactly: parameters and shared storages counted once, parameters not at all)."""
    import torch

    parameters = {p.untyped_storage().data_ptr() for p in policy.model.parameters()}
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        log_probs, mask, _ = engine.score(policy.batch(encoded), with_entropy=True, suppressed_token_ids=suppressed)
    del log_probs, mask
    return sum(storages.values())


def _child(point: dict[str, Any]) -> dict[str, Any]:
    environment = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "OMP_NUM_THREADS": str(point.get("threads", 2)),
                   "PYTHONPATH": str(REPO / "trainer")}
    done = subprocess.run([sys.executable, __file__, "--point", json.dumps(point)], capture_output=True, text=True, env=environment,
                          timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"point {point['label']} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares line through (tokens, MiB): (MiB at zero tokens, MiB per token)."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    per_token = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return mean_y - per_token * mean_x, per_token


def slope(points: list[tuple[float, float]]) -> float:
    return fit(points)[1]


def memory_per_gpu_gib(parameters: int, activation_mib_per_token: float, strategy: str, gpus: int, tokens: int = BUDGET_TOKENS,
                       fixed_mib: float = 0.0) -> float:
    """Training state per GPU plus one micro-batch's activations (a fixed part, e.g. the LM head's
    slice buffers, and a part per token)."""
    whole, sharded = STRATEGIES[strategy]
    state = parameters * (whole + sharded / gpus)
    return (state + (fixed_mib + activation_mib_per_token * tokens) * 2**20) / 2**30


def optimizer_step_peaks(size: Any) -> dict[str, Any]:
    """Bytes per trained parameter that AdamW's step allocates and holds at once (beyond the training
    state), measured on `size` with bf16 weights and fp32 masters as the replicated engine trains
    them, after one step (so the moments exist): for each implementation torch has, for the one an
    unset default resolves to on CUDA, and for the engine's own (engines/optimizer.py) as it is built
    for CUDA parameters. Counted op by op (engines/optimizer.step_peak_bytes), so it is exact on
    the CPU too: the step allocates the same tensors on a GPU."""
    import torch

    from vistool_trainer.engines.optimizer import adamw_options, resolved_implementation, step_peak_bytes
    from vistool_trainer.engines.training_engine import TrainingEngine
    from vistool_trainer.model.reference_sizes import random_policy

    policy = random_policy(size, "cpu", torch.bfloat16, seed=0, gradient_checkpointing=False)
    engine = TrainingEngine(policy)
    trained = engine.trained_tensors()
    count = sum(t.numel() for t in trained)
    largest = max(t.numel() for t in trained)
    peaks: dict[str, float] = {}
    for label, implementation in (("foreach", "foreach"), ("loop", "loop"), ("fused", "fused"),
                                  ("torch default on CUDA", resolved_implementation(torch.optim.AdamW(trained, lr=1e-6), "cuda")),
                                  ("engine on CUDA", "fused" if adamw_options("cuda").get("fused") else "loop")):
        optimizer = torch.optim.AdamW(trained, lr=1e-6, weight_decay=0.0)
        for tensor in trained:
            tensor.grad = torch.full_like(tensor, 1e-3)
        step_peak_bytes(optimizer, implementation)  # the first step creates the moments
        peaks[label] = step_peak_bytes(optimizer, implementation) / count
        for tensor in trained:
            tensor.grad = None
    engine.close()
    return {"parameters": count, "largest_tensor": largest, "bytes_per_parameter": peaks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="trainer memory bench")
    parser.add_argument("--point", help="measure one point (JSON) and print it; used by the bench itself")
    parser.add_argument("--quick", action="store_true", help="only the small whole model")
    parser.add_argument("--json", type=Path, help="also write every point and the table here")
    parser.add_argument("--optimizer-only", action="store_true", help="only the optimizer step's peak (section 0)")
    args = parser.parse_args(argv)
    if args.point:
        print(json.dumps(measure_point(json.loads(args.point))))
        return 0

    from vistool_trainer.model.reference_sizes import QWEN2_5_VL_3B, QWEN2_5_VL_7B, QwenVlSize, size_parameter_counts

    started = time.time()
    load = os.getloadavg()[0]
    print(f"trainer memory bench (bf16 on the CPU, {os.cpu_count()} cores, load {load:.1f}); each point in its own process")
    small = QwenVlSize("bench-small", hidden=256, intermediate=1376, layers=4, heads=2, kv_heads=1, vocab=151936, tie_embeddings=True,
                       vision_hidden=128, vision_intermediate=342, vision_depth=2, vision_heads=2, vision_full_attention=(1,))
    records: list[dict[str, Any]] = []
    optimizer = optimizer_step_peaks(small)
    print(f"\n0. the AdamW step on the whole small model ({optimizer['parameters'] / 1e6:.1f}M trained parameters, bf16 weights, fp32 "
          "masters): bytes per parameter it allocates and holds at once on top of the training state")
    for label, value in optimizer["bytes_per_parameter"].items():
        print(f"   {label:<24}{value:>7.2f} B/param")
    per_element = optimizer["bytes_per_parameter"]["loop"] * optimizer["parameters"] / optimizer["largest_tensor"]
    print(f"   (the loop's peak is {per_element:.1f} B per element of the largest tensor, here {optimizer['largest_tensor'] / 1e6:.1f}M of "
          f"them; for Qwen2.5-VL-3B's 311M-entry embedding {311e6 * per_element / 2**30:.1f} GiB)")
    if args.optimizer_only:
        return 0
    print("\n1. whole model, ~45M parameters (text width 256, 4 layers, vocabulary 151,936): peak MiB above the model")
    print(f"{'kind':<5}{'checkpointing':<15}" + "".join(f"{t:>9}" for t in SMALL_TOKENS) + f"{'MiB/token':>11}{'s at 4k':>9}")
    small_slopes: dict[tuple[str, bool], float] = {}
    for kind in ("rl", "sft"):
        for checkpointing in (False, True):
            row = []
            for tokens in SMALL_TOKENS:
                record = _child({"label": f"small-{kind}-{tokens}-{checkpointing}", "size": asdict(small), "tokens": tokens, "kind": kind,
                                 "checkpointing": checkpointing})
                records.append(record)
                row.append(record)
            small_slopes[(kind, checkpointing)] = slope([(r["tokens"], r["peak_mib"]) for r in row])
            print(f"{kind:<5}{'on' if checkpointing else 'off':<15}" + "".join(f"{r['peak_mib']:>9.0f}" for r in row)
                  + f"{small_slopes[(kind, checkpointing)]:>11.3f}{row[-1]['seconds']:>9.1f}")
    if args.quick:
        return 0

    print("\n2. slices at the real widths (RL micro-batch), MiB per token: the 1-layer, 1-block slice's peak slope; what one more\n"
          "   decoder layer or vision block keeps for backward (exact, from autograd's saved tensors; the peak's own difference\n"
          "   beside it where it is large enough to read); then the whole model")
    wholes: dict[tuple[str, bool], dict[str, float]] = {}
    for model in (QWEN2_5_VL_3B, QWEN2_5_VL_7B):
        for checkpointing in (False, True):
            peaks, saved = {}, {}
            for layers, blocks in ((1, 1), (2, 1), (1, 2)):
                cut = replace(model, name=f"{model.name}-slice", layers=layers, vision_depth=blocks, vision_full_attention=(blocks - 1,))
                tokens_list = SLICE_BASE_TOKENS if (layers, blocks) == (1, 1) else SLICE_TOKENS
                row = [_child({"label": f"{model.name}-{layers}-{blocks}-{tokens}-{checkpointing}", "size": asdict(cut), "tokens": tokens,
                               "kind": "rl", "checkpointing": checkpointing, "layers_only": True}) for tokens in tokens_list]
                records.extend(row)
                if (layers, blocks) == (1, 1):
                    fixed = fit([(r["tokens"], r["peak_mib"]) for r in row])[0]
                peaks[(layers, blocks)] = slope([(r["tokens"], r["peak_mib"]) for r in row])
                saved[(layers, blocks)] = slope([(r["tokens"], r["saved_mib"]) for r in row])
            per_layer = saved[(2, 1)] - saved[(1, 1)]
            per_block = saved[(1, 2)] - saved[(1, 1)]
            whole = {"fixed_mib": fixed, "base": peaks[(1, 1)], "per_layer": per_layer, "per_block": per_block,
                     "per_layer_from_peaks": peaks[(2, 1)] - peaks[(1, 1)], "per_block_from_peaks": peaks[(1, 2)] - peaks[(1, 1)],
                     "whole": peaks[(1, 1)] + (model.layers - 1) * per_layer + (model.vision_depth - 1) * per_block}
            wholes[(model.name, checkpointing)] = whole
            print(f"{model.name:<15} checkpointing {'on ' if checkpointing else 'off'}: 1-layer slice {whole['base']:.3f}, per decoder layer "
                  f"{per_layer:.4f} (peaks {whole['per_layer_from_peaks']:.4f}), per vision block {per_block:.4f} "
                  f"(peaks {whole['per_block_from_peaks']:.4f}) -> whole model {whole['whole']:.3f} MiB/token "
                  f"+ {fixed:.0f} MiB fixed ({(fixed + whole['whole'] * BUDGET_TOKENS) / 1024:.1f} GiB at {BUDGET_TOKENS} tokens)")

    parameters = {model.name: size_parameter_counts(model)["total"] for model in (QWEN2_5_VL_3B, QWEN2_5_VL_7B)}
    print("\nparameters (built on the meta device): " + ", ".join(f"{name} {count / 1e9:.2f}B" for name, count in parameters.items()))
    print(f"\n3. memory per GPU (GiB), full fine-tune with fp32 masters, one RL micro-batch of {BUDGET_TOKENS} tokens "
          f"(rl.ppo_max_token_len_per_gpu); state per parameter: replicated 18 B, FSDP 2 + 16/N B, ZeRO-3 2 + 18/N B. The optimizer "
          "step's own peak is state + the step's temporaries (section 0): with the engine's fused AdamW none, so the micro-batch is "
          "the peak; with torch's CUDA default (foreach) +4 B per parameter on one GPU")
    for model in (QWEN2_5_VL_3B, QWEN2_5_VL_7B):
        state = parameters[model.name] * STRATEGIES["replicated"][0]
        step = optimizer["bytes_per_parameter"]
        print(f"   {model.name} replicated ×1: state {state / 2**30:.1f} GiB; step peak with the engine's AdamW "
              f"{(state + parameters[model.name] * step['engine on CUDA']) / 2**30:.1f} GiB, with torch's CUDA default "
              f"{(state + parameters[model.name] * step['torch default on CUDA']) / 2**30:.1f} GiB")
    header = "| model | checkpointing | MiB/token | " + " | ".join(f"{s} ×{g}" for s in STRATEGIES for g in GPUS) + " |"
    print(header)
    print("|" + "---|" * (3 + len(STRATEGIES) * len(GPUS)))
    table = []
    for model in (QWEN2_5_VL_3B, QWEN2_5_VL_7B):
        for checkpointing in (False, True):
            per_token = wholes[(model.name, checkpointing)]["whole"]
            fixed = wholes[(model.name, checkpointing)]["fixed_mib"]
            # One process always trains replicated (engines/factory.py): no sharded cell at 1 GPU.
            cells = [None if s != "replicated" and g == 1 else memory_per_gpu_gib(parameters[model.name], per_token, s, g, fixed_mib=fixed)
                     for s in STRATEGIES for g in GPUS]
            table.append({"model": model.name, "checkpointing": checkpointing, "mib_per_token": per_token, "gib": cells})
            print(f"| {model.name} | {'on' if checkpointing else 'off'} | {per_token:.3f} | "
                  + " | ".join("—" if c is None else f"{c:.0f}" for c in cells) + " |")
    print(f"\nsmall model's RL slope {small_slopes[('rl', False)]:.3f} / {small_slopes[('rl', True)]:.3f} MiB/token (off / on); "
          f"{len(records)} points in {time.time() - started:.0f} s (load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)")
    if args.json:
        args.json.write_text(json.dumps({"optimizer_step": optimizer, "points": records, "small_slopes": {f"{k[0]}-{k[1]}": v for k, v in small_slopes.items()},
                                         "wholes": {f"{k[0]}-{k[1]}": v for k, v in wholes.items()}, "table": table}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
