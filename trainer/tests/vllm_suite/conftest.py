"""Fixtures of the vLLM suite (`make test-vllm`, in .venv-vllm): a micro policy whose weights are
noised so that it is NOT confident (a trained model puts nearly all its mass on one token, and
then a wrong prompt, stale weights or another temperature barely move the log-probabilities of
what it samples), the real env server's gold conversations for its 1- and 2-image prompts, and
one in-process vLLM engine per test module. The engine is real: nothing here is mocked."""
from __future__ import annotations

from pathlib import Path

import pytest

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.presentation import EpisodeOptions, policy_corpus
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.trainers.sft import gold_conversations
from model_under_test import policy_section
from vllm_helpers import NOISE_SCALE, noise_weights


@pytest.fixture(scope="session")
def gold(env_server, vbar_data):
    """(tasks, gold conversations with the tools on, as message lists: chart, tool call, edited image, answer)."""
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:6]
    options = EpisodeOptions(tools=True, max_turns=3, max_tool_calls=2, images="path", presentation={"system_prompt": ""})
    return tasks, [conversation.messages for conversation in gold_conversations(client, tasks, options)]


@pytest.fixture(scope="session")
def noised_policy(env_server, gold):
    client, _ = env_server
    tasks, _ = gold
    # The micro policy, or the Qwen-faithful fixture under `make test-qwen` (model_under_test.py).
    policy = Policy.create(from_dict(PolicyConfig, policy_section()), policy_corpus(client, tasks, None), 1, "cpu")
    noise_weights(policy.model, NOISE_SCALE, seed=7)
    policy.model.eval()
    return policy


@pytest.fixture(scope="module")
def engine(noised_policy, tmp_path_factory):
    from vistool_trainer.rollouts.vllm_sampler import VllmSampler

    sampler = VllmSampler.start(noised_policy, seed=0, max_images=3, work_directory=Path(tmp_path_factory.mktemp("vllm")))
    try:
        yield sampler
    finally:
        sampler.close()
