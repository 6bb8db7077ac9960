#!/usr/bin/env bash
# veRL's own trainer (FSDP actor, async vLLM rollouts) on the micro Qwen2.5-VL for a few steps,
# with the vistool agent loop and reward. For a GPU machine with no network: everything it needs
# must already be there.
#
#   VERL_PY     a python whose environment has verl[vllm]==0.9.1, vistool-verl and vistool-trainer
#               (--no-deps) installed; torchvision comes with the vllm extra
#   OUT         the run directory (default runs/verl-gpu-smoke)
#   STEPS       training steps (default 4)
#
# NOT RUN YET: no GPU was lent to the session that wrote it. The CPU path (`make verl-smoke`,
# `make test-verl`) is tested; this script is the prepared next check. docs/VERL.md says what it
# covers and what it does not.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
VERL_PY="${VERL_PY:-$REPO/.venv-verl/bin/python}"
OUT="$(mkdir -p "${OUT:-$REPO/runs/verl-gpu-smoke}" && cd "${OUT:-$REPO/runs/verl-gpu-smoke}" && pwd)"
STEPS="${STEPS:-4}"
cd "$REPO"

# 1. Tasks, a saved micro model and the parquet rows (nothing downloaded).
node bin/vistool.js data gen --kind vbar --n 32 --seed 1 --difficulty 1 --image-size 112x112 --out "$OUT/data/train"
node bin/vistool.js data gen --kind vbar --n 8 --seed 2 --split test --difficulty 1 --image-size 112x112 --out "$OUT/data/val"
"$VERL_PY" - "$OUT" <<'PY'
import sys
from pathlib import Path
from vistool_trainer.model.micro_model import MicroSize, build_micro_policy, save_policy
from vistool_trainer.rollouts.env_client import gold_transcripts
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.train import task_corpus
out = Path(sys.argv[1])
tasks = load_tasks(out / "data/train/tasks.jsonl")
model, processor = build_micro_policy(task_corpus(tasks, gold_transcripts(tasks)), MicroSize(), 1)
save_policy(model, processor, out / "model")
PY
"$VERL_PY" -m vistool_verl data convert --to verl "$OUT/data/train" --out "$OUT/data/train.parquet"
"$VERL_PY" -m vistool_verl data convert --to verl "$OUT/data/val" --out "$OUT/data/val.parquet" --split val

# 2. The env server, on loopback with a token; its images go into the run directory.
mkdir -p "$OUT/images"
MALLOC_MMAP_THRESHOLD_=65536 node bin/vistool.js serve --port 0 --token-file "$OUT/env-token" --images-dir "$OUT/images" \
  --root "$OUT/data/train" --root "$OUT/data/val" --quiet > "$OUT/env-server.out" 2> "$OUT/env-server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/env-server.out" ] && break; sleep 0.1; done
export VISTOOL_ENV_URL="$("$VERL_PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["url"])' "$OUT/env-server.out")"
export VISTOOL_ENV_TOKEN_FILE="$OUT/env-token"
# The run directory as the workbench reads it: veRL's file logger writes metrics.jsonl, the agent
# loop writes rollouts/step-N.jsonl (and val-step-N.jsonl) as each group ends (docs/VERL.md).
export VISTOOL_RUN_DIR="$OUT" VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

cat > "$OUT/agent_loop.yaml" <<YAML
- name: vistool_agent
  _target_: vistool_verl.agent_loop.VistoolAgentLoop
  max_turns: 3
  max_tool_calls: 2
  use_tools: true
YAML

# 3. veRL's trainer: GRPO with DAPO's asymmetric clip and dynamic sampling, 1 GPU, a few steps.
"$VERL_PY" -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo algorithm.use_kl_in_reward=false \
  algorithm.filter_groups.enable=true algorithm.filter_groups.metric=acc algorithm.filter_groups.max_num_gen_batches=4 \
  data.train_files="$OUT/data/train.parquet" data.val_files="$OUT/data/val.parquet" data.image_key=images \
  data.train_batch_size=8 data.max_prompt_length=3328 data.max_response_length=768 data.return_raw_chat=true \
  actor_rollout_ref.model.path="$OUT/model" actor_rollout_ref.actor.optim.lr=1e-4 \
  actor_rollout_ref.actor.ppo_mini_batch_size=8 actor_rollout_ref.actor.clip_ratio_low=0.2 actor_rollout_ref.actor.clip_ratio_high=0.28 \
  actor_rollout_ref.actor.loss_agg_mode=token-mean actor_rollout_ref.actor.use_kl_loss=false \
  actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.n=4 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.3 actor_rollout_ref.rollout.multi_turn.enable=true \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns=3 \
  actor_rollout_ref.rollout.agent.default_agent_loop=vistool_agent \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$OUT/agent_loop.yaml" \
  reward.custom_reward_function.path="$REPO/verl_bridge/vistool_verl/reward.py" reward.custom_reward_function.name=compute_score \
  trainer.n_gpus_per_node=1 trainer.nnodes=1 trainer.total_training_steps="$STEPS" trainer.save_freq=-1 trainer.test_freq=-1 \
  trainer.logger='[console,file]' trainer.rollout_data_dir="$OUT/verl-rollouts" \
  trainer.project_name=vistool trainer.experiment_name=verl-gpu-smoke "$@" 2>&1 | tee "$OUT/verl.log"
