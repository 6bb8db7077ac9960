/**
 * One episode: a Gymnasium-style state machine over a task. `start` gives the first
 * observation (the system turn, the image, the question); `step` takes a model message or a
 * structured call and gives the next observation, whether the episode is done, and what
 * happened. Every turn is recorded as a trajectory in the rollout format.
 *
 * The episode applies its presentation (presentation/): each observation carries `prompt`, the
 * whole conversation exactly as the policy will read it before its next turn (the system turn the
 * presentation chose, earlier images the view hides, the order it shows parts in). Clients send
 * that to the policy and write no presentation of their own (docs/CONTRACTS.md).
 *
 * Model text is only ever parsed (env/actions) and tool arguments validated (env/tools);
 * nothing the model writes is executed.
 */
import { randomUUID } from 'node:crypto';
import { parseAction } from '../actions/parse.js';
import type { ActionExamples } from '../actions/examples.js';
import { examplesFor } from './task-examples.js';
import type { ParsedAction, ParseOptions } from '../actions/types.js';
import { actionError, type ActionError } from '../core/errors.js';
import type { RgbImage } from '../core/image.js';
import { releasePixels } from '../core/pixel-pool.js';
import type { PixelMetadata } from '../tools/metadata.js';
import { runToolCall, toolsAsOpenAIFunctions, toolsPromptBlock } from '../tools/registry.js';
import { offeredToolNames } from '../presentation/offered-tools.js';
import { DEFAULT_PRESENTATION, promptsOnlyGrow, type Presentation } from '../presentation/presentation.js';
import { systemTurnText } from '../presentation/system-turn.js';
import { presentConversation } from '../presentation/view.js';
import type { ToolCall, ToolContext } from '../tools/types.js';
import type { PixelBounds } from '../config/qwen-image-tokens.js';
import type { TaskRecord } from '../tasks/record.js';
import type { ImageStore, StoredImage } from './image-store.js';
import type { ChatMessage, ImagePart, Observation } from './messages.js';
import {
  noActionMessage,
  TOOLS_OFF_MESSAGE,
  errorObservationText,
  imageLimitMessage,
  pixelLimitMessage,
  questionText,
  systemPrompt,
  toolCallLimitMessage,
  toolObservationText,
} from './prompt.js';
import type { AssistantTurn, CallRecord, Trajectory } from './trajectory.js';
import { callTarget, zoomTargetIou, type CallScene } from './call-target.js';
import { scanTrajectory, type Finding } from './scanners/index.js';

export interface EpisodeLimits {
  /** Assistant messages before the episode ends without an answer. */
  maxTurns: number;
  /** Tool calls executed over the whole episode. */
  maxToolCalls: number;
  /** Images shown to the policy over the whole episode, the task image included. */
  maxImages: number;
  /** Largest image (width × height) the episode accepts or produces. */
  maxPixels: number;
}

export const DEFAULT_LIMITS: Readonly<EpisodeLimits> = { maxTurns: 6, maxToolCalls: 8, maxImages: 10, maxPixels: 4_000_000 };

export interface EpisodeOptions {
  limits?: Partial<EpisodeLimits>;
  /** false: the text-only arm — no tool list, tool calls are refused. */
  tools?: boolean;
  /** Put base64 PNG data in image parts (for clients that do not share the images folder). */
  inlineImages?: boolean;
  /** The system turn and the image view (presentation/presentation.ts); the env's own words and every image by default. */
  presentation?: Presentation;
  /**
   * Withhold tool results (the counterfactual replay, env/eval/counterfactual.ts): calls are parsed,
   * validated and run exactly as usual — the same observation text, the same errors, the same
   * counts — but the observation carries the image the message's calls read, unedited, and the
   * episode goes on from that image (a later call reads it too; a zoom's moved boxes are dropped).
   */
  withholdResults?: boolean;
  /**
   * The bounds the policy's processor resizes images into (policy.max_pixels and min_pixels):
   * crop reads boxes in the coordinates of the image so shown (tools/crop.ts). Qwen2.5-VL's
   * processor defaults when absent.
   */
  pixelBounds?: PixelBounds;
  /** How a model message is parsed; the env server passes its worker pool (parseAction by default). */
  parse?: (text: string, options: ParseOptions) => Promise<ParsedAction> | ParsedAction;
}

export type Action = { text: string } | { call: ToolCall };

export interface StepInfo {
  turn: number;
  calls: CallRecord[];
  errors: ActionError[];
  answer: string | string[] | null;
  tool_calls: number;
  end_reason: string | null;
}

export interface StepResult {
  observation: Observation;
  done: boolean;
  info: StepInfo;
}

export class EpisodeError extends Error {
  override name = 'EpisodeError';
}

