"""What veRL's trainer needs from the vistool agent loop beyond the tokens (docs/VERL.md, issue items
1, 3, 4, 5, 9), each checked against the real env server and micro Qwen2.5-VL:

1. the rollout server's weight versions (`min_global_steps` / `max_global_steps`) reach veRL's v1
   trainer, which casts them to int for every trajectory;
3. no turn may run past the response budget, so the env scores exactly the text the trainer keeps;
4. the rollout server is told the image size limits the prompt was built with;
5. an env server failure fails the rollout instead of becoming a reward of 0;
9. a loopback env server is refused when the run spans nodes.

Generation goes through TransformersServerManager, vistool's implementation of veRL's
server-manager interface on transformers: the one stand-in here (vLLM and SGLang need a GPU).
`VersionedServerManager` adds to it only what veRL's LLMServerClient adds to every answer: the
weight version it was generated with.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
import torch
from transformers import Qwen2_5_VLForConditionalGeneration
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset

from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.env_client import EnvClient
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.agent_loop import VistoolAgentLoop, merge_generation_fields
from vistool_verl.env_session import EnvServerError
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config
from vistool_verl.transformers_server import TransformersServerManager

SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}


class VersionedServerManager(TransformersServerManager):
    """The stand-in, tagging each answer with a weight version that moves on after every call, as
    veRL's LLMServerClient tags vLLM's answers (global_steps, min_global_steps, max_global_steps)."""

    def __init__(self, *args, delay_s: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.version = 7
        self.delay_s = delay_s

    async def generate(self, request_id, **kwargs):
        output = await super().generate(request_id, **kwargs)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        output.extra_fields = {"global_steps": self.version, "min_global_steps": self.version, "max_global_steps": self.version,
                               "num_cached_tokens": 0}
        self.version += 1
        return output


def rows_for(tasks: list[dict]) -> list[dict]:
    return [{"extra_info": {"task_json": json.dumps({k: v for k, v in t.items() if not k.startswith("_")}), "task_dir": t["_task_dir"]}}
            for t in tasks]


def loops(model_dir: Path, url: str, token_file: Path, manager, n: int, *, response_length: int = 768, max_new_tokens: int | None = None,
          mm_processor_kwargs: dict | None = None, nnodes: int = 1):
    processor = load_processor(model_dir)
    cfg = trainer_config(response_length=response_length, prompt_length=3328, max_turns=3, mm_processor_kwargs=mm_processor_kwargs,
                         nnodes=nnodes)
    return [VistoolAgentLoop(DictConfigWrap(cfg), manager, processor.tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                             hf_model_type="qwen2_5_vl", max_turns=3, max_new_tokens=max_new_tokens, env_url=url,
                             env_token_file=str(token_file)) for _ in range(n)]


def run_all(make, rows):
    async def go():
        made = make()
        return await asyncio.gather(*(loop.run(dict(SAMPLING), **row) for loop, row in zip(made, rows)))
    return asyncio.run(go())


def manager_for(model_dir: Path, **kwargs) -> VersionedServerManager:
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32)
    return VersionedServerManager(model, load_processor(model_dir), **kwargs)


def test_the_weight_versions_of_an_episode_reach_veRL_as_the_first_and_the_last_turn_s(tasks_path, micro_dir, env_server):
    client, token_file, _ = env_server
    manager = manager_for(micro_dir, max_new_tokens=24)
    outputs = run_all(lambda: loops(micro_dir, client.url, token_file, manager, 2), rows_for(load_tasks(tasks_path)[:2]))
    for output in outputs:
        fields = output.as_dict()["extra_fields"]
        # What veRL's v1 trainer does with them (trainer_base.py: np.array([...], dtype=int)).
        low, high = int(fields["min_global_steps"]), int(fields["max_global_steps"])
        assert 7 <= low <= high
        assert fields["global_steps"] == low
        assert "vistool_score" in fields and "vistool_trajectory" in fields
    # Multi-turn episodes span versions: the later turns were generated with newer weights.
    assert any(int(o.extra_fields["max_global_steps"]) > int(o.extra_fields["min_global_steps"]) for o in outputs)


def test_merging_keeps_the_first_turn_s_fields_and_the_last_turn_s_max_version():
    first = {"global_steps": 3, "min_global_steps": 3, "max_global_steps": 3, "num_cached_tokens": 10}
    merged = merge_generation_fields(merge_generation_fields({}, first), {"global_steps": 5, "min_global_steps": 5, "max_global_steps": 5})
    assert merged == {"global_steps": 3, "min_global_steps": 3, "max_global_steps": 5, "num_cached_tokens": 10}


def test_speculative_decoding_counters_and_preemptions_add_up_over_the_turns_as_in_veRLs_tool_agent_loop():
    """veRL 0.9.1's ToolAgentLoop sums spec_num_draft_tokens, spec_num_accepted_tokens and
    spec_num_verify_steps over an episode's turns and counts num_preempted from the first turn on."""
    from vistool_verl.agent_loop import add_preemptions

    turns = [{"global_steps": 1, "max_global_steps": 1, "spec_num_draft_tokens": 10, "spec_num_accepted_tokens": 7, "spec_num_verify_steps": 3},
             {"global_steps": 2, "max_global_steps": 2, "spec_num_draft_tokens": 4, "spec_num_accepted_tokens": 1, "spec_num_verify_steps": 2}]
    merged: dict = {}
    for turn in turns:
        merged = merge_generation_fields(merged, turn)
    assert merged == {"global_steps": 1, "max_global_steps": 2, "spec_num_draft_tokens": 14, "spec_num_accepted_tokens": 8,
                      "spec_num_verify_steps": 5}
    count = None
    for preempted in (None, 2, None, 1):
        count = add_preemptions(count, preempted)
    assert count == -1 + 2 + 0 + 1  # the first turn said nothing (-1), as veRL records it
    assert add_preemptions(add_preemptions(None, 0), 3) == 3


