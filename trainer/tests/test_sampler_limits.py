"""A prompt the vLLM engine cannot take ends its episode, not the run (issue 39, defect 7).

The engine is started for at most `max_images` images per prompt and a max_model_len (16,384
tokens at most); a conversation past either used to raise out of the rollout loop and stop the
whole run. The token limit is the one a run meets: with Qwen2.5-VL's default max_pixels
(12,845,056: up to 16,384 tokens an image) one large chart is enough. The image limit is not
reached with the bundled env server (it refuses a tool call past env.max_tool_calls, and each call
adds at most one image: 1 + max_tool_calls is what the engine is started for); the test forces
it with an engine started for 0 images. The rollout loop now asks the sampler first (`refusal`), ends such an
episode where it stands (scored as it is, the reason in its notes, `rollout/ended_early` counts
it) and goes on with the others. No engine is started: the limits are checked before any request.
Runs on the policy under test (model_under_test.py; the Qwen fixture under `make test-qwen`).
"""
from __future__ import annotations

from model_under_test import policy_section

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.presentation import EpisodeOptions, policy_corpus
from vistool_trainer.rollouts.rollout import RolloutTiming, load_tasks, run_rollouts
from vistool_trainer.rollouts.vllm_prompt import vllm_prompt
from vistool_trainer.rollouts.vllm_sampler import VllmSampler


class CountingSampler(VllmSampler):
    """The real VllmSampler's limits; turns come from the policy itself (no engine here)."""

    requests = 0

    def sample_turns(self, conversations, max_new_tokens, temperature, greedy):
        for messages in conversations:  # what the real one checks first: raises past a limit
            self._check_fits(vllm_prompt(self.policy.encoder, messages), max_new_tokens)
        self.requests += len(conversations)
        return self.policy.sample_turns(conversations, max_new_tokens, temperature, greedy)


def _policy(env_server, tasks):
    client, _ = env_server
    return Policy.create(from_dict(PolicyConfig, policy_section()), policy_corpus(client, tasks, None), 1, "cpu")


def test_a_prompt_longer_than_the_engine_takes_ends_its_episode_and_the_run_goes_on(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:2]
    policy = _policy(env_server, tasks)
    options = EpisodeOptions(tools=True, max_turns=2, max_tool_calls=1, images="path", presentation={"system_prompt": ""})
    longest = max(len(policy.encoder.encode(run_rollouts_prompt(client, task, options), add_generation_prompt=True).input_ids)
                  for task in tasks)
    # Room for every first prompt and its reply, not for a second turn.
    sampler = CountingSampler(llm=None, policy=policy, weights_directory=None, max_model_len=longest + 8, max_images=3)
    timing = RolloutTiming()
    rollouts = run_rollouts(policy, client, tasks, 2, options, 8, 1.0, timing=timing, sampler=sampler)
    assert len(rollouts) == 4 and sampler.requests >= 4
    ended = [r for r in rollouts if any("episode ended before turn" in note for note in r.notes)]
    # Every episode that wanted a second turn ended there, with the engine's reason, and was scored.
    assert ended and timing.ended_early == len(ended)
    assert all(r.turns == 1 and "max_model_len" in " ".join(r.notes) and r.trajectory for r in ended)


def test_more_images_than_the_engine_takes_ends_the_episode_before_any_request(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:2]
    policy = _policy(env_server, tasks)
    options = EpisodeOptions(tools=True, max_turns=2, max_tool_calls=1, images="path", presentation={"system_prompt": ""})
    sampler = CountingSampler(llm=None, policy=policy, weights_directory=None, max_model_len=16384, max_images=0)
    timing = RolloutTiming()
    rollouts = run_rollouts(policy, client, tasks, 1, options, 8, 1.0, timing=timing, sampler=sampler)
    assert sampler.requests == 0 and timing.ended_early == 2
    assert all(r.turns == 0 and "images" in " ".join(r.notes) for r in rollouts)


def run_rollouts_prompt(client, task, options):
    """The first prompt the env server presents for `task` (opened and closed again)."""
    from vistool_trainer.rollouts.presentation import opened_conversation
    from vistool_trainer.rollouts.rollout import _task_payload

    [opened] = client.start_episodes([{"task": _task_payload(task), "task_dir": task["_task_dir"], "options": options.request()}])
    try:
        return opened_conversation(opened, {}).prompt
    finally:
        client.close_episode(opened["episode_id"])
