"""Starting an in-process vLLM engine leaves the trainer's global generators where they were
(issue 39, defect 6). `LLM(seed=…)` seeds Python's, numpy's and torch's global generators in the
calling process when the engine core runs there (vLLM's docs/usage/reproducibility.md, "Locality
of random state"); the RL stage starts the engine after a resumed run restored those generators
from its checkpoint, so without VllmSampler.start keeping them a resumed run went on from the
seed instead of from the checkpoint."""
from __future__ import annotations

import random

import numpy
import torch

from vistool_trainer.rollouts.vllm_sampler import VllmSampler


def test_starting_an_engine_leaves_the_global_generators_as_the_trainer_had_them(noised_policy, tmp_path):
    # Mid-stream, as after a checkpoint's restore, and away from the engine's seed (0).
    torch.manual_seed(1234)
    random.seed(1234)
    numpy.random.seed(1234)
    torch.rand(7)
    random.random()
    numpy.random.rand(3)
    torch_state, python_state, numpy_state = torch.get_rng_state(), random.getstate(), numpy.random.get_state()
    expected_draws = (torch.rand(4), random.random(), numpy.random.rand(2))
    torch.set_rng_state(torch_state)
    random.setstate(python_state)
    numpy.random.set_state(numpy_state)

    sampler = VllmSampler.start(noised_policy, seed=0, max_images=1, work_directory=tmp_path)
    try:
        assert torch.equal(torch.get_rng_state(), torch_state)
        assert random.getstate() == python_state
        assert numpy.array_equal(numpy.random.get_state()[1], numpy_state[1]) and numpy.random.get_state()[2] == numpy_state[2]
        draws = (torch.rand(4), random.random(), numpy.random.rand(2))
        assert torch.equal(draws[0], expected_draws[0]) and draws[1] == expected_draws[1]
        assert numpy.array_equal(draws[2], expected_draws[2])
    finally:
        sampler.close()
