"""The trainer takes what its policy reads from the env server (docs/CONTRACTS.md, Presentation):
the prompts of a real episode turn by turn, the sequences it trains them as, the run's block sent
as it is, and an env that echoes another text than the policy wrote is an error.

The policy is the real micro model; its turns are scripted (the task's gold call, then its gold
answer) so that every episode reaches a tool observation, whatever the untrained weights would write.
"""
import pytest
from demo_prompts import ScriptedPolicy

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.conversation import with_replies
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.env_client import EnvServerError
from vistool_trainer.rollouts.presentation import EpisodeOptions, policy_corpus
from vistool_trainer.rollouts.rollout import load_tasks, run_rollouts

ARMS = {"tools": "You may call a tool.", "no_tools": "Tools are off."}


def _episode(client, vbar_data, view, tools=True):
    task = load_tasks(vbar_data[1])[0]
    gold = client.gold([task])[0]
    presentation = {"system_prompt": ARMS, "view": view}
    corpus = policy_corpus(client, [task], presentation) * 5
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), corpus, 1, "cpu")
    scripted = ScriptedPolicy(policy, [gold["tool_turns"][0], gold["answer"]])
    [rollout] = run_rollouts(scripted, client, [task], 1, EpisodeOptions(tools=tools, max_turns=3, presentation=presentation), 8, 1.0, greedy=True)
    return rollout, scripted, policy


def _trained(policy, segment):
    return policy.processor.tokenizer.decode([t for t, m in zip(segment.input_ids, segment.loss_mask) if m], skip_special_tokens=False)


def test_a_view_that_hides_the_chart_gives_each_turn_its_own_prompt_and_its_own_training_sequence(env_server, vbar_data):
    client, _ = env_server
    rollout, scripted, policy = _episode(client, vbar_data, {"latest_images": 1, "images_first": True})
    conversation = rollout.conversation
    assert conversation.prompts_only_grow is False and len(conversation.prompts) == 2 == len(conversation.replies)
    first, second = conversation.prompts
    assert first[0]["content"][0]["text"] == ARMS["tools"]
    chart = first[1]["content"][0]["ref"]
    assert [part.get("text") for part in second[1]["content"]] == ["(earlier image)", first[1]["content"][1]["text"]]
    assert second[2] is conversation.replies[0] and "token_ids" in second[2]  # the call as it was sampled
    assert second[3]["role"] == "tool" and second[3]["content"][0]["type"] == "image"  # images first
    segments = policy.encoder.training_segments(conversation)
    assert len(segments) == 2
    for segment, read, reply in zip(segments, scripted.prompts, conversation.replies):
        # Trained in exactly the context it was sampled in, with only its own tokens trained.
        assert segment.input_ids[: len(read.input_ids)] == read.input_ids and not any(segment.loss_mask[: len(read.input_ids)])
        assert _trained(policy, segment) == reply["content"][0]["text"] + "<|im_end|>"
    assert segments[0].image_keys == [chart] and segments[1].image_keys == [second[3]["content"][0]["ref"]] != [chart]
    # The record keeps every image, and the prompt the policy opened with.
    assert rollout.trajectory["opening"][1]["content"][0] == {"type": "image", "ref": chart}


def test_without_such_a_view_each_prompt_grows_and_the_episode_is_one_training_sequence(env_server, vbar_data):
    client, _ = env_server
    rollout, scripted, policy = _episode(client, vbar_data, {"latest_images": None})
    first, second = rollout.conversation.prompts
    assert rollout.conversation.prompts_only_grow is True
    assert second[: len(first) + 1] == first + [rollout.conversation.replies[0]]
    [segment] = policy.encoder.training_segments(rollout.conversation)
    assert len(segment.image_keys) == 2
    assert segment.input_ids[: len(scripted.prompts[1].input_ids)] == scripted.prompts[1].input_ids


def test_the_tools_off_arm_reads_its_own_system_turn_and_the_refusal(env_server, vbar_data):
    client, _ = env_server
    rollout, _, _ = _episode(client, vbar_data, {"latest_images": 1}, tools=False)
    first, second = rollout.conversation.prompts
    assert first[0]["content"][0]["text"] == ARMS["no_tools"]
    assert second[-1]["role"] == "user"
    assert second[-1]["content"][0]["text"] == "ERROR [E1]: Tools are not available in this episode: answer from the image with <answer>...</answer>."


