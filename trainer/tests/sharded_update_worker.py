"""One GRPO update under a sharded strategy, checked against the same update made by one process.

Launched by test_sharded_training.py as `torchrun --nproc_per_node 2 sharded_update_worker.py
STRATEGY TASKS.jsonl OUT.json [lora|bf16|sliced|poison]` (lora: the micro policy with LoRA adapters, which alone
train; poison: rank 1's advantages are NaN, so its gradients and the global norm are, and the step must
be skipped on every rank with nothing moved; bf16: the policy in bfloat16 at an RL learning rate, reporting how many weights moved;
sliced: the LM head and softmax scored over slices of 3 positions, each recomputed in backward,
as a real vocabulary makes them). Each rank starts its own real env server and replays gold
trajectories through it (real edited images), so every rank holds the same 7 conversations with
fixed rewards. Rank 0 trains on 5 of them and rank 1 on 2 (micro-batches of 2: 3 against 1, so
rank 1 pads with zero-weight micro-batches), and every rank also computes, alone and replicated,
the update on all 7. Rank 0 writes both results to OUT.json.
"""
import copy
import json
import os
import sys
import tempfile
from pathlib import Path

import vistool_trainer  # noqa: F401  (OMP_WAIT_POLICY before torch loads)
import torch

from vistool_trainer.config import DistributedConfig, PolicyConfig, RlConfig, from_dict
from vistool_trainer.algorithms.advantages import group_advantages
from vistool_trainer.engines.distributed import Distributed, init_distributed
from vistool_trainer.rollouts.env_client import LocalEnvServer
from vistool_trainer.trainers.grpo import _update
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.rollout import EpisodeOptions, Rollout, load_tasks
from vistool_trainer.trainers.sft import gold_conversations
from vistool_trainer.engines.factory import make_training_engine
from vistool_trainer.engines.training_engine import TrainingEngine

REWARDS = [1.0, 0.0, 0.5, 0.2, 1.0, 0.0, 0.7]
GROUP = 7
# One group, one mini-batch, one epoch: a single optimizer step, the same in both runs.
RL = from_dict(RlConfig, {"loss_agg_mode": "token-mean", "micro_batch_size": 2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.28, "clip_ratio_c": 10.0,
      "kl_coef": 0.0, "kl_estimator": "k3", "max_grad_norm": 0.05, "temperature": 1.0, "group_size": GROUP,
      "ppo_mini_batch_size": None, "ppo_epochs": 1})


def whole_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: parameter.detach().clone() for name, parameter in model.named_parameters() if parameter.requires_grad}


