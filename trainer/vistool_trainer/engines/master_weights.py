"""fp32 master weights for a half-precision model that one process (or each replica of a
replicated run) trains: the model computes in bf16/fp16, the optimizer steps fp32 copies.

Why: bf16 keeps 8 significant bits, so next to a weight of 0.02 the smallest step it can take is
~1e-4; an AdamW update at an RL learning rate (1e-6) rounds to nothing and the weight never
moves (one bf16 step at lr 1e-6 moved 2.2 % of the micro model's weights; with masters, all of
them). This is the mixed precision of FSDP's MixedPrecisionPolicy and DeepSpeed's bf16 optimizer,
for the replicated engine: parameters stay in the model's dtype (what samples and what the
forward reads), each trainable one has an fp32 master, gradients are accumulated in fp32 on the
master as each micro-batch's backward produces them (a post-accumulate-grad hook moves the
half-precision gradient over and frees it), and after the optimizer step the masters are rounded
once into the model.

Memory per trained parameter: 2 (bf16 weight) + 4 (master) + 4 (fp32 gradient) + 8 (AdamW) = 18
bytes, against 16 for plain fp32 training and 12 for bf16 AdamW that does not train. AdamW's
step adds its temporaries on top: none with the fused kernel the engines use on CUDA, 4 bytes per
parameter with torch's CUDA default (foreach), engines/optimizer.py.
Parameters already in fp32 (LoRA adapters: peft keeps them in fp32) are trained as they are.
It never decides what to train: it takes the model's trainable parameters as they are.
"""
from __future__ import annotations

from pathlib import Path

import torch

HALF = (torch.bfloat16, torch.float16)
MASTER_FILE = "master-weights.safetensors"


class MasterWeights:
    def __init__(self, model: torch.nn.Module):
        self.names: list[str] = []
        self.params: list[torch.nn.Parameter] = []
        self.masters: list[torch.nn.Parameter] = []
        self._hooks = []
        for name, parameter in model.named_parameters():
            if not parameter.requires_grad or parameter.dtype not in HALF:
                continue
            master = torch.nn.Parameter(parameter.detach().to(torch.float32).clone())
            self.names.append(name)
            self.params.append(parameter)
            self.masters.append(master)
            self._hooks.append(parameter.register_post_accumulate_grad_hook(_accumulate_into(master)))

    def __bool__(self) -> bool:
        return bool(self.masters)

    @torch.no_grad()
    def write_to_model(self) -> None:
        """Round every master into its model parameter (after each optimizer step)."""
        for parameter, master in zip(self.params, self.masters):
            parameter.copy_(master)

    @torch.no_grad()
    def read_from_model(self) -> None:
        """Masters := the model's weights (what a run starts from, or resumes from when the
        checkpoint predates master files)."""
        for parameter, master in zip(self.params, self.masters):
            master.copy_(parameter)

    def state(self) -> dict[str, torch.Tensor]:
        return {name: master.detach().cpu().contiguous() for name, master in zip(self.names, self.masters)}

    def save(self, directory: Path) -> None:
        from safetensors.torch import save_file

        save_file(self.state(), str(directory / MASTER_FILE))

    @torch.no_grad()
    def load(self, directory: Path) -> bool:
        """Masters from a checkpoint's master file (then into the model); False when there is none."""
        path = directory / MASTER_FILE
        if not path.exists():
            return False
        from safetensors.torch import load_file

        saved = load_file(str(path))
        missing = [name for name in self.names if name not in saved]
        if missing:
            raise RuntimeError(f"{path} has no master weight for {len(missing)} trained parameter(s), e.g. {missing[0]}: it was "
                               "written by another model or another policy.lora setting")
        for name, master in zip(self.names, self.masters):
            master.copy_(saved[name].to(master.device))
        self.write_to_model()
        return True

    def close(self) -> None:
        for hook in self._hooks:
            hook.remove()
        self._hooks = []


def _accumulate_into(master: torch.nn.Parameter):  # type: ignore[no-untyped-def]
    """The hook for one parameter: add its fresh half-precision gradient to the master's fp32
    gradient and drop it (so gradients of later micro-batches accumulate in fp32, not bf16)."""

    def hook(parameter: torch.Tensor) -> None:
        grad = parameter.grad
        if grad is None:
            return
        if master.grad is None:
            master.grad = grad.to(torch.float32)
        else:
            master.grad.add_(grad)
        parameter.grad = None

    return hook
