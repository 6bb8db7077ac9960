"""SFT's gold conversations keep the env server's image files undecoded (trainers/sft.py
gold_conversations): what they train on must be what the decoded conversations trained on, bit for
bit. Against the real env server and the real generator's charts; the decoded build
(`decode_images=True`) is the behaviour from before the change, kept for callers whose images folder
goes away first."""
import pytest
import torch
from PIL import Image

from vistool_trainer.config import PolicyConfig, SftConfig, from_dict
from vistool_trainer.model.conversation_encoding import ConversationEncoder, load_image_part
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.presentation import EpisodeOptions, policy_corpus
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.trainers.sft import gold_conversations, run_sft

# The search demo's view: the scene leaves the prompt once the zoom is shown, so each turn is its own
# sequence (the per-turn path); images by path, as a run asks for them.
OPTIONS = EpisodeOptions(tools=True, max_turns=3, max_tool_calls=2, images="path",
                         presentation={"system_prompt": "", "view": {"latest_images": 1}})


def _image_parts(conversations):
    return [part for conversation in conversations for prompt in conversation.prompts for message in prompt
            for part in message["content"] if part.get("type") == "image"]


def _gold(client, tasks, decode_images):
    """(tool conversations, direct answers with the tools on), as the warm-up builds them."""
    return (gold_conversations(client, tasks, OPTIONS, decode_images=decode_images),
            gold_conversations(client, tasks, OPTIONS, direct_answers=True, decode_images=decode_images))


def _policy(client, tasks):
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), policy_corpus(client, tasks, None), 1, "cpu")


def _same_segments(left, right):
    assert len(left) == len(right)
    for a, b in zip(left, right):
        assert a.input_ids == b.input_ids and a.loss_mask == b.loss_mask and a.image_keys == b.image_keys
        assert (a.pixel_values is None) == (b.pixel_values is None)
        if a.pixel_values is not None:
            assert a.pixel_values.dtype == b.pixel_values.dtype and torch.equal(a.pixel_values, b.pixel_values)
            assert torch.equal(a.image_grid_thw, b.image_grid_thw)


def test_gold_images_stay_paths_and_encode_to_exactly_the_tensors_of_the_decoded_images(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:4]
    decoded, undecoded = _gold(client, tasks, True), _gold(client, tasks, False)
    decoded_parts, undecoded_parts = _image_parts(decoded[0] + decoded[1]), _image_parts(undecoded[0] + undecoded[1])
    # A chart and its edited image per tool conversation, the chart per direct answer: 4 × 2 + 4.
    assert len(decoded_parts) == len(undecoded_parts) == 12
    assert all(isinstance(part.get("image"), Image.Image) for part in decoded_parts)
    assert all("image" not in part and part["path"] for part in undecoded_parts)
    assert [part["ref"] for part in decoded_parts] == [part["ref"] for part in undecoded_parts]

    policy = _policy(client, tasks)
    # One encoder per side, so the undecoded side reads every image from its file, never from pixels
    # the decoded side already preprocessed.
    from_decoded, from_files = ConversationEncoder(policy.processor), ConversationEncoder(policy.processor)
    with_pixels = 0
    for decoded_conversation, undecoded_conversation in zip(decoded[0] + decoded[1], undecoded[0] + undecoded[1]):
        for encode in ("training_segments", "after_tool_segments", "call_segments_without_images"):
            left = getattr(from_decoded, encode)(decoded_conversation)
            right = getattr(from_files, encode)(undecoded_conversation)
            _same_segments(left, right)
            with_pixels += sum(segment.pixel_values is not None for segment in left)
    # Tool conversations: a segment per turn (2) and an after-tool segment; direct answers: one each.
    assert with_pixels == 4 * 3 + 4


def test_sft_steps_on_undecoded_gold_train_the_same_weights_as_on_decoded_gold(env_server, vbar_data):
    """Every draw re-encoded (no encoding kept, no preprocessed image kept), so the undecoded run
    decodes the files again at each step; the losses and the weights must still be equal."""
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:4]
    config = from_dict(SftConfig, {"steps": 4, "batch_size": 3, "lr": 3e-3, "weight_decay": 0.0, "after_tool_turns_first": 2,
                                   "direct_answer_fraction": 0.5})
    results = []
    for decode_images in (True, False):
        tool, direct = _gold(client, tasks, decode_images)
        policy = _policy(client, tasks)
        policy.encoder.IMAGE_CACHE_BYTES = 0
        losses = []
        run_sft(policy, tool, config, seed=3, on_step=lambda step, loss, seconds: losses.append(loss), direct_conversations=direct,
                encoding_cache_bytes=0)
        results.append((losses, {name: value.detach().clone() for name, value in policy.model.state_dict().items()}))
    (decoded_losses, decoded_weights), (undecoded_losses, undecoded_weights) = results
    assert len(decoded_losses) == 4 and decoded_losses == undecoded_losses
    assert decoded_weights.keys() == undecoded_weights.keys()
    assert all(torch.equal(decoded_weights[name], undecoded_weights[name]) for name in decoded_weights)
    # The steps moved the weights (equal weights that never moved would prove nothing).
    untrained = _policy(client, tasks).model.state_dict()
    assert any(not torch.equal(untrained[name], decoded_weights[name]) for name in untrained)


def test_an_image_part_whose_file_is_gone_names_the_file_and_what_must_outlive_it(tmp_path):
    image = tmp_path / "scene.png"
    Image.new("RGB", (8, 6), "red").save(image)
    part = {"type": "image", "ref": "scene", "path": str(image)}
    assert load_image_part(part).size == (8, 6)
    image.unlink()
    with pytest.raises(FileNotFoundError, match=r"image part scene: its file .*scene.png is gone.*images folder"):
        load_image_part(part)
