"""Make PyPI's torchvision 0.28.0 importable beside the CPU build of torch 2.13.0 (in .venv-vllm).

Why: vLLM's Qwen2-VL path imports transformers' Qwen2-VL image processor, which imports
`torchvision.transforms.v2` (pure Python). The only torchvision 0.28.0 on PyPI is a CUDA build:
beside CPU torch its compiled ops cannot load (their libraries link CUDA torch), which torchvision
tolerates (`extension._has_ops()` is then False) everywhere except two fake-kernel registrations
in `_meta_registrations.py` (nms, qnms) that run unconditionally and raise "operator
torchvision::nms does not exist" on `import torchvision`. PyTorch's own CPU index has a CPU build,
but this project installs from PyPI only.

What: those two registrations get the same guard torchvision already puts on the others
(`torchvision.extension._has_ops()`). Nothing else changes: where the compiled ops do load, the
patched file behaves as the original. The script checks the version and the exact lines first,
refuses anything else, and does nothing when the file is already patched.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path

VERSION = "0.28.0"
OPS = ("nms", "qnms")


def original(op: str) -> str:
    return f'@torch.library.register_fake("torchvision::{op}")\n'


def guarded(op: str) -> str:
    return f'@(torch.library.register_fake("torchvision::{op}") if torchvision.extension._has_ops() else (lambda kernel: kernel))\n'


def main() -> int:
    installed = importlib.metadata.version("torchvision")
    if installed.split("+")[0] != VERSION:
        print(f"patch_torchvision: torchvision {installed} is installed; this patch is for {VERSION} only", file=sys.stderr)
        return 1
    spec = importlib.util.find_spec("torchvision")
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "_meta_registrations.py"
    text = path.read_text()
    for op in OPS:
        if guarded(op) in text:
            continue
        if text.count(original(op)) != 1:
            print(f"patch_torchvision: {path} does not hold the expected registration of torchvision::{op}; not patched", file=sys.stderr)
            return 1
        text = text.replace(original(op), guarded(op))
    path.write_text(text)
    print(f"patch_torchvision: {path}: the nms/qnms fake kernels are registered only when torchvision's compiled ops load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