export class Episode {
  readonly id = randomUUID();
  private readonly limits: EpisodeLimits;
  private readonly toolNames: string[];
  private current: StoredImage;
  private imagesShown = 1;
  /** ReFocus-style variables the model assigned images to in earlier turns (its imagined notebook). */
  private readonly imageVariables: string[] = [];
  /** The call and answer forms this episode's messages show, made from its own image. */
  private readonly examples: Readonly<ActionExamples>;
  /**
   * Images this episode's tool calls made (not the task image, not an input a tool handed back).
   * The episode is their only holder — the observation carries the stored PNG, never pixels — so
   * it returns each one to the pixel pool once nothing will read it again (env/core/pixel-pool.ts).
   */
  private readonly produced = new WeakSet<RgbImage>();
  private turn = 0;
  private done = false;
  private stepping = false;
  private readonly record: Trajectory;
  /** Every message so far, whole: the opening messages, the policy's turns and the observations. */
  private readonly conversation: ChatMessage[] = [];
  private readonly presentation: Presentation;
  /** The task image's size and metadata, as the scanners read them (a zoom changes `meta`, never this). */
  private readonly taskImage: CallScene;
  /** The task image at full resolution and the policy's bounds, for the tools that crop from it. */
  private readonly toolContext: ToolContext;
  lastActive = Date.now();

  private constructor(
    readonly task: TaskRecord,
    private meta: PixelMetadata,
    private readonly store: ImageStore,
    private readonly options: EpisodeOptions,
    first: StoredImage,
    private currentPixels: RgbImage,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.presentation = options.presentation ?? DEFAULT_PRESENTATION;
    this.toolNames = offeredToolNames(task, meta, options.tools !== false);
    this.examples = examplesFor(meta, task.answer, this.toolNames);
    this.current = first;
    this.taskImage = { meta, width: currentPixels.width, height: currentPixels.height };
    // The task image is never the episode's to release (release() skips it), so it stays readable.
    this.toolContext = { original: { ref: first.ref, image: currentPixels, meta }, ...(options.pixelBounds ? { bounds: options.pixelBounds } : {}) };
    this.record = {
      prompt_id: task.id,
      task: { question: task.question, answer: task.answer, kind: task.kind, difficulty: task.difficulty, image: first.ref },
      turns: [],
      answer: null,
      end_reason: null,
      tool_calls: 0,
      tool_errors: 0,
    };
  }

