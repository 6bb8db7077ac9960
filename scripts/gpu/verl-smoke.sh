#!/usr/bin/env bash
# veRL's own trainer (FSDP2 actor, async vLLM rollouts) on the micro Qwen2.5-VL for a few steps,
# with the vistool agent loop and reward, on one GPU; then the checks `make verl-e2e` makes on CPU
# (docs/VERL.md). For a GPU machine: everything it needs must already be installed.
#
#   VERL_PY     a python with veRL 0.9.1's vLLM extra and the bridge's other dependencies:
#                 pip install 'verl[vllm]==0.9.1' TransferQueue==0.1.11 pyzmq msgspec cachetools fastapi uvicorn
#               (TransferQueue is veRL's `verl-core` extra, which main_ppo's v1 trainer imports; the vllm
#               extra brings torch 2.11, transformers 5.9 and torchvision). The bridge and the trainer
#               package come from this checkout on PYTHONPATH (as the exported run.sh does).
#   OUT         the run directory (default runs/verl-gpu-smoke)
#   STEPS       training steps (default 4)
#
# NOT RUN YET on a GPU. On CPU the same trainer runs with a transformers stand-in for vLLM
# (`make verl-e2e`), which is where every fix below was found and checked. What this adds: vLLM
# itself, with
#   - the image size limits (data.mm_processor_kwargs, small here so that they bind: 112x112 task
#     images at max 56x56 are 4 image tokens, not 16). The agent loop passes them to vLLM with every
#     generate; a vLLM that ignored them would see 16-token images the trainer scores as 4;
#   - the weight versions vLLM tags each answer with (min/max_global_steps), which the loop keeps;
#     veRL's v1 trainer crashes on the first step without them;
#   - the per-turn cap (agent_loop.yaml max_new_tokens) under vLLM's own default budget;
#   - fp32 on both sides, so training/rollout_probs_diff_max measures the data path (bound below).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
VERL_PY="${VERL_PY:-$REPO/.venv-verl/bin/python}"
OUT="$(mkdir -p "${OUT:-$REPO/runs/verl-gpu-smoke}" && cd "${OUT:-$REPO/runs/verl-gpu-smoke}" && pwd)"
STEPS="${STEPS:-4}"
# vLLM fp32 against the fp32 actor: the same weights and inputs, different kernels.
PROBS_DIFF_BOUND="${PROBS_DIFF_BOUND:-0.02}"
cd "$REPO"
export PYTHONPATH="$REPO/verl_bridge:$REPO/trainer${PYTHONPATH:+:$PYTHONPATH}"

"$VERL_PY" -c 'import verl, transfer_queue, vllm, torchvision; assert verl.__version__ == "0.9.1", verl.__version__' \
  || { echo "verl-smoke.sh: $VERL_PY lacks veRL 0.9.1, TransferQueue, vLLM or torchvision (see the header)" >&2; exit 1; }

# 1. Tasks, a warmed-up micro model and the parquet rows (nothing downloaded): `vistool_verl e2e
#    --prepare-only` makes the same data, model (format warm-up) and agent_loop.yaml as the CPU e2e.
"$VERL_PY" -m vistool_verl e2e --out "$OUT" --steps "$STEPS" --prepare-only
cp "$OUT/data/train.parquet" "$OUT/data/val.parquet"

# 2. The env server, on loopback with a token; its images go into the run directory.
mkdir -p "$OUT/images"
MALLOC_MMAP_THRESHOLD_=65536 node bin/vistool.js serve --port 0 --token-file "$OUT/env-token" --images-dir "$OUT/images" \
  --root "$OUT/data/train" --root "$OUT/data/warm-up" --quiet > "$OUT/env-server.out" 2> "$OUT/env-server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/env-server.out" ] && break; sleep 0.1; done