def full_weights(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The trained copy's weights, gathered whole where they are sharded: FSDP's DTensors, and for
    ZeRO-3 DeepSpeed's fp32 master partitions (the optimizer's weights, not the model-dtype copy)."""
    weights = {}
    for name, parameter in module.named_parameters():
        if not parameter.requires_grad:
            continue
        if hasattr(parameter, "ds_id"):
            from deepspeed.utils import safe_get_full_fp32_param

            weights[name] = safe_get_full_fp32_param(parameter).detach().clone()
        else:
            weights[name] = (parameter.full_tensor() if hasattr(parameter, "full_tensor") else parameter).detach().clone()
    return weights


def changed_fraction(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor]) -> float:
    changed = sum(int((after[name] != before[name]).sum()) for name in before)
    return changed / sum(tensor.numel() for tensor in before.values())


def main() -> None:
    strategy, tasks_path, out_path = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "full"
    lora = {"enabled": True, "r": 4, "alpha": 8, "dropout": 0.0} if mode == "lora" else {"enabled": False}
    dtype, lr = ("bfloat16", 1e-6) if mode == "bf16" else ("float32", 1e-3)
    if mode == "sliced":
        from vistool_trainer.model import policy as policy_module

        policy_module.SCORING_CHUNK_ELEMENTS = 3 * 1024  # 3 positions of the micro vocabulary (at most 1,024 tokens) per slice
    torch.set_num_threads(1)
    torch.manual_seed(7)  # every rank draws the same LoRA initialisation (the trainer broadcasts rank 0's weights instead)
    dist = init_distributed("cpu")
    tasks = load_tasks(tasks_path)[:GROUP]
    options = EpisodeOptions(max_turns=4, max_tool_calls=2, presentation={"system_prompt": ""})
    with tempfile.TemporaryDirectory() as scratch:
        scratch_dir = Path(scratch)
        server = LocalEnvServer(tasks_path.parent.parent, scratch_dir / "images", scratch_dir / "token", scratch_dir / "server.log")
        client = server.__enter__()
        try:
            conversations = gold_conversations(client, tasks, options)
            gold = client.gold(tasks)
        finally:
            server.__exit__(None, None, None)
        corpus = [f"Question: {task['question']}" for task in tasks] + [turn for transcript in gold for turn in [*transcript["tool_turns"], transcript["answer"]]]
        policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}, "lora": lora, "dtype": dtype}), corpus, seed=3, device_name="cpu")
        if lora["enabled"]:  # peft starts B at zero; give the adapters weight so every LoRA gradient is non-zero
            with torch.no_grad():
                for name, parameter in policy.model.named_parameters():
                    if "lora_B" in name:
                        parameter.normal_(0, 0.02)
        rollouts = [Rollout(prompt_id="p", group=i, conversation=conversation, reward=reward)
                    for i, (conversation, reward) in enumerate(zip(conversations, REWARDS))]
        advantages = group_advantages(torch.tensor(REWARDS), ["p"] * GROUP)

        # The same update by one process on all seven rollouts (no collectives).
        alone = Policy(copy.deepcopy(policy.model), policy.processor, policy.device)
        # Replicated as `ddp` builds it, except that it steps the bf16 weights themselves (no fp32
        # masters): for the bf16 run that is the negative control, for fp32 runs nothing changes.
        alone_engine = TrainingEngine(alone, Distributed(), master_weights=False)
        alone_optimizer = alone_engine.make_optimizer(lr, 0.0, RL.max_grad_norm)
        alone_before = whole_weights(alone.model)
        alone_metrics = _update(alone, alone_engine, alone_optimizer, rollouts, advantages, RL, None, Distributed())
        alone_after = whole_weights(alone.model)

        share = slice(0, 5) if dist.rank == 0 else slice(5, GROUP)
        engine = make_training_engine(policy, from_dict(DistributedConfig, {"strategy": strategy}), dist)
        optimizer = engine.make_optimizer(lr, 0.0, RL.max_grad_norm)
        before = whole_weights(policy.model)
        master_before = full_weights(engine.module)
        own_advantages = advantages[share].clone()
        if mode == "poison" and dist.rank == 1:
            own_advantages.fill_(float("nan"))  # as an overflow in one rank's backward would leave its gradients
        metrics = _update(policy, engine, optimizer, rollouts[share], own_advantages, RL, None, dist, filler=rollouts[share][0])
        after = whole_weights(policy.model)
        master_after = full_weights(engine.module)
        engine.close()

    moved_fraction = {
        "alone": changed_fraction(alone_before, alone_after),
        "master": changed_fraction(master_before, master_after),
        "rollout_copy": changed_fraction(before, after),
    }
    dtypes = {"master": str(next(iter(master_after.values())).dtype), "rollout_copy": str(next(iter(after.values())).dtype)}
    difference = max(float((after[name] - alone_after[name]).abs().max()) for name in after)
    moved = max(float((after[name] - before[name]).abs().max()) for name in after)
    checksums = dist.gather(sum(float(weight.double().sum()) for weight in after.values()))
    if dist.is_main:
        out_path.write_text(json.dumps({"strategy": engine.strategy, "world": dist.world, "trained_tensors": len(after), "metrics": metrics, "alone_metrics": alone_metrics,
                                        "max_weight_difference": difference, "moved_fraction": moved_fraction, "dtypes": dtypes, "max_weight_change": moved, "checksums": checksums}))
    dist.close()
    # Leave without the interpreter's teardown. Once in about ten full-suite runs on 2 busy cores a
    # rank died with SIGABRT, "terminate called without an active exception": C++ std::terminate,
    # the message of a joinable thread destroyed, which is what a gloo or DeepSpeed worker thread
    # meets when the interpreter tears down. The checks are on the results written above; the
    # teardown is not under test. (If that abort ever came mid-run, this does not hide it.)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
