"""`demo --cpu-kernels` (make demo DEMO_KERNELS=...): which of ATen's CPU kernel sets the arms train with.

Why: a demo run is deterministic on one machine, and another CPU gave another result (docs/DEMO.md,
issue 40). The thread count turned out not to change a single rounding at the demo's shapes here,
so it stands in for no other CPU; what another CPU does change is the kernel path: ATen dispatches its
vectorised kernels (sums, softmax, exp...) to an AVX-512, an AVX2 or a scalar `default` build by
what the CPU has, and each path rounds differently. `ATEN_CPU_CAPABILITY` picks the path, so
`--cpu-kernels default` makes this machine sum as a CPU without AVX2 would.

What torch does with the variable (aten/src/ATen/native/DispatchStub.cpp, compute_cpu_capability,
on x86): `default`, `avx2` and `avx512` are taken as told without asking the CPU; any other value
is ignored with a warning. A path the CPU lacks does not fall back: its first kernel stops the
process with an illegal instruction (measured: `avx512` on an AVX2-only AMD EPYC, torch 2.13,
exit 132 on a sum). Off x86 (VSX, ZVECTOR, SVE) only `default` is understood. So a request is
honoured only up to the path torch picks by itself on this CPU, its native one, and refused
before any work otherwise.

ATen's path is not the whole CPU. oneDNN, which torch calls for some image operations (the vision
tower's patch convolution among them), picks its own code by the CPU. Measured on an AMD EPYC with
AVX-512, seed 1, `avx2`: ATen's path alone gave other SFT losses than the AVX2-only machine from the
first step with images in the batch, and another run; capping oneDNN at AVX2 as well
(`ONEDNN_MAX_CPU_ISA`) gave the same losses as capping oneDNN and MKL both (MKL, torch's BLAS,
changed none), and the AVX2-only machine's run (docs/DEMO.md, "On a second machine"). So a request
caps oneDNN at the same instruction set (ONEDNN_ISA); oneDNN's own floor on x86 is SSE4.1, which is
what `default` gets.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from .run_config import ConfigError

CPU_KERNELS = ("default", "avx2", "avx512")
# torch.backends.cpu.get_cpu_capability()'s name of each path, lowest first.
CAPABILITY_NAMES = {"default": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}
VARIABLE = "ATEN_CPU_CAPABILITY"
# oneDNN's cap under each path (its ONEDNN_MAX_CPU_ISA names): the highest instruction set it may use.
ONEDNN_VARIABLE = "ONEDNN_MAX_CPU_ISA"
ONEDNN_ISA = {"default": "SSE41", "avx2": "AVX2", "avx512": "AVX512_CORE"}
PROBE = "import torch; print(torch.backends.cpu.get_cpu_capability())"
CPUINFO = Path("/proc/cpuinfo")


def cpu_model(cpuinfo: str | None = None) -> str | None:
    """The CPU a run trained on, as a range names it: the kernel path says how ATen's own kernels
    rounded, not what else the CPU chose (oneDNN and the BLAS library pick their code by CPU too), and two
    machines under one name differ: the demo's range was measured on an "AMD EPYC" without AVX-512
    and on one with it. So the model name with its family and model numbers (`/proc/cpuinfo`, the
    first processor: x86 Linux), else what `platform` says, else None."""
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text(errors="replace")
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name") or platform.processor()
    if not name or name == "unknown":
        return None
    if fields.get("cpu family") and fields.get("model"):
        return f"{name} (family {fields['cpu family']}, model {fields['model']})"
    return name


def arm_environment(base: Mapping[str, str], threads: int, cpu_kernels: str | None) -> dict[str, str]:
    """The environment of one arm's trainer: `base` with its OpenMP threads (0: left as it is) and its
    kernel path, ATen's and oneDNN's cap. Without `cpu_kernels` the CPU's own: an ATEN_CPU_CAPABILITY
    or ONEDNN_MAX_CPU_ISA inherited from the caller is dropped, so that demo.json's `cpu_kernels:
    null` is what the arm ran."""
    environment = {key: value for key, value in base.items() if key not in (VARIABLE, ONEDNN_VARIABLE)}
    if threads:
        environment["OMP_NUM_THREADS"] = str(threads)
    if cpu_kernels is not None:
        environment[VARIABLE] = cpu_kernels
        environment[ONEDNN_VARIABLE] = ONEDNN_ISA[cpu_kernels]
    return environment


def native_capability() -> str:
    """The path torch picks on this CPU when not told: get_cpu_capability() in a fresh interpreter
    without the variable (torch settles it once per process, and this one may have been told)."""
    environment = {key: value for key, value in os.environ.items() if key != VARIABLE}
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=environment, timeout=300)
    if probe.returncode != 0 or not probe.stdout.strip():
        raise ConfigError(f"--cpu-kernels: could not ask torch for this CPU's kernel path (exit {probe.returncode}): "
                          + probe.stderr.strip()[-500:])
    return probe.stdout.strip().splitlines()[-1]


def kernels_possible(native: str) -> tuple[str, ...]:
    """The `--cpu-kernels` values a CPU whose native path is `native` can run: every x86 path up to its
    own; `default` alone where the native path is none of them (VSX, ZVECTOR, SVE256)."""
    order = list(CAPABILITY_NAMES.values())
    return CPU_KERNELS[: order.index(native) + 1] if native in order else ("default",)


def kernels_refusal(requested: str, native: str) -> str | None:
    """Why `requested` cannot run on a CPU whose native path is `native`, or None when it can."""
    possible = kernels_possible(native)
    if requested in possible:
        return None
    return (f"--cpu-kernels {requested}: this CPU's own ATen kernel path is {native} (torch.backends.cpu.get_cpu_capability()), "
            f"so it can run --cpu-kernels {' or '.join(possible)}; torch does not check the CPU when told {requested!r}, and "
            f"the first {CAPABILITY_NAMES.get(requested, requested)} kernel would stop the trainer with an illegal instruction")


def check_cpu_kernels(requested: str | None, device: str) -> None:
    """Refuse, before any work, a kernel path this demo cannot run; None (the CPU's own) always runs."""
    if requested is None:
        return
    if requested not in CPU_KERNELS:
        raise ConfigError(f"--cpu-kernels {requested!r} is not one of {', '.join(CPU_KERNELS)}")
    if device != "cpu":
        where = "train on a GPU" if device == "cuda" else "may train on a GPU"
        raise ConfigError(f"--cpu-kernels picks the CPU kernels the arms train with, and with --device {device} they {where} "
                          "(whose kernels it does not choose); give --device cpu, or leave --cpu-kernels out")
    if requested == "default":  # every torch build on every CPU has the scalar kernels
        return
    refusal = kernels_refusal(requested, native_capability())
    if refusal:
        raise ConfigError(refusal)
