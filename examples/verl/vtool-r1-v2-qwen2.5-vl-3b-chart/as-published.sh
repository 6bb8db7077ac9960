#!/usr/bin/env bash
# VTool-R1 v2's chart recipe for Qwen2.5-VL-3B, with the source's own settings, on vistool's bridge.
# Source: github.com/VTool-R1/training-v2 at commit d2aa28353ec10c7f91b39f502925003a81d6982d,
#   recipe/vtool/run_qwen2_5_vl_3b_chart.sh (S below, with its line), recipe/vtool/refocus_multiturn_grpo.yaml
#   (Y), recipe/vtool/vtool.py and the fork's own verl/trainer/config/ppo_trainer.yaml (P) for what they leave unset.
# run.sh (the export of examples/vtool-r1-v2-qwen2.5-vl-3b-chart.vistool.json) carries what a vistool run
# config can say: GRPO, 8 rollouts, batch 32, mini-batch 16, micro-batch 2, lr 1e-6, clip 0.2/0.2, no KL,
# float16, at most 2 assistant turns with one image edit and only the final answer trained (rl.train_turns
# 'final': vtool.py masks the tool-call turn), an LLM judge alone as the reward, validation before training
# and every 5 steps, a checkpoint every 20 steps. The overrides below set the rest as the source does:
#   weight decay 0.01                 P: optim.weight_decay 0.01, which the recipe keeps (vistool's RL has none)
#   tensor parallel 1                 S:78 actor_rollout_ref.rollout.tensor_model_parallel_size=1
#   prompt and response 8192          S:101-102 data.max_prompt_length=8192 data.max_response_length=8192
#   15 epochs, no step cap            S:100 trainer.total_epochs=15
#   rollout correction                S:82-88 (ROLLOUT_CORRECTION_* defaults, S:34-40): token IS at 2.0, no RS
#   gradient checkpointing            S:75
#   dynamic batch sizes               S:57-58, 61-62, 65-66: 24576 tokens per GPU (S:29-30)
#   log-prob micro-batches 2          S:59, 63 (LOG_PROB_MICRO_BATCH_SIZE_PER_GPU, S:25)
#   rollout log-probs                 S:64 actor_rollout_ref.rollout.calculate_log_probs=True
#   remove padding, FSDP prefetch     S:52, 54
#   no offload                        S:76-77, 79
#   vLLM engine                       S:68 (0.8, S:26), S:70-72, S:74, S:80 (32768, S:27), S:81 (cudagraph sizes, S:33)
#   4 agent-loop workers              S:73 (S:31)
#   validation: whole set, shuffled   S:49 data.validation_shuffle=True; P: data.val_max_samples -1 (run.sh: eval.n 500)
#   every checkpoint kept             P: trainer.max_actor_ckpt_to_keep null (run.sh: checkpoint.keep 3)
#   the trainer's timeouts            S:89 ray_wait_register_center_timeout=2000; Y:33 nccl_timeout 86400000
#   names                             S:93-94 project vtool, experiment 3b_chart_fp16
#   multi-turn keys                   Y:44-48 (hermes format, no sanity check, 3 user turns), Y:50 free_cache_engine
#   Ray CPUs                          S:103 (40, S:42)
#   no fixed data seed                P: data.seed null (run.sh: seed 1)
# Not reproduced, each with its reason (examples/verl/README.md lists every difference with its source line):
#   S:92 trainer.logger console+wandb: vistool keeps console+file (the run's metrics.jsonl); add wandb with
#     trainer.logger='[console,file,wandb]' after `wandb login`.
#   S:97 trainer.use_legacy_worker_impl: the fork's key; veRL 0.9.1 has none.
#   actor_rollout_ref.rollout.seed: veRL 0.9.1's key (run.sh: seed 1); the fork has none, so its engine's own default applies.
#   Y:41-42, Y:24-29 the vtool_agent loop and VToolRewardManager: vistool's env server runs the tools, and its
#     judge scores the answer (rewards.judge).
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$DIR/run.sh" \
  actor_rollout_ref.actor.optim.weight_decay=0.01 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
  data.max_prompt_length=8192 data.max_response_length=8192 \
  trainer.total_training_steps=null trainer.total_epochs=15 \
  algorithm.rollout_correction.rollout_is=token algorithm.rollout_correction.rollout_is_threshold=2.0 \
  algorithm.rollout_correction.rollout_is_batch_normalize=false algorithm.rollout_correction.rollout_rs=null \
  algorithm.rollout_correction.rollout_rs_threshold=null algorithm.rollout_correction.bypass_mode=false \
  algorithm.rollout_correction.loss_type=ppo_clip \
  actor_rollout_ref.model.enable_gradient_checkpointing=true \
  actor_rollout_ref.actor.use_dynamic_bsz=true actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24576 \
  actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=24576 \
  actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=24576 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 \
  actor_rollout_ref.rollout.calculate_log_probs=true \
  actor_rollout_ref.model.use_remove_padding=true actor_rollout_ref.actor.fsdp_config.forward_prefetch=true \
  actor_rollout_ref.actor.fsdp_config.param_offload=false actor_rollout_ref.actor.fsdp_config.optimizer_offload=false \
  actor_rollout_ref.ref.fsdp_config.param_offload=false \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.8 actor_rollout_ref.rollout.enable_chunked_prefill=true \
  actor_rollout_ref.rollout.enable_prefix_caching=true actor_rollout_ref.rollout.enforce_eager=false \
  actor_rollout_ref.rollout.skip_tokenizer_init=false actor_rollout_ref.rollout.max_num_batched_tokens=32768 \
  '+actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_capture_sizes=[1,2,4,8,16]' \
  actor_rollout_ref.rollout.agent.num_workers=4 \
  data.validation_shuffle=true data.val_max_samples=-1 \
  trainer.max_actor_ckpt_to_keep=null \
  trainer.ray_wait_register_center_timeout=2000 actor_rollout_ref.nccl_timeout=86400000 \
  trainer.project_name=vtool trainer.experiment_name=3b_chart_fp16 \
  actor_rollout_ref.rollout.multi_turn.format=hermes actor_rollout_ref.rollout.multi_turn.tokenization_sanity_check_mode=disable \
  actor_rollout_ref.rollout.multi_turn.max_user_turns=3 actor_rollout_ref.rollout.free_cache_engine=true \
  ray_kwargs.ray_init.num_cpus=40 \
  data.seed=null \
  "$@"
