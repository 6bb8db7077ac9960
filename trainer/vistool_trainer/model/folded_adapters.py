"""LoRA adapters folded into the weights for the length of a sampling call, then taken out again
exactly: what `rl.fold_lora_for_sampling` does to the transformers sampler.

Unmerged, every decoding step of a LoRA policy runs each adapted projection as the base matmul
plus a rank-r A and B (and peft's dropout and scaling), in eager PyTorch, one token at a time:
for the one-GPU recipe (rank 64 on 7 projections, every decoder layer, and the vision tower's
MLPs) that is five extra kernels per projection per token. Folded, each projection is one matmul
again.

Folding in place and unfolding would not give the base weights back: in bf16,
(W + ΔW) − ΔW rounds to another W, and the error would build up over every RL step. So each
adapted layer's weight tensor is swapped for a new tensor holding W + ΔW (computed in fp32,
stored in W's dtype, as a rollout engine would store it), peft's adapters are switched off, and
on the way out the original tensors are put back as they were: the trained model is bit for bit
the model before. The folded copies cost the adapted weights' size in memory while sampling
(about three quarters of a 3B model's bf16 weights, on the GPU) and are freed afterwards.

The folded policy is what a rollout engine samples (model/merged_weights.py): in bf16 the sum
rounds most of an early LoRA update away, which `FoldingLoss` measures
(`training/lora_delta_lost_in_engine`).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from .merged_weights import FoldingLoss, active_delta, plain_lora_layers


@contextmanager
def adapters_folded(model: torch.nn.Module, folding_loss: FoldingLoss | None = None) -> Iterator[int]:
    """Inside, `model` computes with W + ΔW in every adapted layer's weight and its adapters off;
    yields how many layers were folded (0 for a model without adapters, which is left alone).
    Each folded layer is added to `folding_loss` when one is given."""
    if not hasattr(model, "get_base_model"):
        yield 0
        return
    swapped: list[tuple[torch.nn.Parameter, torch.Tensor]] = []
    try:
        with torch.no_grad():
            for _, layer in plain_lora_layers(model):
                delta = active_delta(layer)
                if delta is None:
                    continue
                weight = layer.get_base_layer().weight
                folded = (weight.detach().float() + delta).to(weight.dtype)
                if folding_loss is not None:
                    folding_loss.add(weight, delta, folded)
                swapped.append((weight, weight.data))
                weight.data = folded
        with model.disable_adapter():
            yield len(swapped)
    finally:
        for weight, original in swapped:
            weight.data = original