export VISTOOL_ENV_URL="$("$VERL_PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["url"])' "$OUT/env-server.out")"
export VISTOOL_ENV_TOKEN_FILE="$OUT/env-token"
# The run directory as the workbench reads it: veRL's file logger writes metrics.jsonl, the agent
# loop writes rollouts/step-N.jsonl (and val-step-N.jsonl) as each group ends (docs/VERL.md).
export VISTOOL_RUN_DIR="$OUT" VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

# 3. veRL's trainer: GRPO with DAPO's asymmetric clip, 1 GPU, a few steps.
"$VERL_PY" -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo algorithm.use_kl_in_reward=false \
  data.train_files="$OUT/data/train.parquet" data.val_files="$OUT/data/val.parquet" data.image_key=images \
  data.train_batch_size=4 data.max_prompt_length=512 data.max_response_length=512 data.return_raw_chat=true \
  +data.mm_processor_kwargs.min_pixels=784 +data.mm_processor_kwargs.max_pixels=3136 \
  actor_rollout_ref.model.path="$OUT/model" actor_rollout_ref.actor.optim.lr=1e-3 actor_rollout_ref.actor.optim.weight_decay=0.0 \
  actor_rollout_ref.actor.ppo_mini_batch_size=4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.actor.clip_ratio_low=0.2 actor_rollout_ref.actor.clip_ratio_high=0.28 \
  actor_rollout_ref.actor.loss_agg_mode=token-mean actor_rollout_ref.actor.use_kl_loss=false \
  actor_rollout_ref.actor.fsdp_config.dtype=float32 +actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype=fp32 \
  actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.n=4 \
  actor_rollout_ref.rollout.dtype=float32 actor_rollout_ref.rollout.calculate_log_probs=true \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 +actor_rollout_ref.rollout.limit_images=3 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.3 actor_rollout_ref.rollout.multi_turn.enable=true \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns=3 \
  actor_rollout_ref.rollout.agent.default_agent_loop=vistool_agent \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$OUT/agent_loop.yaml" \
  reward.custom_reward_function.path="$REPO/verl_bridge/vistool_verl/reward.py" reward.custom_reward_function.name=compute_score \
  trainer.n_gpus_per_node=1 trainer.nnodes=1 trainer.total_training_steps="$STEPS" trainer.total_epochs="$STEPS" \
  trainer.save_freq=-1 trainer.test_freq=-1 trainer.val_before_train=false \
  trainer.logger='[console,file]' trainer.project_name=vistool trainer.experiment_name=verl-gpu-smoke "$@" 2>&1 | tee "$OUT/verl.log"

# 4. The checks of the CPU e2e on this run directory (veRL's names, rollouts with images, the
#    advantages recomputed from the env's rewards, a non-zero gradient), with vLLM's bound.
"$VERL_PY" - "$OUT" "$PROBS_DIFF_BOUND" <<'PY'
import json, sys
from pathlib import Path
out, bound = Path(sys.argv[1]), float(sys.argv[2])
rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
train = [r for r in rows if "training/rollout_probs_diff_max" in r["data"]]
for r in train:
    d = r["data"]
    print(json.dumps({"step": r["step"], "rollout_probs_diff_max": d["training/rollout_probs_diff_max"],
                      "rollout_probs_diff_mean": d.get("training/rollout_probs_diff_mean"), "grad_norm": d.get("actor/grad_norm"),
                      "score_mean": d.get("critic/score/mean"), "advantages_max": d.get("critic/advantages/max")}))
worst = max(r["data"]["training/rollout_probs_diff_max"] for r in train)
assert worst <= bound, f"rollout vs trainer: rollout_probs_diff_max {worst} > {bound}"
assert any(r["data"].get("actor/grad_norm", 0) > 0 for r in train), "no step had a non-zero gradient"
print(f"verl-smoke.sh: {len(train)} steps, rollout_probs_diff_max <= {worst:.3g}")
PY
VISTOOL_VERL_E2E_DIR="$OUT" VISTOOL_VERL_E2E_STEPS="$STEPS" "$VERL_PY" -m pytest -q verl_bridge/e2e_tests -k "not scores_the_sampled_tokens and not run_finished"
