"""The guard VllmSampler.start puts around the engine's start (issue 39, defect 6): whatever seeds
the global generators inside it — an in-process vLLM engine seeds Python's, numpy's and torch's
with `LLM(seed=…)` — the caller's generators come out where they went in. Runs without vLLM: the
block here seeds them as vLLM's set_random_seed does; vllm_suite/test_vllm_random_state.py starts
a real engine."""
from __future__ import annotations

import random

import numpy
import pytest
import torch

from vistool_trainer.rollouts.vllm_sampler import _global_generators_kept


def _draws() -> tuple[torch.Tensor, float, numpy.ndarray]:
    return torch.rand(4), random.random(), numpy.random.rand(2)


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


def _assert_same(a, b) -> None:
    assert torch.equal(a[0], b[0]) and a[1] == b[1] and numpy.array_equal(a[2], b[2])


@pytest.mark.parametrize("fails", [False, True])
def test_a_seeding_inside_the_block_does_not_reach_the_callers_generators(fails):
    _seed_everything(1234)
    _draws()  # mid-stream, as after a checkpoint's restore
    states = torch.get_rng_state(), random.getstate(), numpy.random.get_state()
    expected = _draws()
    torch.set_rng_state(states[0])
    random.setstate(states[1])
    numpy.random.set_state(states[2])

    # The negative control: the same seeding outside the guard changes what the caller draws next.
    _seed_everything(0)
    reseeded = _draws()
    assert not torch.equal(reseeded[0], expected[0])
    torch.set_rng_state(states[0])
    random.setstate(states[1])
    numpy.random.set_state(states[2])

    try:
        with _global_generators_kept():
            _seed_everything(0)
            _draws()
            if fails:  # an engine that fails to start leaves them as they were too
                raise RuntimeError("engine did not start")
    except RuntimeError:
        assert fails
    _assert_same(_draws(), expected)