def test_no_turn_runs_past_the_response_budget_so_the_env_scores_what_the_trainer_keeps(tasks_path, micro_dir, env_server):
    client, token_file, _ = env_server
    # A server whose own default would let a turn take far more than the budget left, as vLLM's does
    # (min(response_length, prompt_length + response_length - len(prompt))).
    manager = manager_for(micro_dir, max_new_tokens=400)
    budget, cap = 120, 32
    tasks = load_tasks(tasks_path)[:3]
    outputs = run_all(lambda: loops(micro_dir, client.url, token_file, manager, 3, response_length=budget, max_new_tokens=cap),
                      rows_for(tasks))
    asked = [call["sampling_params"].get("max_tokens") for call in manager.calls]
    assert asked and all(isinstance(n, int) and 1 <= n <= cap for n in asked), asked
    tokenizer = load_processor(micro_dir).tokenizer
    for output in outputs:
        assert len(output.response_ids) == len(output.response_mask) <= budget
        # The text the env scored is exactly the policy's tokens the trainer keeps, turn by turn.
        written, run, previous = [], [], None
        for token, mask in zip(output.response_ids, output.response_mask):
            if mask == 1:
                run.append(token)
            elif previous == 1:
                written.append(run)
                run = []
            previous = mask
        if run:
            written.append(run)
        turns = [t["text"] for t in output.extra_fields["vistool_trajectory"]["turns"] if t["role"] == "assistant"]
        assert [tokenizer.decode(ids, skip_special_tokens=False).removesuffix("<|im_end|>") for ids in written] == turns


def test_the_rollout_server_sees_the_images_at_the_size_limits_the_prompt_was_built_with(tasks_path, micro_dir, env_server, monkeypatch):
    client, token_file, _ = env_server
    manager = manager_for(micro_dir, max_new_tokens=16)
    # The env server is told the same limits (options.pixel_bounds), so crop reads boxes in the image as shown.
    started: list[dict] = []
    start_episodes = EnvClient.start_episodes

    def recording(self, items, *args, **kwargs):
        started.extend(items)
        return start_episodes(self, items, *args, **kwargs)

    monkeypatch.setattr(EnvClient, "start_episodes", recording)
    # The task images are 112x112 (64 patches, 16 image tokens at the processor's defaults); these
    # limits give 4. A server that processed the images at its defaults would not match the prompt.
    limits = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    outputs = run_all(lambda: loops(micro_dir, client.url, token_file, manager, 2, mm_processor_kwargs=limits),
                      rows_for(load_tasks(tasks_path)[:2]))
    image_pad = load_processor(micro_dir).tokenizer.convert_tokens_to_ids("<|image_pad|>")
    for output in outputs:
        assert output.mm_processor_kwargs == limits
        assert output.prompt_ids.count(image_pad) == 4
    assert manager.calls and all(call["mm_processor_kwargs"] == limits for call in manager.calls)
    assert len(started) == 2 and all(item["options"]["pixel_bounds"] == limits for item in started)
    # Without data.mm_processor_kwargs the bounds are the processor's own (size shortest_edge/longest_edge).
    [plain] = loops(micro_dir, client.url, token_file, manager, 1)
    size = load_processor(micro_dir).image_processor.size
    assert plain.pixel_bounds() == {"min_pixels": size["shortest_edge"], "max_pixels": size["longest_edge"]}


