"""rl.rollout_engine and what both samplers share: the run config key, the sampling settings, the
refusal of several processes, and scoring without the control tokens both samplers never draw."""
import pytest
import torch

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.engines.distributed import Distributed
from vistool_trainer.model.policy import Policy, score_tokens
from vistool_trainer.model.sampling import SamplingFields
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.rollout_engine import RolloutEngine
from vistool_trainer.run.run_config import ConfigError, resolve_config

CORPUS = ["Question: Q", "<tool_call>{}</tool_call>", "<answer>low</answer>"] * 20


def test_rollout_engine_defaults_to_transformers_and_takes_only_the_two_names():
    assert resolve_config({}).rl.rollout_engine == "hf"
    assert resolve_config({"rl": {"rollout_engine": "vllm"}}).rl.rollout_engine == "vllm"
    with pytest.raises(ConfigError, match="rl.rollout_engine"):
        resolve_config({"rl": {"rollout_engine": "sglang"}})
    with pytest.raises(ConfigError, match="rl.vllm_gpu_memory_utilization"):
        resolve_config({"rl": {"vllm_gpu_memory_utilization": 1.5}})


def test_the_transformers_engine_starts_nothing_and_vllm_refuses_several_processes():
    events = EventStream(log_file=None)
    engine = RolloutEngine(resolve_config({}), Distributed(), events)
    assert engine.start(policy=None) is None and engine.after_update() == {}
    with pytest.raises(ValueError, match="single process; this run has 2"):
        RolloutEngine(resolve_config({"rl": {"rollout_engine": "vllm"}}), Distributed(rank=0, world=2), events)
    RolloutEngine(resolve_config({"rl": {"rollout_engine": "hf"}}), Distributed(rank=0, world=2), events)


def test_sampling_fields_refuse_what_the_scorer_cannot_score():
    assert SamplingFields(max_new_tokens=8).repetition_penalty == 1.0 and SamplingFields(max_new_tokens=8).plain_softmax
    with pytest.raises(ValueError, match="temperature"):
        SamplingFields(max_new_tokens=8, temperature=0.0)
    SamplingFields(max_new_tokens=8, temperature=0.0, greedy=True)
    with pytest.raises(ValueError, match="max_new_tokens"):
        SamplingFields(max_new_tokens=0)


def test_scoring_without_the_control_tokens_is_the_softmax_over_the_others():
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), CORPUS, 1, "cpu")
    messages = [{"role": "user", "content": [{"type": "text", "text": "Question: Q"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]}]
    inputs = policy.batch([policy.encoder.encode(messages, add_generation_prompt=False)])
    suppressed = policy.processor.control_token_ids
    with torch.no_grad():
        plain, mask, _ = score_tokens(policy.model, inputs, temperature=0.7)
        masked, _, entropy = score_tokens(policy.model, inputs, with_entropy=True, temperature=0.7, suppressed_token_ids=suppressed)
        # Independently: the full distribution at T, renormalised over the allowed tokens.
        full = torch.log_softmax(policy.model(**{k: inputs[k] for k in ("input_ids", "attention_mask")}).logits[:, :-1].float() / 0.7, -1)
    on = mask.bool()
    allowed = torch.ones(full.shape[-1], dtype=torch.bool)
    allowed[suppressed] = False
    renormalised = full - torch.logsumexp(full[..., allowed], dim=-1, keepdim=True)
    targets = inputs["input_ids"][:, 1:]
    expected = renormalised.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(masked[on], expected[on], atol=1e-5)
    assert (masked[on] > plain[on]).all()  # the suppressed tokens' mass is given to the others
    assert torch.isfinite(entropy[on]).all()


def test_the_vllm_engine_warns_when_images_at_the_pixel_bounds_fill_its_length(tmp_path):
    """Issue 39, defect 7: with `policy.max_pixels: null` a Qwen2.5-VL processor takes images up to
    12,845,056 pixels, 12,845,056 / 28² = 16,384 tokens (patch 14, merge 2), the whole of the engine's
    16,384-token max_model_len; vLLM profiles its encoder for that image at start. The run says so
    before the engine starts. Qwen-faithful processor defaults: the fixture (model_under_test.py)."""
    from model_under_test import qwen_fixture_dir

    from vistool_trainer.run.rollout_engine import image_budget_warning

    fixture = str(qwen_fixture_dir())
    defaults = Policy.create(from_dict(PolicyConfig, {"model": fixture}), CORPUS, 1, "cpu")
    warning = image_budget_warning(defaults, 3)
    assert warning is not None
    assert "12,845,056" in warning and "16,384 tokens" in warning and "49,152 tokens of images" in warning
    assert "max_model_len 16,384" in warning and "policy.max_pixels" in warning
    # The 4-GPU recipe's bound: 1,003,520 / 784 = 1,280 tokens an image, 5 of them 6,400: no warning.
    bounded = Policy.create(from_dict(PolicyConfig, {"model": fixture, "max_pixels": 1_003_520}), CORPUS, 1, "cpu")
    assert image_budget_warning(bounded, 5) is None
    # 13 images of 1,280 tokens (16,640) do not fit.
    assert "16,640 tokens of images" in image_budget_warning(bounded, 13)
    # The micro policy's tiny images never fill its engine.
    micro = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), CORPUS, 1, "cpu")
    assert image_budget_warning(micro, 3) is None
