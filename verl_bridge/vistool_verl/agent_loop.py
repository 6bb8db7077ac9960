"""`vistool_agent`: veRL's agent loop for vistool's env server.

Each turn the policy generates through veRL's server manager (vLLM or SGLang on a cluster); the
raw text goes to the env server, which parses it, runs the tool and answers with the observation
(the edited image and a short text). The observation's tokens join the sequence with
response_mask 0 and its images join multi_modal_data. The loop ends when the env says the
episode is done, at the env's turn and tool-call limits, at veRL's max_assistant_turns, or when
the response budget is spent. The server's score of the episode rides to the reward function in
the extra fields (vistool_verl.reward), with the trajectory the rollout records are made from.

Tokens come from veRL's own continuous-token builder (ct_* helpers), so prompt and response ids
are exactly what veRL's trainer would build for these messages.

With a run directory (`run_dir`, else VISTOOL_RUN_DIR) and veRL's step in the call, each episode's
rollout record goes to the run's rollouts/ as the episode ends (vistool_verl.live_records).
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
from verl.utils.profiler import simple_timer

from vistool_trainer.rollouts.rollout import apply_system_prompt

from .env_messages import to_verl_messages
from .env_session import EnvAddress, EnvServerError, off_loop
from .live_records import EpisodePlace, live_record

AGENT_NAME = "vistool_agent"
log = logging.getLogger(__name__)


@register(AGENT_NAME)
class VistoolAgentLoop(AgentLoopBase):
    def __init__(self, *args: Any, max_turns: int | None = None, max_tool_calls: int = 3, use_tools: bool = True,
                 system_prompt: str | None = None, env_url: str | None = None, env_token_file: str | None = None,
                 run_dir: str | None = None, max_new_tokens: int | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.max_assistant_turns = int(max_turns or multi_turn.get("max_assistant_turns") or 4)
        self.max_tool_calls = int(max_tool_calls)
        self.use_tools = bool(use_tools)
        # The run config's system prompt: None keeps the env server's, "" leaves the system turn out.
        self.system_prompt = system_prompt
        self.end_of_turn = int(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.response_length = int(self.rollout_config.response_length)
        self.env = EnvAddress.resolve(env_url, env_token_file)
        self.env.refuse_loopback_across_nodes(int(self.config.get("trainer", {}).get("nnodes", 1) or 1))
        # The per-turn token cap (rl.max_new_tokens); None leaves each turn the rest of the response budget.
        self.max_new_tokens = int(max_new_tokens) if max_new_tokens else None
        # Where live rollout records go; None writes none.
        self.run_dir = run_dir or os.environ.get("VISTOOL_RUN_DIR") or None

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        task, task_dir = _task_of(kwargs.get("extra_info"))
        metrics: dict[str, Any] = {}
        client = self.env.client()
        options = {"tools": self.use_tools, "max_turns": self.max_assistant_turns,
                   "max_tool_calls": max(self.max_tool_calls, 1), "images": "path"}
        with simple_timer("tool_calls", metrics):
            opened = (await off_loop(client.start_episodes, [{"task": task, "task_dir": task_dir, "options": options}]))[0]
        episode_id = opened["episode_id"]
        notes: list[str] = []
        try:
            messages, images = to_verl_messages(apply_system_prompt(opened["observation"]["messages"], self.system_prompt, self.use_tools))
            self._assert_mm_supported(bool(images))
            # The image size limits (data.mm_processor_kwargs) the prompt's image tokens were built with:
            # the rollout server must see the images at that resolution too.
            mm_processor_kwargs = self._get_mm_processor_kwargs() or None
            token_ids = await self.ct_build_initial_tokens(messages, images=images or None)
            response_mask: list[int] = []
            response_logprobs: list[float] = []
            generation_fields: dict[str, Any] = {}
            assistant_turns = user_turns = 0
            request_id = uuid4().hex
            while True:
                # Each turn may use at most the per-turn cap and never more than the budget left, so the
                # response never runs past response_length: the env scores exactly the text the trainer keeps.
                budget = self.response_length - len(response_mask)
                turn_params = {**sampling_params, "max_tokens": min(self.max_new_tokens or budget, budget)}
                with simple_timer("generate_sequences", metrics):
                    generated = await self.server_manager.generate(request_id=request_id, prompt_ids=token_ids,
                                                                   sampling_params=turn_params, image_data=images or None,
                                                                   mm_processor_kwargs=mm_processor_kwargs)
                generation_fields = merge_generation_fields(generation_fields, generated.extra_fields)
                merged, response_mask, logprobs = await self.ct_merge_assistant_token(
                    token_ids, generated.token_ids, response_mask,
                    response_logprobs if (response_logprobs or generated.log_probs) else None,
                    assistant_logprobs=generated.log_probs or None)
                token_ids = merged.token_ids
                response_logprobs = logprobs or []
                assistant_turns += 1
                text = self._text_of(generated.token_ids)
                messages.append({"role": "assistant", "content": text})
                with simple_timer("tool_calls", metrics):
                    step = (await off_loop(client.step_episodes, [{"episode_id": episode_id, "text": text}], soft=True))[0]
                if "error" in step:
                    raise EnvServerError(f"the env server could not take turn {assistant_turns} of episode {episode_id} (task "
                                         f"{task.get('id')}): HTTP {step['error'].get('status')}: {step['error'].get('message')}. "
                                         "The rollout fails (veRL drops its group) rather than train on a reward the env never gave")
                if step["done"] or assistant_turns >= self.max_assistant_turns or len(response_mask) >= self.response_length:
                    break
                observation, new_images = to_verl_messages(step["observation"]["messages"])
                previous = list(messages)
                messages.extend(observation)
                merged, extended_mask, logprobs = await self.ct_merge_context_msg(
                    previous, messages, token_ids, response_mask, response_logprobs or None)
                if len(extended_mask) >= self.response_length:
                    notes.append("the response budget ran out before the observation fitted; the episode ends here")
                    break
                token_ids, response_mask = merged.token_ids, extended_mask
                response_logprobs = logprobs or []
                images.extend(new_images)
                user_turns += 1
            score = (await off_loop(client.score_episodes, [episode_id], soft=True))[0]
            trajectory = await off_loop(client.trajectory, episode_id)
        finally:
            try:
                await off_loop(client.close_episode, episode_id)
            except Exception:  # an expired episode is gone already
                pass
            client.close()
        if "error" in score:
            raise EnvServerError(f"the env server could not score episode {episode_id} (task {task.get('id')}): HTTP "
                                 f"{score['error'].get('status')}: {score['error'].get('message')}. The rollout fails (veRL drops its "
                                 "group) rather than train on a reward of 0 the env never gave")
        self._record(kwargs, task, trajectory, {**score, "notes": [str(n) for n in score.get("notes") or []] + notes},
                     sum(response_mask[: self.response_length]))
        prompt_length = len(token_ids) - len(response_mask)
        return AgentLoopOutput(
            prompt_ids=token_ids[:prompt_length],
            response_ids=token_ids[prompt_length:][: self.response_length],
            response_mask=response_mask[: self.response_length],
            response_logprobs=response_logprobs[: self.response_length] or None,
            multi_modal_data={"images": images} if images else {},
            mm_processor_kwargs=mm_processor_kwargs,
            num_turns=assistant_turns + user_turns + 1,
            metrics=metrics,
            extra_fields={
                **generation_fields,
                "vistool_score": {"reward": float(score["reward"]), "correct": bool(score.get("correct")),
                                  "components": {k: float(v) for k, v in (score.get("components") or {}).items()},
                                  "notes": [str(n) for n in score.get("notes") or []] + notes},
                "vistool_trajectory": trajectory,
            },
        )

    def _record(self, kwargs: dict[str, Any], task: dict[str, Any], trajectory: dict[str, Any], score: dict[str, Any],
                response_tokens: int) -> None:
        place = EpisodePlace.of(self.run_dir, kwargs, self.rollout_config)
        if place is None:
            return
        try:
            place.record(live_record(place.step, str(task.get("id", "")), place.session, place.uid, trajectory, score, response_tokens))
        except OSError as error:  # the viewer's record is not worth a training step
            log.warning("vistool_agent: could not write the rollout record to %s: %s", place.path, error)

    def _text_of(self, token_ids: list[int]) -> str:
        """What the model wrote, as the env must read it: every token but the closing end-of-turn.
        Tool-call markers may be special tokens (they are in the micro model's vocabulary), so
        nothing else is skipped."""
        if token_ids and token_ids[-1] == self.end_of_turn:
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids, skip_special_tokens=False)


def merge_generation_fields(kept: dict[str, Any], turn: dict[str, Any] | None) -> dict[str, Any]:
    """The rollout server's extra fields over an episode, as veRL's own ToolAgentLoop keeps them: the
    first turn's (`global_steps`, `min_global_steps`: the weights the episode started with), with
    `max_global_steps` from the latest turn (the weights it ended with). veRL's v1 trainer reads
    min/max_global_steps from every trajectory for its off-policy bookkeeping."""
    turn = dict(turn or {})
    if not kept:
        return turn
    merged = dict(kept)
    if turn.get("max_global_steps") is not None:
        merged["max_global_steps"] = turn["max_global_steps"]
    return merged


def _task_of(extra_info: Any) -> tuple[dict[str, Any], str]:
    """The task record a dataset row carries (`vistool-verl data convert --to verl` writes it as
    extra_info.task_json; a caller may pass the record itself as extra_info.task)."""
    extra = extra_info if isinstance(extra_info, dict) else {}
    task = json.loads(extra["task_json"]) if isinstance(extra.get("task_json"), str) else extra.get("task")
    if not isinstance(task, dict) or not extra.get("task_dir"):
        raise ValueError("a vistool_agent row needs extra_info.task_json (the task record) and extra_info.task_dir (the folder its "
                         "image path starts from); write the data with `vistool-verl data convert --to verl`")
    return task, str(extra["task_dir"])
