"""Qwen2-VL / Qwen2.5-VL's patch embedding computed on the CPU as the matrix product it is.

The vision tower embeds each patch (channels × temporal 2 × 14 × 14 pixels) with a Conv3d whose
kernel equals its stride and which has no bias: a linear map of the flattened patch. On the CPU,
oneDNN's Conv3d for that shape is several times slower than the same product as a matmul (4.8x on
32 demo images), about a tenth of an SFT step on the micro model (trainer/README.md, "Speed").
Only the forward changes: the weight stays the Conv3d's, so checkpoints, state dicts and any other
loader are untouched, and the result is the same up to the order of the additions. It is applied
on CPU only; a GPU keeps the library's path. It never changes a weight.
"""
from __future__ import annotations

import types

import torch


def _linear_forward(self: torch.nn.Module, hidden_states: torch.Tensor) -> torch.Tensor:
    weight = self.proj.weight
    return torch.nn.functional.linear(hidden_states.to(weight.dtype).reshape(-1, weight[0].numel()), weight.reshape(weight.shape[0], -1))


def is_linear_patch_conv(module: torch.nn.Module) -> bool:
    """A patch embedding whose projection is a bias-free Conv3d with kernel == stride (no overlap, no padding)."""
    proj = getattr(module, "proj", None)
    return (isinstance(proj, torch.nn.Conv3d) and proj.bias is None and tuple(proj.kernel_size) == tuple(proj.stride)
            and all(p == 0 for p in proj.padding) and proj.groups == 1 and tuple(proj.dilation) == (1, 1, 1)
            and type(module).__name__.endswith("VisionPatchEmbed"))


def use_matmul_patch_embedding(model: torch.nn.Module) -> int:
    """Give every such patch embedding in `model` the matmul forward; returns how many it changed."""
    changed = 0
    for module in model.modules():
        if is_linear_patch_conv(module):
            module.forward = types.MethodType(_linear_forward, module)
            changed += 1
    return changed
