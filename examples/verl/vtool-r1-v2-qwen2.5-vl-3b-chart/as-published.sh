#!/usr/bin/env bash
# VTool-R1 v2's chart recipe for Qwen2.5-VL-3B, as its authors published it, on vistool's bridge.
# Source: github.com/VTool-R1/training-v2 at commit d2aa28353ec10c7f91b39f502925003a81d6982d,
#   recipe/vtool/run_qwen2_5_vl_3b_chart.sh and recipe/vtool/refocus_multiturn_grpo.yaml.
# run.sh (the export of examples/vtool-r1-v2-qwen2.5-vl-3b-chart.vistool.json) carries every setting a
# vistool run config can say: GRPO, 8 rollouts, batch 32, mini-batch 16, micro-batch 2, lr 1e-6, clip
# 0.2/0.2, no KL, 3 assistant turns with one image edit, float16, an LLM judge alone as the reward
# (rewards.judge, mode replace, at http://127.0.0.1:8000/v1 as the recipe's VTOOL_JUDGE_* defaults),
# validation before training and every 5 steps, a checkpoint every 20 steps. The overrides below are
# the rest, each from the source (file: setting):
#   weight decay 0.01          ppo_trainer.yaml default the recipe keeps (vistool's RL has none)
#   tensor parallel 1          run_qwen2_5_vl_3b_chart.sh: actor_rollout_ref.rollout.tensor_model_parallel_size=1
#   prompt and response 8192   run_qwen2_5_vl_3b_chart.sh: data.max_prompt_length=8192 data.max_response_length=8192
#   15 epochs, no step cap     run_qwen2_5_vl_3b_chart.sh: trainer.total_epochs=15
#   rollout correction         run_qwen2_5_vl_3b_chart.sh: ROLLOUT_CORRECTION_IS=token, threshold 2.0
#   gradient checkpointing     run_qwen2_5_vl_3b_chart.sh: actor_rollout_ref.model.enable_gradient_checkpointing=True
#   dynamic batch sizes        run_qwen2_5_vl_3b_chart.sh: use_dynamic_bsz=True, 24576 tokens per GPU
# What stays different (docs/VERL.md, "Recipes"): vistool's env server runs the tools and parses the
# model's calls (VTool's loop executes one Python refocus action), and the judge sees vistool's
# extracted answer with vistool's judge prompt (env/rewards/judge-prompt.md), not VTool's GRADING_QUERY.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$DIR/run.sh" \
  actor_rollout_ref.actor.optim.weight_decay=0.01 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
  data.max_prompt_length=8192 data.max_response_length=8192 \
  trainer.total_training_steps=null trainer.total_epochs=15 \
  algorithm.rollout_correction.rollout_is=token algorithm.rollout_correction.rollout_is_threshold=2.0 \
  algorithm.rollout_correction.rollout_is_batch_normalize=false algorithm.rollout_correction.bypass_mode=false \
  algorithm.rollout_correction.loss_type=ppo_clip \
  actor_rollout_ref.model.enable_gradient_checkpointing=true \
  actor_rollout_ref.actor.use_dynamic_bsz=true actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24576 \
  actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=24576 \
  actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=24576 \
  "$@"
