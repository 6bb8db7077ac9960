/**
 * What a tool is: a name, a JSON Schema for its arguments, a description written for a model,
 * and a pure function from (current image, arguments, metadata) to a new image or an error.
 * Tools never see model text and never run model code: they get validated, typed arguments.
 */
import type { ActionError } from '../core/errors.js';
import type { RgbImage } from '../core/image.js';
import type { PixelBounds } from '../config/qwen-image-tokens.js';
import type { PixelMetadata } from './metadata.js';

/**
 * What an episode knows beyond the current image, for the tools that need it (crop.ts): the task
 * image at full resolution with its id and metadata, and the bounds of the processor that shows
 * images to the policy. Absent outside an episode; tools that do not need it ignore it.
 */
export interface ToolContext {
  original?: { ref: string; image: RgbImage; meta: PixelMetadata };
  /** min_pixels and max_pixels the policy's processor resizes images into (Qwen2.5-VL's defaults when absent). */
  bounds?: PixelBounds;
}

/** A JSON Schema (draft-07) object schema for a tool's arguments. */
export interface ArgumentSchema {
  type: 'object';
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties: false;
}

/** A label the model wrote, and the label in the metadata it was matched to. */
export interface LabelMatch {
  requested: string;
  matched: string;
  /** 'exact', or how it was matched when not exact (case, whitespace, punctuation). */
  how: 'exact' | 'case' | 'whitespace' | 'punctuation';
}

export type ToolOutcome =
  | {
      ok: true;
      image: RgbImage;
      /** One line for the model about what was done. */
      summary: string;
      matches: LabelMatch[];
      /**
       * Metadata for the new image, present only when the tool moved pixels (zoom_in crops and
       * scales): later calls on the new image must use this, not the metadata they started with.
       */
      meta?: PixelMetadata;
    }
  | { ok: false; error: ActionError };

export interface ToolDefinition {
  name: string;
  /** One paragraph, written for a model: what it does, when to use it, what comes back. */
  description: string;
  parameters: ArgumentSchema;
  /**
   * Arguments are already schema-valid when this is called; the image must not be mutated.
   * Every tool answers through a promise, so one that needs to wait (OCR runs neural networks)
   * has the same shape as the pixel tools, and there is one way to run a call.
   */
  apply(image: RgbImage, args: Record<string, unknown>, meta: PixelMetadata, context?: ToolContext): Promise<ToolOutcome>;
  /**
   * Arguments of a typical call, for prompts and error messages; given the image's metadata it
   * uses that image's own labels, so the model sees an example it could actually send.
   */
  exampleArguments?(meta?: PixelMetadata): Record<string, unknown>;
}

/** A call as the parser or a client hands it over: not yet validated. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}
