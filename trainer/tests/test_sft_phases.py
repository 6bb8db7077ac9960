"""sft.after_tool_turns_first and sft.direct_answer_fraction: which turns an SFT step trains.

The demo's warm-up first trains only the answers written after an edited image, then whole
trajectories mixed with direct answers (docs/DEMO.md). A run with the tools off has no such
answers, so it trains whole answers from its first step instead of spending steps on nothing."""
from PIL import Image

from vistool_trainer.config import PolicyConfig, SftConfig, from_dict
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.model.policy import Policy
from vistool_trainer.trainers.sft import run_sft
from vistool_trainer.algorithms.sft_schedule import SftSchedule

CHART = {"type": "image", "ref": "chart", "image": Image.new("RGB", (112, 112), "white")}
EDITED = {"type": "image", "ref": "edited", "image": Image.new("RGB", (112, 112), "red")}
SYSTEM = {"role": "system", "content": [{"type": "text", "text": "Answer the question."}]}
USER = {"role": "user", "content": [CHART, {"type": "text", "text": "Is D low, medium or high?"}]}
CALL = {"role": "assistant", "content": [{"type": "text", "text": '<tool_call>{"name": "mask", "arguments": {"x": ["D"]}}</tool_call>'}]}
RESULT = {"role": "tool", "content": [{"type": "text", "text": "OBSERVATION: kept D."}, EDITED]}
ANSWER = {"role": "assistant", "content": [{"type": "text", "text": "<answer>low</answer>"}]}
TOOL_MESSAGES = [SYSTEM, USER, CALL, RESULT, ANSWER]
TOOL_CONVERSATION = Conversation.from_messages(TOOL_MESSAGES)
DIRECT_CONVERSATION = Conversation.from_messages([SYSTEM, USER, ANSWER])


def _policy() -> Policy:
    corpus = [part["text"] for m in TOOL_MESSAGES for part in m["content"] if "text" in part] * 20
    return Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), corpus, 1, "cpu")


def _trained_text(policy: Policy, segments) -> list[str]:
    return [policy.processor.tokenizer.decode([t for t, m in zip(s.input_ids, s.loss_mask) if m]) for s in segments]


def test_the_first_steps_train_only_the_answer_after_the_tool_result_then_whole_trajectories():
    schedule = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 3, "direct_answer_fraction": 0.6}))
    assert [schedule.after_tool(step) for step in range(5)] == [True, True, True, False, False]
    assert [schedule.direct_share(step) for step in (0, 2, 3, 10)] == [0.0, 0.0, 0.6, 0.6]
    assert SftSchedule.from_config(from_dict(SftConfig, {"direct_answer_fraction": 0.6})).direct_share(0) == 0.6  # no phase: the mixture from step 0

    policy = _policy()
    assert _trained_text(policy, policy.encoder.after_tool_segments(TOOL_CONVERSATION)) == ["<answer>low</answer><|im_end|>"]
    assert policy.encoder.after_tool_segments(DIRECT_CONVERSATION) == []
    whole = _trained_text(policy, policy.encoder.training_segments(TOOL_CONVERSATION))
    assert len(whole) == 1 and CALL["content"][0]["text"] in whole[0] and whole[0].endswith("<answer>low</answer><|im_end|>")


def _losses(conversations, config):
    policy = _policy()
    losses: list[float] = []
    run_sft(policy, conversations, from_dict(SftConfig, {"steps": 4, "batch_size": 2, "lr": 1e-3, "weight_decay": 0.0, **config}), seed=3,
            on_step=lambda step, loss, seconds: losses.append(loss))
    return losses


def test_with_the_tools_off_every_step_trains_even_inside_the_after_tool_phase():
    losses = _losses([DIRECT_CONVERSATION], {"after_tool_turns_first": 3})
    assert len(losses) == 4 and all(loss > 0.5 for loss in losses), losses


def test_the_after_tool_phase_trains_fewer_tokens_than_the_whole_trajectory():
    """The same conversation, the same weights: the answer alone (5 tokens or so) has a different
    mean loss from the whole trajectory (the call's tokens too), so the phase changes what is trained."""
    phase = _losses([TOOL_CONVERSATION], {"after_tool_turns_first": 4})
    whole = _losses([TOOL_CONVERSATION], {"after_tool_turns_first": 0})
    assert all(loss > 0 for loss in phase + whole)
    assert abs(phase[0] - whole[0]) > 1e-3


def test_encodings_of_one_image_share_its_pixels_instead_of_copying_them():
    """SFT keeps an encoding per conversation (and per phase): a chart encoded twice is one tensor."""
    policy = _policy()
    first = policy.encoder.training_segments(DIRECT_CONVERSATION)[0]
    second = policy.encoder.encode(DIRECT_CONVERSATION.messages, add_generation_prompt=False)
    assert first.pixel_values.data_ptr() == second.pixel_values.data_ptr()
    two_images = policy.encoder.training_segments(TOOL_CONVERSATION)[0]
    assert two_images.pixel_values.shape[0] == 2 * first.pixel_values.shape[0]


def test_a_conversation_trained_in_both_phases_keeps_one_copy_of_its_pixels_and_trains_in_each():
    losses = _losses([TOOL_CONVERSATION], {"after_tool_turns_first": 2})
    assert len(losses) == 4 and all(loss > 0 for loss in losses)
    # Steps 3-4 train the call's tokens too: the mean over more, higher-loss tokens differs.
    assert abs(losses[2] - losses[1]) > 1e-3


def test_call_segments_without_images_train_the_call_alone_with_no_image_tokens():
    policy = _policy()
    [segment] = policy.encoder.call_segments_without_images(TOOL_CONVERSATION)
    assert _trained_text(policy, [segment]) == [CALL["content"][0]["text"] + "<|im_end|>"]
    assert policy.processor.image_token_id not in segment.input_ids and segment.pixel_values is None
    assert "(image)" in policy.processor.tokenizer.decode(segment.input_ids)
    assert policy.encoder.call_segments_without_images(DIRECT_CONVERSATION) == []
    # The conversation itself is untouched.
    assert TOOL_MESSAGES[1]["content"][0] is CHART and TOOL_CONVERSATION.prompts[1][1]["content"][0] is CHART


def test_calls_alongside_answers_train_both_the_answer_and_the_call_without_images():
    """Step 1 inside the after-tool phase with calls alongside: the loss covers the answer after the
    tool and the call written without images; without the option, the answer alone (another mean)."""
    both = _losses([TOOL_CONVERSATION], {"after_tool_turns_first": 4, "calls_alongside_answers": True})
    alone = _losses([TOOL_CONVERSATION], {"after_tool_turns_first": 4})
    whole = _losses([TOOL_CONVERSATION], {"after_tool_turns_first": 0})
    assert all(loss > 0 for loss in both + alone + whole)
    assert abs(both[0] - alone[0]) > 1e-3 and abs(both[0] - whole[0]) > 1e-3
