"""SFT's encoded conversations are kept up to a byte budget (encoding_cache.py): the budget bounds
the trainer's memory and never changes what is trained."""
import torch
from PIL import Image

from vistool_trainer.config import PolicyConfig, SftConfig, from_dict
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.model.conversation_encoding import EncodedConversation
from vistool_trainer.model.policy import Policy
from vistool_trainer.trainers.encoding_cache import EncodingCache
from vistool_trainer.trainers.sft import run_sft


def _segment(pixels: int) -> EncodedConversation:
    return EncodedConversation(input_ids=[1], loss_mask=[1], pixel_values=torch.zeros(pixels, dtype=torch.float32), image_grid_thw=None)


def test_the_least_recently_used_encoding_leaves_first_and_the_newest_stays_even_over_budget():
    cache = EncodingCache(max_bytes=100)
    cache.put("a", [_segment(10)])   # 40 bytes
    cache.put("b", [_segment(10)])   # 80
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("c", [_segment(10), _segment(0)])  # 120 > 100: b, the least recent, leaves
    assert cache.peek("b") is None and cache.peek("a") is not None and cache.bytes == 80 and len(cache) == 2
    cache.put("big", [_segment(50)])  # 200 bytes alone: everything older leaves, it stays
    assert len(cache) == 1 and cache.bytes == 200 and cache.get("big") is not None
    cache.put("big", [_segment(5)])   # replacing an entry counts its bytes once
    assert cache.bytes == 20 and len(cache) == 1


def _conversations() -> list[Conversation]:
    conversations = []
    for index, (colour, answer) in enumerate([("white", "low"), ("red", "high"), ("blue", "medium"), ("green", "low")]):
        image = {"type": "image", "ref": f"chart-{index}", "image": Image.new("RGB", (112, 112), colour)}
        conversations.append(Conversation.from_messages([
            {"role": "system", "content": [{"type": "text", "text": "Answer the question."}]},
            {"role": "user", "content": [image, {"type": "text", "text": "Is D low, medium or high?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": f"<answer>{answer}</answer>"}]}]))
    return conversations


def _trained(encoding_cache_bytes: int) -> tuple[list[float], list[torch.Tensor]]:
    torch.manual_seed(0)
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}),
                           ["Answer the question. Is D low, medium or high? <answer>low</answer> high medium"] * 20, 1, "cpu")
    losses: list[float] = []
    run_sft(policy, _conversations(), from_dict(SftConfig, {"steps": 6, "batch_size": 2, "lr": 1e-3, "weight_decay": 0.0}), seed=3,
            on_step=lambda step, loss, seconds: losses.append(loss), encoding_cache_bytes=encoding_cache_bytes)
    return losses, [parameter.detach().clone() for parameter in policy.model.parameters()]


def test_a_run_that_re_encodes_every_draw_trains_bit_for_bit_what_a_run_that_keeps_them_trains():
    kept_losses, kept = _trained(1 << 30)
    evicted_losses, evicted = _trained(0)  # every conversation encoded again each time it is drawn
    assert kept_losses == evicted_losses and len(kept_losses) == 6
    assert all(torch.equal(a, b) for a, b in zip(kept, evicted))