  /**
   * Starts an episode on a task whose image is already decoded and whose metadata is resolved
   * to pixels. Returns the episode and its first observation.
   */
  static async start(
    task: TaskRecord,
    image: RgbImage,
    meta: PixelMetadata,
    store: ImageStore,
    options: EpisodeOptions = {},
  ): Promise<{ episode: Episode; observation: Observation }> {
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    if (image.width * image.height > limits.maxPixels) {
      throw new EpisodeError(
        `task ${task.id}: image is ${image.width}×${image.height} = ${image.width * image.height} pixels, over the limit of ${limits.maxPixels}; raise limits.maxPixels or use a smaller image`,
      );
    }
    const first = await store.put(image);
    const episode = new Episode(task, meta, store, options, first, image);
    const tools = episode.toolNames.length > 0 ? toolsPromptBlock(episode.toolNames, meta) : null;
    const system = systemTurnText(episode.presentation.system_prompt, options.tools !== false, () => systemPrompt(tools, episode.examples.hermes, task.kind));
    if (system !== null) episode.conversation.push({ role: 'system', content: [{ type: 'text', text: system }] });
    episode.conversation.push({ role: 'user', content: [episode.imagePart(first), { type: 'text', text: questionText(task.question) }] });
    const prompt = episode.prompt();
    episode.record.opening = prompt.map((message) => ({
      role: message.role as 'system' | 'user',
      content: message.content.map((part) => (part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'image' as const, ref: part.ref })),
    }));
    return { episode, observation: { messages: prompt, prompt } };
  }

  /**
   * The conversation as the policy reads it now (a new list): the presentation's view of every
   * message so far, the policy's own turns included as the text it wrote.
   */
  prompt(): ChatMessage[] {
    return presentConversation(this.conversation, this.presentation.view);
  }

  /**
   * The presentation this episode applies, with its limits: what a client needs to play it (the
   * episode-start answer's `presentation`, docs/CONTRACTS.md).
   */
  presentationInUse(): Presentation & { prompts_only_grow: boolean; limits: { max_turns: number; max_tool_calls: number; max_images: number } } {
    return {
      system_prompt: structuredClone(this.presentation.system_prompt),
      view: { ...this.presentation.view },
      prompts_only_grow: promptsOnlyGrow(this.presentation),
      limits: { max_turns: this.limits.maxTurns, max_tool_calls: this.limits.maxToolCalls, max_images: this.limits.maxImages },
    };
  }

  /** OpenAI function objects for the tools this episode offers (empty in the text-only arm). */
  tools(): unknown[] {
    return this.toolNames.length > 0 ? toolsAsOpenAIFunctions(this.toolNames) : [];
  }

  /** The names of the tools this episode offers, in the order the system prompt lists them (empty in the text-only arm). */
  offeredToolNames(): string[] {
    return [...this.toolNames];
  }

  get isDone(): boolean {
    return this.done;
  }

  trajectory(): Trajectory {
    return structuredClone(this.record);
  }

  /**
   * Runs the scanners (scanners/index.ts) over the trajectory as it stands and keeps their
   * findings in it: the env server does so when it scores the episode.
   */
  scan(): Finding[] {
    const findings = scanTrajectory(this.record, { taskImage: this.taskImage, ...(this.options.pixelBounds ? { bounds: this.options.pixelBounds } : {}) });
    this.record.findings = findings;
    return [...findings];
  }

  /** Ends the episode early (client closed it or it expired). */
  close(reason = 'closed'): void {
    if (!this.done) {
      this.done = true;
      this.record.end_reason = reason;
      // A close that arrives while a step runs (the server's DELETE or expiry does not wait for
      // one) leaves the pixels to that step, which may still be reading them; it releases them.
      if (!this.stepping) this.release(this.currentPixels);
    }
  }

  async step(action: Action): Promise<StepResult> {
    if (this.done) throw new EpisodeError(`episode ${this.id} is over (${this.record.end_reason}); start a new one`);
    this.stepping = true;
    try {
      return await this.takeTurn(action);
    } finally {
      this.stepping = false;
      // An episode that is over reads no image again.
      if (this.done) this.release(this.currentPixels);
    }
  }

  private async takeTurn(action: Action): Promise<StepResult> {
    this.lastActive = Date.now();
    this.turn += 1;
    const parsed: ParsedAction =
      'text' in action
        ? await (this.options.parse ?? parseAction)(action.text, { imageVariables: this.imageVariables, examples: this.examples })
        : { calls: [action.call], answer: null, errors: [], formats: [] };
    for (const name of parsed.imageVariables ?? []) if (!this.imageVariables.includes(name)) this.imageVariables.push(name);
    const text = 'text' in action ? action.text : JSON.stringify(action.call);
    const assistant: AssistantTurn = { role: 'assistant', text, calls: [], errors: [...parsed.errors], answer: parsed.answer };
    this.record.turns.push(assistant);
    this.conversation.push({ role: 'assistant', content: [{ type: 'text', text }] });

    let reply: ChatMessage | null = null;
    if (parsed.answer !== null) {
      // An answer ends the episode; calls written beside it are not run (the answer came first).
      this.finish('answer', parsed.answer);
    } else if (parsed.calls.length > 0) {
      reply = await this.runCalls(parsed.calls, assistant);
    } else {
      const error = parsed.errors[0] ?? actionError('E1', noActionMessage(this.examples.hermes));
      if (parsed.errors.length === 0) assistant.errors.push(error);
      reply = this.errorMessage('user', undefined, assistant.errors);
    }

    if (!this.done && this.turn >= this.limits.maxTurns) this.finish('max_turns', null);
    if (reply) this.conversation.push(reply);
    // The new messages as the policy reads them: the tail of the presented conversation.
    const presented = this.prompt();
    const messages: ChatMessage[] = reply ? presented.slice(-1) : [];
    if (reply) {
      this.record.turns.push({
        role: reply.role === 'tool' ? 'tool' : 'user',
        text: reply.content.filter((p) => p.type === 'text').map((p) => (p.type === 'text' ? p.text : '')).join('\n'),
        images: reply.content.flatMap((p) => (p.type === 'image' ? [p.ref] : [])),
      });
    }
    return {
      observation: this.done ? { messages } : { messages, prompt: presented },
      done: this.done,
      info: {
        turn: this.turn,
        calls: assistant.calls,
        errors: assistant.errors,
        answer: parsed.answer,
        tool_calls: this.record.tool_calls,
        end_reason: this.record.end_reason,
      },
    };
  }

  private async runCalls(calls: ToolCall[], assistant: AssistantTurn): Promise<ChatMessage> {
    const firstName = calls[0]?.name;
    if (this.toolNames.length === 0) {
      const error = actionError('E1', TOOLS_OFF_MESSAGE, firstName);
      assistant.errors.push(error);
      return this.errorMessage('user', undefined, [error]);
    }
    const summaries: string[] = [];
    let image = this.currentPixels;
    let imageIn = this.current.ref;
    let produced: StoredImage | null = null;
    const metaIn = this.meta;
    for (const call of calls) {
      const refusal = this.refuse(call);
      const outcome = refusal ? { ok: false as const, error: refusal } : await runToolCall(image, call, this.meta, this.toolContext);
      if (!outcome.ok) {
        this.record.tool_errors += 1;
        assistant.calls.push({ name: call.name, arguments: call.arguments, ok: false, image_in: imageIn, error: outcome.error });
        assistant.errors.push(outcome.error);
        break; // later calls in the message assumed this one's result
      }
      if (outcome.image.width * outcome.image.height > this.limits.maxPixels) {
        const error = actionError('E5', pixelLimitMessage(outcome.image.width, outcome.image.height, this.limits.maxPixels), call.name);
        if (outcome.image !== image) releasePixels(outcome.image); // refused: nobody will read it
        this.record.tool_errors += 1;
        assistant.calls.push({ name: call.name, arguments: call.arguments, ok: false, image_in: imageIn, error });
        assistant.errors.push(error);
        break;
      }
      // Judged against the image the call read, before a zoom moves the boxes (call-target.ts); a
      // zoom on a search scene or a benchmark photo by where its output lies in the task image (the metadata it returned).
      const taskSize = { width: this.taskImage.width, height: this.taskImage.height };
      const scene = { meta: this.meta, width: image.width, height: image.height, taskSize, ...(outcome.meta ? { result: outcome.meta } : {}) };
      const target = callTarget(this.task, call, scene);
      const targetIou = zoomTargetIou(this.task, call, scene);
      this.record.tool_calls += 1;
      produced = await this.store.put(outcome.image);
      if (outcome.image !== image) {
        this.produced.add(outcome.image);
        // An earlier result of this message: stored, and read by the call that just ran.
        if (image !== this.currentPixels) this.release(image);
      }
      image = outcome.image;
      // A tool that moves pixels (zoom_in) hands back the boxes moved with them.
      if (outcome.meta) this.meta = outcome.meta;
      assistant.calls.push({ name: call.name, arguments: call.arguments, ok: true, image_in: imageIn, image_out: produced.ref, summary: outcome.summary, target, ...(targetIou === null ? {} : { target_iou: targetIou }) });
      summaries.push(outcome.summary);
      imageIn = produced.ref;
    }
    const lastName = assistant.calls[assistant.calls.length - 1]?.name ?? firstName;
    const content: ChatMessage['content'] = [];
    if (summaries.length > 0) content.push({ type: 'text', text: toolObservationText(summaries) });
    const failed = assistant.calls.find((c) => !c.ok);
    if (failed?.error) content.push({ type: 'text', text: errorObservationText(failed.error.class, failed.error.message) });
    if (produced && this.options.withholdResults) {
      // The policy is shown the image its calls read, as if the tool had done nothing; the state
      // stays with that image so later calls act on what the policy sees.
      if (image !== this.currentPixels) this.release(image);
      this.meta = metaIn;
      this.imagesShown += 1;
      content.push(this.imagePart(this.current));
    } else if (produced) {
      if (image !== this.currentPixels) this.release(this.currentPixels);
      this.current = produced;
      this.currentPixels = image;
      this.imagesShown += 1;
      content.push(this.imagePart(produced));
    }
    return lastName === undefined ? { role: 'tool', content } : { role: 'tool', name: lastName, content };
  }

  /** Limits and state that refuse a call before it runs. */
  private refuse(call: ToolCall): ActionError | null {
    if (this.record.tool_calls >= this.limits.maxToolCalls) {
      return actionError('E5', toolCallLimitMessage(this.limits.maxToolCalls), call.name);
    }
    if (this.imagesShown >= this.limits.maxImages) {
      return actionError('E5', imageLimitMessage(this.limits.maxImages), call.name);
    }
    return null;
  }

  private finish(reason: string, answer: string | string[] | null): void {
    this.done = true;
    this.record.end_reason = reason;
    this.record.answer = answer;
  }

  /** Returns an image this episode made to the pixel pool; the task image and foreign ones stay with their holders. */
  private release(image: RgbImage): void {
    if (!this.produced.has(image)) return;
    this.produced.delete(image);
    releasePixels(image);
  }

  private errorMessage(role: 'user' | 'tool', name: string | undefined, errors: ActionError[]): ChatMessage {
    const text = errors.map((e) => errorObservationText(e.class, e.message)).join('\n');
    const message: ChatMessage = { role, content: [{ type: 'text', text }] };
    if (name !== undefined) message.name = name;
    return message;
  }

  private imagePart(image: StoredImage): ImagePart {
    const part: ImagePart = { type: 'image', ref: image.ref, width: image.width, height: image.height, path: image.path };
    if (this.options.inlineImages) part.data = image.png.toString('base64');
    return part;
  }
}
