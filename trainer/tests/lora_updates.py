"""peft starts every LoRA B at zero, so a fresh adapter changes nothing (ΔW = 0): tests that need
the adapters to matter give them an update first, as training would."""
from __future__ import annotations

import torch


def give_adapters_an_update(model: torch.nn.Module, scale: float, seed: int = 0) -> None:
    """Every lora_B weight of `model` set to scale · N(0, 1), drawn from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * scale)
