"""The weights a plain copy of the policy holds, tensor by tensor, as `save_pretrained` names them:
what a rollout engine with its own copy of the model (vLLM) is sent after every update.

A full model gives its `state_dict()`: every entry, tied ones included. With tied embeddings
`named_parameters()` lists the shared tensor once, under the embedding's name only, and an engine
that keeps the LM head as its own tensor then keeps a stale head (docs/VLLM.md).

A LoRA model (peft) gives its base weights with each adapted layer's weight replaced by
W + ΔW (peft's own `get_delta_weight`), one layer at a time: no second copy of the model, and the
trained model itself is never touched. Only the vanilla LoRA the run config can ask for (Linear
layers, no bias, no DoRA-style variant) is folded; anything else is refused by name.

The engine stores what it is sent in its own dtype. In bf16 the sum W + ΔW rounds back to W
wherever ΔW is below half of bf16's spacing next to W (~1e-4 for a weight of 0.02), which an
early LoRA update at lr 1e-5 mostly is: the engine then samples a policy that lags the one the
trainer scores (docs/VLLM.md). A `FoldingLoss` given to `merged_state_dict` measures that share.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from .policy import unwrap_model


@dataclass
class FoldingLoss:
    """How much of the adapters' ΔW an engine holding the folded weights in `engine_dtype` loses:
    ‖(W + ΔW) − stored(W + ΔW)‖ / ‖ΔW‖ over every folded layer, where stored() is the cast to the
    engine's dtype. 0: the engine holds the whole update; 1: it holds the base weights alone."""
    engine_dtype: torch.dtype
    lost_squared: float = 0.0
    delta_squared: float = 0.0

    def add(self, base: torch.Tensor, delta: torch.Tensor, sent: torch.Tensor) -> None:
        """One folded layer: its base weight W, its ΔW and the tensor sent for W + ΔW. The exact sum
        is taken in fp32 here, so a sum the sender already rounded counts as lost too."""
        delta = delta.detach().float()
        exact = base.detach().float() + delta
        self.lost_squared += float((exact - sent.detach().to(self.engine_dtype).float()).pow(2).sum())
        self.delta_squared += float(delta.pow(2).sum())

    def share_lost(self) -> float | None:
        """None while the adapters are a no-op (ΔW = 0, LoRA's B as initialised): nothing to lose."""
        if self.delta_squared == 0:
            return None
        return math.sqrt(self.lost_squared / self.delta_squared)


def merged_state_dict(model: torch.nn.Module, folding_loss: FoldingLoss | None = None) -> Iterator[tuple[str, torch.Tensor]]:
    """(name, tensor) for every weight of the plain model `model` stands for. Tensors are the
    model's own (detached) where nothing is folded: the caller copies them if it must. Each folded
    layer is added to `folding_loss` when one is given."""
    if not hasattr(model, "get_base_model"):
        for name, tensor in unwrap_model(model).state_dict().items():
            yield name, tensor.detach()
        return
    base = model.get_base_model()
    adapted = dict(plain_lora_layers(model))
    for name, tensor in base.state_dict().items():
        if ".lora_" in name:
            continue
        if "modules_to_save" in name or "original_module" in name:
            raise ValueError(f"{name}: peft modules_to_save are not supported for pushing weights to a rollout engine")
        module_name, _, leaf = name.replace(".base_layer.", ".").rpartition(".")
        layer = adapted.get(module_name)
        if layer is not None and leaf == "weight":
            with torch.no_grad():
                weight, delta = layer.get_base_layer().weight, active_delta(layer)
                if delta is None:  # no active adapter: nothing folded
                    yield f"{module_name}.weight", weight.detach()
                    continue
                folded = (weight + delta).detach()
                if folding_loss is not None:
                    folding_loss.add(weight, delta, folded)
                yield f"{module_name}.weight", folded
            continue
        yield f"{module_name}.{leaf}", tensor.detach()


def plain_lora_layers(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """(name in the base model, layer) for every LoRA layer of the peft model `model`; anything but
    the vanilla Linear LoRA the run config can ask for (no DoRA-style variant, no bias), or a layer
    whose adapters peft has merged in place, is refused by name."""
    from peft.tuners.lora import LoraLayer
    from peft.tuners.lora import Linear as LoraLinear

    layers = []
    for name, module in model.get_base_model().named_modules():
        if isinstance(module, LoraLayer):
            if not isinstance(module, LoraLinear) or module.lora_variant or any(module.lora_bias.values()):
                raise ValueError(f"LoRA layer {name} ({type(module).__name__}) is not a plain Linear LoRA: "
                                 "only those can be folded into the weights a rollout engine is sent")
            if module.merged:
                raise ValueError(f"LoRA layer {name} has its adapters merged in place: unmerge them before pushing weights")
            layers.append((name, module))
    return layers


def active_delta(layer: torch.nn.Module) -> torch.Tensor | None:
    """ΔW of a plain LoRA layer's active adapters (peft's own `get_delta_weight`), summed in fp32;
    None when no adapter is active."""
    deltas = [layer.get_delta_weight(adapter).float() for adapter in layer.active_adapters if adapter in layer.lora_A]
    return sum(deltas[1:], deltas[0]) if deltas else None
