"""AdamW's step allocates no copy of the parameters (issue 39, defect 2).

torch.optim.AdamW with neither `fused` nor `foreach` set runs its multi-tensor ("foreach") step
on CUDA, which allocates a temporary fp32 tensor the size of every parameter's second moment:
4 bytes per parameter on top of the 18 a full fine-tune with fp32 masters holds, 22 B/param,
~77 GiB for Qwen2.5-VL-3B. The engines build a fused AdamW on CUDA (engines/optimizer.py). Step
allocations are counted op by op (step_peak_bytes), so the CPU measures what a GPU step allocates;
"as on CUDA" resolves an unset default the way torch does for CUDA parameters. Runs on the
policy under test (model_under_test.py): the micro policy, or the Qwen fixture under
`make test-qwen` (where the 151,936-row embedding is most of the parameters, as in a real Qwen).
"""
from __future__ import annotations

import pytest
import torch
from model_under_test import policy_section

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.engines.optimizer import adamw, adamw_options, resolved_implementation, step_peak_bytes
from vistool_trainer.engines.training_engine import TrainingEngine
from vistool_trainer.model.policy import Policy

CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>"] * 20


@pytest.fixture(scope="module")
def engine():
    policy = Policy.create(from_dict(PolicyConfig, policy_section(dtype="bfloat16", gradient_checkpointing=False)), CORPUS, 3, "cpu")
    engine = TrainingEngine(policy)  # bf16 weights, fp32 masters: the replicated full fine-tune
    yield engine
    engine.close()


def _steady_step_peak(optimizer: torch.optim.Optimizer, trained: list[torch.Tensor], implementation: str) -> float:
    """Bytes per parameter of the second step (the first one creates the moments, 8 B/param, by design)."""
    for tensor in trained:
        tensor.grad = torch.full_like(tensor, 1e-3)
    step_peak_bytes(optimizer, implementation)
    peak = step_peak_bytes(optimizer, implementation)
    for tensor in trained:
        tensor.grad = None
    return peak / sum(t.numel() for t in trained)


def test_the_engines_optimizer_never_leaves_the_implementation_to_torchs_default(engine):
    optimizer = engine.make_optimizer(lr=1e-6, weight_decay=0.0, max_grad_norm=1.0)
    group = optimizer.param_groups[0]
    # Unset, torch would pick foreach on CUDA. Here (CPU parameters) the loop, torch's own CPU choice.
    assert group["foreach"] is False or group["fused"] is True
    assert resolved_implementation(optimizer, "cpu") == "loop"


def test_the_adamw_built_for_cuda_parameters_holds_no_copy_of_them_in_its_step(engine):
    trained = engine.trained_tensors()
    on_cuda = adamw(trained, lr=1e-6, weight_decay=0.0, device_type="cuda")
    assert resolved_implementation(on_cuda, "cuda") == "fused"
    assert _steady_step_peak(on_cuda, trained, "fused") < 0.5


def test_torchs_cuda_default_would_hold_four_bytes_per_parameter(engine):
    """The claim itself: an AdamW built as the engines built it before (no fused, no foreach) runs
    foreach on CUDA and holds an fp32 copy of the second moments during the step."""
    trained = engine.trained_tensors()
    default = torch.optim.AdamW(trained, lr=1e-6)
    assert resolved_implementation(default, "cuda") == "foreach"
    assert _steady_step_peak(default, trained, "foreach") == pytest.approx(4.0, abs=0.05)
    assert _steady_step_peak(default, trained, "fused") < 0.5


def test_fused_and_the_loop_take_the_same_step():
    torch.manual_seed(0)
    start = [torch.randn(64, 32), torch.randn(32)]
    results = []
    for options in (adamw_options("cuda"), adamw_options("cpu")):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        optimizer = torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, **options)
        for step in range(3):
            for index, p in enumerate(params):
                p.grad = torch.sin(p.detach() * (step + 1 + index))
            optimizer.step()
        results.append([p.detach() for p in params])
    for fused, loop in zip(*results):
        assert torch.allclose(fused, loop, atol=1e-6)
    assert adamw(params, 1e-3, 0.0).param_groups[0]["foreach"] is False