def test_the_tokenizer_corpus_is_the_env_text_each_task_and_the_block_bring(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:2]
    corpus = policy_corpus(client, tasks, {"system_prompt": ARMS})
    assert corpus[0] == f"Question: {tasks[0]['question']}"
    assert corpus[-6:] == ["OBSERVATION: The edited image follows.", "(earlier image)", "ERROR [E1]: No tool call or final answer found.",
                           "Tools are not available in this episode: answer from the image with <answer>...</answer>.", ARMS["tools"], ARMS["no_tools"]]


def test_a_bad_block_is_refused_by_the_env_naming_the_key(env_server, vbar_data):
    client, _ = env_server
    task = {k: v for k, v in load_tasks(vbar_data[1])[0].items() if not k.startswith("_")}
    with pytest.raises(EnvServerError, match=r"HTTP 400.*options\.presentation\.view\.latest_images"):
        client.start_episodes([{"task": task, "task_dir": str(vbar_data[1].parent), "options": {"presentation": {"view": {"latest_images": 0}}}}])


def test_an_env_prompt_that_does_not_echo_the_policy_turns_is_an_error():
    reply = {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}], "token_ids": [1, 2]}
    prompt = [{"role": "user", "content": [{"type": "text", "text": "Question: Q"}]},
              {"role": "assistant", "content": [{"type": "text", "text": "<answer>high</answer>"}]}]
    with pytest.raises(ValueError, match="another text for assistant turn 0"):
        with_replies(prompt, [reply])
    with pytest.raises(ValueError, match="holds 1 assistant turns, but 2 were written"):
        with_replies(prompt, [reply, reply])
    assert with_replies(prompt[:1] + [{**prompt[1], "content": [{"type": "text", "text": "<answer>low</answer>"}]}], [reply])[1] is reply


def _options_of(tmp_path, config: dict, processor=None) -> dict:
    import json

    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.run.run_config import load_config

    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    return episode_options(load_config(path), processor).request()


def test_every_episode_carries_the_policy_processor_pixel_bounds_read_from_the_run_config(tmp_path):
    # The micro model's processor is built from policy.micro.min_pixels/max_pixels (model/micro_model.py);
    # policy.min_pixels/max_pixels are for hub models and do not apply to it.
    micro = {"policy": {"model": "micro", "min_pixels": 1000, "max_pixels": 2000, "micro": {"min_pixels": 6272, "max_pixels": 200704}}}
    assert _options_of(tmp_path, micro)["pixel_bounds"] == {"min_pixels": 6272, "max_pixels": 200704}
    # Unset, the micro bounds are the schema's defaults (schemas/run-config.schema.json: 3,136 and 50,176).
    assert _options_of(tmp_path, {"policy": {"model": "micro"}})["pixel_bounds"] == {"min_pixels": 3136, "max_pixels": 50176}
    # A hub model: policy.min_pixels/max_pixels, a null one Qwen2.5-VL's processor default.
    hub = {"policy": {"model": "Qwen/Qwen2.5-VL-3B-Instruct", "max_pixels": 1003520}}
    assert _options_of(tmp_path, hub)["pixel_bounds"] == {"min_pixels": 3136, "max_pixels": 1003520}
    assert _options_of(tmp_path, {"policy": {"model": "Qwen/Qwen2.5-VL-3B-Instruct"}})["pixel_bounds"] == {"min_pixels": 3136, "max_pixels": 12845056}


def test_with_the_policy_processor_at_hand_the_bounds_are_the_processor_s_own(tmp_path):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from vistool_trainer.model.policy_processor import PolicyProcessor

    # What PolicyProcessor.from_pretrained gives a hub model whose own preprocessor_config has other bounds.
    image_processor = Qwen2VLImageProcessorPil(min_pixels=12544, max_pixels=401408, patch_size=14, merge_size=2, temporal_patch_size=2)
    processor = PolicyProcessor(tokenizer=None, image_processor=image_processor)
    options = _options_of(tmp_path, {"policy": {"model": "Qwen/Qwen2.5-VL-3B-Instruct"}}, processor)
    assert options["pixel_bounds"] == {"min_pixels": 12544, "max_pixels": 401408}