@pytest.fixture()
def expiring_env_server(tmp_path, tasks_path):
    """A real env server whose episodes expire after 1 s idle."""
    token_file = tmp_path / "token"
    server = subprocess.Popen(["node", str(repo_root() / "bin" / "vistool.js"), "serve", "--port", "0", "--token-file", str(token_file),
                               "--root", str(tasks_path.parent), "--images-dir", str(tmp_path / "images"), "--idle-timeout", "1",
                               "--quiet"], cwd=repo_root(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["url"]
        EnvClient(url, token_file.read_text().strip()).health()
        yield url, token_file
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_an_episode_the_env_server_lost_fails_the_rollout_instead_of_scoring_0(tasks_path, micro_dir, expiring_env_server):
    url, token_file = expiring_env_server
    # A rollout server slower than the env's idle timeout: the episode expires while the policy writes.
    manager = manager_for(micro_dir, max_new_tokens=8, delay_s=2.5)
    with pytest.raises(EnvServerError, match=r"could not (take turn|score).*HTTP 404.*expired"):
        run_all(lambda: loops(micro_dir, url, token_file, manager, 1), rows_for(load_tasks(tasks_path)[:1]))


def test_a_loopback_env_server_is_refused_for_a_run_on_several_nodes(micro_dir, env_server):
    client, token_file, _ = env_server
    manager = manager_for(micro_dir)
    with pytest.raises(ValueError, match=r"loopback address.*trainer.nnodes=2.*every node reaches"):
        loops(micro_dir, client.url, token_file, manager, 1, nnodes=2)


REGISTRY_CHECK = """
import sys
from omegaconf import OmegaConf
from verl.experimental.agent_loop import agent_loop as verl_agent_loop
if sys.argv[1] == "recipe-first":
    # What veRL's AgentLoopWorker does before it makes the first loop: agent_loop.yaml into the registry.
    for entry in OmegaConf.create(sys.argv[2]):
        verl_agent_loop._agent_loop_registry[entry.name] = entry
import vistool_verl.agent_loop  # imported when hydra instantiates the first loop
entry = verl_agent_loop._agent_loop_registry["vistool_agent"]
print(OmegaConf.to_yaml(OmegaConf.create(dict(entry))) if not isinstance(entry, dict) else entry)
"""


def test_the_recipe_s_keys_survive_the_import_that_makes_the_first_loop():
    recipe = ('[{"name": "vistool_agent", "_target_": "vistool_verl.agent_loop.VistoolAgentLoop", "max_turns": 3, '
              '"presentation": {"system_prompt": "Answer briefly."}}]')
    import sys

    def registry_after(mode: str) -> str:
        done = subprocess.run([sys.executable, "-c", REGISTRY_CHECK, mode, recipe], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout
    kept = registry_after("recipe-first")
    assert "Answer briefly." in kept and "max_turns: 3" in kept, kept
    # Without a recipe the import registers the loop by its class, as veRL's own decorator does.
    assert registry_after("import-only").strip() == "{'_target_': 'vistool_verl.agent_loop.VistoolAgentLoop'}"


def test_a_loopback_env_server_is_refused_when_veRL_spreads_the_workers_over_several_ray_nodes(micro_dir, env_server):
    """M3 of issue 41: veRL 0.9.1 places agent-loop workers round-robin on every live Ray node with
    CPUs (AgentLoopManager._init_agent_loop_workers), whatever trainer.nnodes says. Ray's cluster
    state is the external boundary here: `ray.nodes()` is given as the list it returns."""
    from vistool_verl.env_session import EnvAddress, agent_loop_worker_nodes

    head_without_gpus = {"NodeID": "head", "Alive": True, "Resources": {"CPU": 8.0}}
    gpu_node = {"NodeID": "gpu", "Alive": True, "Resources": {"CPU": 64.0, "GPU": 8.0}}
    dead = {"NodeID": "gone", "Alive": False, "Resources": {"CPU": 8.0}}
    no_cpu = {"NodeID": "acc", "Alive": True, "Resources": {"GPU": 1.0}}
    assert agent_loop_worker_nodes(8, [head_without_gpus, gpu_node, dead, no_cpu]) == 2
    assert agent_loop_worker_nodes(1, [head_without_gpus, gpu_node]) == 1  # one worker sits on one node
    assert agent_loop_worker_nodes(8, [gpu_node, dead]) == 1
    assert agent_loop_worker_nodes(8) == 1  # no Ray in this process: the loop runs where it is made
    client, token_file, _ = env_server
    address = EnvAddress.resolve(client.url, str(token_file))
    address.refuse_loopback_across_nodes(1, 1)
    with pytest.raises(ValueError, match=r"trainer.nnodes=1 and its agent-loop workers go to 2 Ray node\(s\).*every node reaches"):
        address.refuse_loopback_across_nodes(1, agent_loop_worker_nodes(8, [head_without_gpus, gpu_node]))
