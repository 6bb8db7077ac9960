"""`vistool_agent`: veRL's agent loop for vistool's env server.

Each turn the policy generates through veRL's server manager (vLLM or SGLang on a cluster); the
raw text goes to the env server, which parses it, runs the tool and answers with the observation
(the edited image and a short text). The loop ends when the env says the episode is done, at the
env's turn and tool-call limits, at veRL's max_assistant_turns, or when the response budget is
spent. The server's score of the episode rides to the reward function in the extra fields
(vistool_verl.reward), with the trajectory the rollout records are made from.

What the policy reads is the env server's: the loop sends the run's `presentation` block (the
system turn, the image view; docs/CONTRACTS.md) when it opens the episode and generates from the
prompt the server presents each turn, never from text of its own. While prompts only grow, the
observation's tokens join the sequence with response_mask 0 and its images join
multi_modal_data. When the view hides earlier images, each turn is generated from the presented
prompt rebuilt with the turns as sampled; the loop hands veRL one sequence per episode (veRL
0.9.1's v1 trainer would take one per turn; not used yet), the last turn's (docs/VERL.md says what that means for earlier turns).
With `train_turns: final` (rl.train_turns) only the turn that ends the episode keeps mask 1: the
turns the env went on after (tool calls) are masked like observations, VTool-R1 v2's rule
(turn_masks.py).

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

from vistool_trainer.model.policy_processor import image_processor_pixel_bounds

from .env_messages import to_verl_messages
from .env_session import EnvAddress, EnvServerError, agent_loop_worker_nodes, off_loop
from .fault_injection import InjectedFaults
from .live_records import EpisodePlace, live_record
from .turn_masks import check_train_turns, masked_turns
from .verl_internals import agent_loop_registry, check as check_verl_internals, spec_decode_extra_keys

# veRL's private names this loop uses (its registry, AgentLoopBase's token helpers) exist, or the
# import stops here naming them (verl_internals.py).
check_verl_internals("agent_loop")

AGENT_NAME = "vistool_agent"
log = logging.getLogger(__name__)


def register_keeping_the_recipe(agent_name: str) -> Any:
    """veRL's `register`, unless agent_loop.yaml's entry for this name is already in the registry.

    veRL's agent-loop worker loads agent_loop.yaml into its registry (name, `_target_` and the loop's
    keys: presentation, limits, per-turn cap) and imports this module only when it makes the first
    loop; veRL's own `register` would then overwrite that entry with a bare `_target_`, and every
    later loop of the run would start without the recipe's keys (the env's default presentation, a
    prompt longer than data.max_prompt_length). Seen in `make verl-e2e`: one trajectory of 32 ran."""
    existing = agent_loop_registry().get(agent_name)
    if existing is not None and set(existing) - {"_target_", "name"}:
        return lambda subclass: subclass
    return register(agent_name)


@register_keeping_the_recipe(AGENT_NAME)
class VistoolAgentLoop(AgentLoopBase):
    def __init__(self, *args: Any, max_turns: int | None = None, max_tool_calls: int = 3, use_tools: bool = True,
                 presentation: dict[str, Any] | None = None, env_url: str | None = None, env_token_file: str | None = None,
                 run_dir: str | None = None, max_new_tokens: int | None = None, train_turns: str = "all", **kwargs: Any):
        if "system_prompt" in kwargs:
            raise ValueError("the vistool agent loop takes `presentation: {system_prompt, view}` (the run config's policy.system_prompt "
                             "and policy.view, which the env server applies), not `system_prompt`: export the recipe again "
                             "(`vistool config export --to verl`)")
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.max_assistant_turns = int(max_turns or multi_turn.get("max_assistant_turns") or 4)
        self.max_tool_calls = int(max_tool_calls)
        self.use_tools = bool(use_tools)
        # The run config's presentation block, sent as it is: the env server chooses the system turn by
        # `use_tools` and applies the view (None: the env's own system turn and every image).
        self.presentation = _plain(presentation)
        self.end_of_turn = int(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
        # The ids a rollout server stops a turn on besides <|im_end|>: vLLM stops on every end-of-sequence
        # id of the generation config (Qwen2.5-VL-Instruct: <|im_end|> and <|endoftext|>) and returns it.
        self.other_stops = other_stop_ids(self.tokenizer, self.end_of_turn)
        self.response_length = int(self.rollout_config.response_length)
        self.env = EnvAddress.resolve(env_url, env_token_file)
        agent = getattr(self.rollout_config, "agent", None)
        workers = int(getattr(agent, "num_workers", None) or 1)
        self.env.refuse_loopback_across_nodes(int(self.config.get("trainer", {}).get("nnodes", 1) or 1), agent_loop_worker_nodes(workers))
        # The per-turn token cap (rl.max_new_tokens); None leaves each turn the rest of the response budget.
        self.max_new_tokens = int(max_new_tokens) if max_new_tokens else None
        # rl.train_turns: 'all' trains every turn, 'final' only the one that ends the episode (turn_masks.py).
        self.train_turns = check_train_turns(train_turns)
        # Where live rollout records go; None writes none.
        self.run_dir = run_dir or os.environ.get("VISTOOL_RUN_DIR") or None
        # Tests only (VISTOOL_TEST_ENV_FAULTS): a share of tool calls answered with an env server error.
        self.faults = InjectedFaults.from_environment()

    def pixel_bounds(self) -> dict[str, int] | None:
        """The policy's image bounds (env option `pixel_bounds`): data.mm_processor_kwargs' min_pixels
        and max_pixels, which the prompt and the rollout server resize with, else the processor's own;
        None without a processor (the env's default, Qwen2.5-VL's)."""
        kwargs = self._get_mm_processor_kwargs() or {}
        given = {key: kwargs.get(key) for key in ("min_pixels", "max_pixels")}
        if any(value is None for value in given.values()):
            image_processor = getattr(self.processor, "image_processor", None)
            if image_processor is None:
                return None
            own = image_processor_pixel_bounds(image_processor)
            given = {key: own[key] if value is None else value for key, value in given.items()}
        return {key: int(value) for key, value in given.items()}

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        task, task_dir = _task_of(kwargs.get("extra_info"))
        metrics: dict[str, Any] = {}
        client = self.env.client()
        options = {"tools": self.use_tools, "max_turns": self.max_assistant_turns,
                   "max_tool_calls": max(self.max_tool_calls, 1), "images": "path"}
        if self.presentation is not None:
            options["presentation"] = self.presentation
        # The bounds the policy's images are resized into: crop reads boxes in the image as shown.
        bounds = self.pixel_bounds()
        if bounds is not None:
            options["pixel_bounds"] = bounds
        with simple_timer("tool_calls", metrics):
            opened = (await off_loop(client.start_episodes, [{"task": task, "task_dir": task_dir, "options": options}]))[0]
        episode_id = opened["episode_id"]
        notes: list[str] = []
        prompts_grow = bool((opened.get("presentation") or {}).get("prompts_only_grow", True))
        # Each turn as sampled (ids, log-probs), to rebuild a presented prompt that hides earlier images.
        sampled: list[tuple[list[int], list[float] | None]] = []
        # Where each turn's tokens lie in the response, and whether the env went on after it.
        turn_spans: list[tuple[int, int]] = []
        continued: list[bool] = []
        try:
            messages, images = to_verl_messages(opened["observation"]["prompt"])
            self._assert_mm_supported(bool(images))
            # The image size limits (data.mm_processor_kwargs) the prompt's image tokens were built with:
            # the rollout server must see the images at that resolution too.
            mm_processor_kwargs = self._get_mm_processor_kwargs() or None
            token_ids = await self.ct_build_initial_tokens(messages, images=images or None)
            prompt_length = len(token_ids)
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
                turn_start = len(response_mask)
                with simple_timer("generate_sequences", metrics):
                    generated = await self.server_manager.generate(request_id=request_id, prompt_ids=token_ids,
                                                                   sampling_params=turn_params, image_data=images or None,
                                                                   mm_processor_kwargs=mm_processor_kwargs)
                generation_fields = merge_generation_fields(generation_fields, generated.extra_fields)
                metrics["num_preempted"] = add_preemptions(metrics.get("num_preempted"), getattr(generated, "num_preempted", None))
                merged, response_mask, logprobs = await self.ct_merge_assistant_token(
                    token_ids, generated.token_ids, response_mask,
                    response_logprobs if (response_logprobs or generated.log_probs) else None,
                    assistant_logprobs=generated.log_probs or None)
                token_ids = merged.token_ids
                response_logprobs = logprobs or []
                assistant_turns += 1
                turn_spans.append((turn_start, len(response_mask)))
                sampled.append((list(generated.token_ids), list(generated.log_probs) if generated.log_probs else None))
                text = self._text_of(generated.token_ids)
                messages.append({"role": "assistant", "content": text})
                with simple_timer("tool_calls", metrics):
                    step = (await off_loop(client.step_episodes, [{"episode_id": episode_id, "text": text}], soft=True))[0]
                step = self.faults.apply(step, task.get("id"), kwargs.get("global_steps"), kwargs.get("uid"), kwargs.get("session_id"),
                                         assistant_turns, self.run_dir)
                if "error" in step:
                    raise EnvServerError(f"the env server could not take turn {assistant_turns} of episode {episode_id} (task "
                                         f"{task.get('id')}): HTTP {step['error'].get('status')}: {step['error'].get('message')}. "
                                         "The rollout fails (its group is dropped or kept as trainer.v1.sampler.sampler_kwargs.failed_groups says; "
                                         "docs/VERL.md) rather than train on a reward the env never gave")
                continued.append(not step["done"])
                if step["done"] or assistant_turns >= self.max_assistant_turns or len(response_mask) >= self.response_length:
                    break
                if prompts_grow:
                    observation, new_images = to_verl_messages(step["observation"]["messages"])
                    previous = list(messages)
                    messages.extend(observation)
                    # A turn cut at its token cap has no <|im_end|>: close it as the env's presented prompt does.
                    closed_ids, closed_mask, closed_logprobs = close_turn(token_ids, response_mask, response_logprobs or None,
                                                                          self.end_of_turn, self.other_stops)
                    merged, extended_mask, logprobs = await self.ct_merge_context_msg(
                        previous, messages, closed_ids, closed_mask, closed_logprobs)
                    extended_ids, extended_images, extended_spans = merged.token_ids, images + new_images, turn_spans
                else:
                    messages, extended_images, extended_ids, prompt_length, extended_mask, logprobs, extended_spans = await self._presented(
                        step["observation"]["prompt"], sampled)
                if len(extended_mask) >= self.response_length:
                    notes.append("the response budget ran out before the observation fitted; the episode ends here")
                    break
                token_ids, response_mask, images, turn_spans = extended_ids, extended_mask, extended_images, extended_spans
                response_logprobs = logprobs or []
                user_turns += 1
            trained_mask = masked_turns(response_mask, turn_spans, continued, self.train_turns)
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
                                 f"{score['error'].get('status')}: {score['error'].get('message')}. The rollout fails (its group is dropped or "
                                 "kept as trainer.v1.sampler.sampler_kwargs.failed_groups says) rather than train on a reward of 0 the env "
                                 "never gave")
        self._record(kwargs, task, trajectory, {**score, "notes": [str(n) for n in score.get("notes") or []] + notes},
                     sum(response_mask[: self.response_length]))
        return AgentLoopOutput(
            prompt_ids=token_ids[:prompt_length],
            response_ids=token_ids[prompt_length:][: self.response_length],
            response_mask=trained_mask[: self.response_length],
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

    async def _presented(self, prompt: list[dict[str, Any]], sampled: list[tuple[list[int], list[float] | None]]
                         ) -> tuple[list[dict[str, Any]], list[Any], list[int], int, list[int], list[float] | None, list[tuple[int, int]]]:
        """The env's presented prompt as continuous tokens, each earlier turn as it was sampled:
        (messages, images, token ids, prompt length, response mask, response log-probs, each turn's
        span in the response). The
        messages before the first turn are the prompt; every turn (mask 1) and every observation
        after it (mask 0) is merged as veRL's builder merges them while an episode runs."""
        messages, images = to_verl_messages(prompt)
        turns = [index for index, message in enumerate(messages) if message.get("role") == "assistant"]
        if len(turns) != len(sampled):
            raise ValueError(f"the env server's prompt holds {len(turns)} assistant turns, but {len(sampled)} were sampled")
        head = messages[: turns[0]] if turns else messages
        token_ids = await self.ct_build_initial_tokens(head, images=_images_in(head) or None)
        prompt_length = len(token_ids)
        mask: list[int] = []
        logprobs: list[float] | None = [] if all(lp is not None for _, lp in sampled) else None
        spans: list[tuple[int, int]] = []
        for number, index in enumerate(turns):
            ids, turn_logprobs = sampled[number]
            start = len(mask)
            merged, mask, merged_logprobs = await self.ct_merge_assistant_token(token_ids, ids, mask, logprobs, assistant_logprobs=turn_logprobs)
            spans.append((start, len(mask)))
            token_ids, logprobs = merged.token_ids, merged_logprobs if logprobs is not None else None
            following = turns[number + 1] if number + 1 < len(turns) else len(messages)
            if following > index + 1:
                token_ids, mask, logprobs = close_turn(token_ids, mask, logprobs, self.end_of_turn, self.other_stops)
                merged, mask, merged_logprobs = await self.ct_merge_context_msg(
                    messages[: index + 1], messages[:following], token_ids, mask, logprobs)
                token_ids, logprobs = merged.token_ids, merged_logprobs if logprobs is not None else None
        return messages, images, token_ids, prompt_length, mask, logprobs, spans

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
        """What the model wrote, as the env must read it: every token but the one that stopped the turn
        (<|im_end|>, or <|endoftext|>: a stop signal, not text the env should parse or score).
        Tool-call markers may be special tokens (they are in the micro model's vocabulary), so
        nothing else is skipped."""
        if token_ids and (token_ids[-1] == self.end_of_turn or token_ids[-1] in self.other_stops):
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids, skip_special_tokens=False)


