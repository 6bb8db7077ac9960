"""A veRL rollout replica backed by transformers, registered as rollout `name=hf`: the stand-in for
vLLM in the CPU end-to-end test (vLLM builds that fit veRL 0.9.1 need a GPU or a torch PyPI does
not serve; docs/VERL.md, "veRL's trainer on CPU").

Two halves, as veRL splits its vLLM replica:
- `TransformersServer`, a Ray actor per replica, named `hf_server_<replica>_0`: it loads the model
  from `actor_rollout_ref.model.path` and answers veRL's token-in/token-out `generate` with
  `vistool_verl.transformers_server.TransformersGenerator`, tagging each answer with the weight
  version (`extra_fields["global_steps"]`) as vLLM's server does.
- `TransformersServerAdapter`, the rollout object inside each training worker
  (`verl.workers.rollout.base._ROLLOUT_REGISTRY[("hf", "async")]`, a private table: veRL is pinned
  exactly). After every optimizer step veRL hands it the actor's full tensors; it sends them to
  the server, which loads them, so the next rollouts sample from the updated policy.

It serves one replica of one worker (tensor parallel 1): enough for the test, not for training.
"""
from __future__ import annotations

import asyncio
import os
from typing import Any, Generator

import ray
import torch
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, TokenOutput

ROLLOUT_NAME = "hf"


def model_folder(model_config: Any) -> str:
    """The model folder: veRL hands the replica its model section as a DictConfig (`path`) or as HFModelConfig (`local_path`)."""
    local = getattr(model_config, "local_path", None) if not hasattr(model_config, "get") else model_config.get("local_path")
    return str(local or model_config.path)


def server_name(replica_rank: int) -> str:
    return f"{ROLLOUT_NAME}_server_{replica_rank}_0"


class TransformersServer:
    """The rollout server: one model, one generate at a time (torch already uses every core)."""

    def __init__(self, model_path: str, prompt_length: int, response_length: int, seed: int, threads: int):
        from transformers import AutoModelForImageTextToText

        from ..processor import load_processor
        from ..transformers_server import TransformersGenerator

        torch.set_num_threads(max(int(threads), 1))
        self.model = AutoModelForImageTextToText.from_pretrained(model_path, dtype=torch.float32, attn_implementation="sdpa")
        self.generator = TransformersGenerator(self.model, load_processor(model_path), default_max_tokens=response_length, seed=seed)
        self.prompt_length = prompt_length
        self.response_length = response_length
        self.global_steps: int | None = None
        self.weight_updates = 0
        self._lock = asyncio.Lock()

    async def generate(self, prompt_ids: list[int], sampling_params: dict[str, Any], request_id: str,
                       image_data: list[Any] | None = None, video_data: Any = None, audio_data: Any = None,
                       mm_processor_kwargs: dict[str, Any] | None = None, **_: Any) -> TokenOutput:
        if video_data is not None or audio_data is not None:
            raise NotImplementedError("the transformers rollout stand-in takes images only")
        # vLLM's default budget when the caller names none: the rest of the response, within the context.
        default = min(self.response_length, self.prompt_length + self.response_length - len(prompt_ids))
        async with self._lock:
            output = await asyncio.to_thread(self.generator.generate, list(prompt_ids), dict(sampling_params), image_data,
                                             mm_processor_kwargs, max(default, 1))
        output.extra_fields = {"global_steps": self.global_steps}
        return output

    async def load_weights(self, weights: dict[str, torch.Tensor], global_steps: int | None) -> dict[str, int]:
        """The actor's tensors, by the names transformers saves them under; every one must land."""
        async with self._lock:
            own = self.model.state_dict()
            unknown = sorted(set(weights) - set(own))
            if unknown:
                raise KeyError(f"the actor sent tensors the rollout model does not have: {unknown[:5]}")
            with torch.no_grad():
                for name, tensor in weights.items():
                    own[name].copy_(tensor.to(own[name].dtype))
            self.weight_updates += 1
            self.global_steps = global_steps
        return {"tensors": len(weights), "model_tensors": len(own)}

    async def set_global_steps(self, global_steps: int) -> None:
        self.global_steps = global_steps

    async def status(self) -> dict[str, Any]:
        return {"global_steps": self.global_steps, "weight_updates": self.weight_updates}

    # The rest of veRL's server interface: nothing to free or pause on CPU.
    async def wake_up(self, tags: list[str] | None = None) -> None:
        return None

    async def sleep(self) -> None:
        return None

    async def clear_kv_cache(self) -> None:
        return None

    async def release_kv_cache(self) -> None:
        return None

    async def resume_kv_cache(self) -> None:
        return None

    async def abort_all_requests(self, reject_request: bool = False, **_: Any) -> dict[str, Any]:
        return {"aborted_count": 0, "request_ids": []}

    async def resume_generation(self) -> None:
        return None

    async def abort_request(self, request_id: str, **_: Any) -> dict[str, Any]:
        return {"aborted": False, "request_id": request_id}

    async def start_profile(self, **_: Any) -> None:
        return None

    async def stop_profile(self) -> None:
        return None


class TransformersReplica(RolloutReplica):
    async def launch_servers(self) -> None:
        if self.world_size != 1:
            raise ValueError(f"the transformers rollout stand-in serves one worker per replica; this replica has {self.world_size} "
                             "(set actor_rollout_ref.rollout.tensor_model_parallel_size=1)")
        threads = int(os.environ.get("VISTOOL_ROLLOUT_THREADS", "1"))
        server = ray.remote(TransformersServer).options(name=server_name(self.replica_rank), num_cpus=0,
                                                        max_concurrency=self.max_concurrency).remote(
            model_folder(self.model_config), self.config.prompt_length, self.config.response_length, self.config.seed, threads)
        await server.status.remote()  # the model is loaded once this answers
        self.servers = [server]
        self._server_handle = server
        self._server_address = server_name(self.replica_rank)  # no HTTP endpoint: veRL reaches it by handle


class TransformersServerAdapter(BaseRollout):
    """The rollout inside a training worker: hands the actor's weights to its replica's server."""

    def __init__(self, config: Any, model_config: Any, device_mesh: Any = None, replica_rank: int = -1, **_: Any):
        super().__init__(config, model_config, device_mesh)
        rank = int(os.environ.get("RANK", "0"))
        self.replica_rank = rank if replica_rank == -1 else replica_rank
        self.is_leader_rank = True
        self._server = None

    def _server_handle(self):
        if self._server is None:
            self._server = ray.get_actor(server_name(self.replica_rank))
        return self._server

    async def update_weights(self, weights: Generator[tuple[str, torch.Tensor], None, None], wire_format: str = "named_tensors",
                             global_steps: int | None = None, **_: Any) -> None:
        if wire_format != "named_tensors":
            raise NotImplementedError(f"the transformers rollout stand-in takes full tensors (named_tensors), not {wire_format!r}")
        state = {name: tensor.detach().to("cpu", copy=True) for name, tensor in weights}
        await self._server_handle().load_weights.remote(state, global_steps)

    async def resume(self, tags: list[str]) -> None:
        return None

    async def release(self) -> None:
        return None
