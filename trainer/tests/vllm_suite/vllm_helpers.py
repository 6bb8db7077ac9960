"""What the vLLM suite's tests share: noising weights, cutting gold conversations into 1- and
2-image prompts, and the trainer's scores of a sampled turn."""
from __future__ import annotations

import torch

from vistool_trainer.model.policy import Policy, score_tokens

# Noise on every weight, in units of that tensor's own spread. Measured on the micro policy (392
# tokens, ln 392 = 5.97 nats): at 0-8 the next-token entropy stays 4.5-5.9 nats at every position (a
# near-uniform guess, whatever the context); at 12 it is 2.5-4.1 nats and varies with the context;
# from 24 on it falls under 2 (confident).
NOISE_SCALE = 12.0


def noise_weights(model: torch.nn.Module, scale: float, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            spread = parameter.float().std() if parameter.numel() > 1 else parameter.float().abs()
            spread = spread if float(spread) > 0 else torch.tensor(0.02)
            parameter.add_(torch.randn(parameter.shape, generator=generator) * float(spread) * scale)


def prompts_with_images(conversations: list[list[dict]], images: int) -> list[list[dict]]:
    """Each conversation cut just before the assistant turn that reads `images` images."""
    cut = []
    for messages in conversations:
        seen = 0
        for index, message in enumerate(messages):
            if message["role"] == "assistant" and seen == images:
                cut.append(messages[:index])
                break
            if isinstance(message.get("content"), list):
                seen += sum(1 for part in message["content"] if part.get("type") == "image")
    assert cut, f"no gold conversation reaches a turn with {images} images"
    return cut


def trainer_log_probs(policy: Policy, model: torch.nn.Module, prompt: list[dict], token_ids: list[int], temperature: float) -> list[float]:
    """The trainer's log-probabilities of a sampled turn (the same encoder, the same scorer the
    update uses), over the distribution the samplers draw from (suppressed tokens left out)."""
    messages = prompt + [{"role": "assistant", "content": [{"type": "text", "text": ""}], "token_ids": token_ids}]
    encoded = policy.encoder.encode(messages, add_generation_prompt=False, trained_turns={len(prompt)})
    with torch.no_grad():
        log_probs, mask, _ = score_tokens(model, policy.batch([encoded]), temperature=temperature,
                                          suppressed_token_ids=policy.suppressed_token_ids)
    values = log_probs[0][mask[0].bool()].tolist()
    assert len(values) == len(token_ids)
    return values