def other_stop_ids(tokenizer: Any, end_of_turn: int) -> set[int]:
    """The stop ids other than <|im_end|>: <|endoftext|> and the tokenizer's end-of-sequence."""
    candidates = [tokenizer.convert_tokens_to_ids("<|endoftext|>"), tokenizer.eos_token_id]
    unknown = tokenizer.unk_token_id
    return {int(i) for i in candidates if i is not None and i != unknown and int(i) != end_of_turn}


def close_turn(token_ids: list[int], mask: list[int], logprobs: list[float] | None, end_of_turn: int,
               other_stops: set[int] = frozenset()) -> tuple[list[int], list[int], list[float] | None]:
    """A turn closed as the env server's presented prompt closes it, before the next message is merged.

    The env server renders every earlier assistant turn with the chat template, which ends it with
    <|im_end|>\n, so the next prompt holds that token whatever the sampler did:
    - a turn that ended on <|im_end|> stays as it is;
    - a turn cut at its max_tokens (no stop token) gets <|im_end|> appended as context (mask 0,
      log-prob 0: the sampler never chose it). veRL 0.9.1's own ToolAgentLoop does not close such a
      turn (its Qwen token builder adds the newline only after an <|im_end|> the model wrote), so
      there the cut text runs into the next <|im_start|>; veRL's builder adds the newline here as
      it does after a turn the model closed;
    - a turn that stopped on another stop id (<|endoftext|>: vLLM stops on every end-of-sequence id
      of the generation config) has that token replaced by <|im_end|> as context (mask 0, log-prob
      0). The env got the text without it, and presents the turn closed by <|im_end|>: the policy
      reads what the server presents, and no token is trained that the policy did not sample in
      that context. The stop decision of a turn the env went on after is then not trained; a turn
      that ends the episode keeps its sampled <|endoftext|> (mask 1), as vLLM returned it."""
    if not token_ids or token_ids[-1] == end_of_turn:
        return token_ids, mask, logprobs
    if token_ids[-1] in other_stops and mask and mask[-1] == 1:
        return (token_ids[:-1] + [end_of_turn], mask[:-1] + [0],
                (logprobs[:-1] + [0.0]) if logprobs is not None else None)
    return token_ids + [end_of_turn], mask + [0], (logprobs + [0.0]) if logprobs is not None else None


def merge_generation_fields(kept: dict[str, Any], turn: dict[str, Any] | None) -> dict[str, Any]:
    """The rollout server's extra fields over an episode, as veRL 0.9.1's own ToolAgentLoop keeps them
    (`_handle_generating_state`): the first turn's (`global_steps`, `min_global_steps`: the weights the
    episode started with), `max_global_steps` from the latest turn that has one (the weights it ended
    with), and the speculative-decoding counters (SPEC_DECODE_EXTRA_KEYS) summed over the turns that
    report them. veRL's v1 trainer reads min/max_global_steps from every trajectory."""
    turn = dict(turn or {})
    if not kept:
        return turn
    merged = dict(kept)
    if turn.get("max_global_steps"):
        merged["max_global_steps"] = turn["max_global_steps"]
    for key in spec_decode_extra_keys():
        if key in turn and key in merged:
            merged[key] = int(merged[key]) + int(turn[key])
    return merged


def add_preemptions(kept: int | None, turn: int | None) -> int:
    """The episode's `num_preempted` metric as ToolAgentLoop counts it: the first turn's (-1 when the
    server does not say), then each later turn's added (a turn that does not say adds 0)."""
    if kept is None:
        return int(turn) if turn is not None else -1
    return kept + (int(turn) if turn is not None else 0)


def _task_of(extra_info: Any) -> tuple[dict[str, Any], str]:
    """The task record a dataset row carries (`vistool-verl data convert --to verl` writes it as
    extra_info.task_json; a caller may pass the record itself as extra_info.task)."""
    extra = extra_info if isinstance(extra_info, dict) else {}
    task = json.loads(extra["task_json"]) if isinstance(extra.get("task_json"), str) else extra.get("task")
    if not isinstance(task, dict) or not extra.get("task_dir"):
        raise ValueError("a vistool_agent row needs extra_info.task_json (the task record) and extra_info.task_dir (the folder its "
                         "image path starts from); write the data with `vistool-verl data convert --to verl`")
    return task, str(extra["task_dir"])


def _images_in(messages: list[dict[str, Any]]) -> list[Any]:
    return [part["image"] for message in messages if isinstance(message.get("content"), list)
            for part in message["content"] if part.get("type") == "image"]


def _plain(value: Any) -> Any:
    """A presentation block from agent_loop.yaml (omegaconf containers) as plain JSON data."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # omegaconf comes with veRL; without it the value is plain already
        pass
    return value
