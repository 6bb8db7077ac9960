/**
 * Bounds that keep parsing linear and memory-bounded whatever a model writes. Changing them
 * changes what a model may send; the tests in test/actions pin their effects.
 */

/** Longer messages are refused whole with one E1 error (1 MiB of UTF-16 code units). */
export const MAX_MESSAGE_CHARS = 1 << 20;

/** Deepest bracket nesting read in JSON and in Python literals. */
export const MAX_NESTING_DEPTH = 64;

/** Calls read from one message; the rest are dropped with one E1 error. */
export const MAX_CALLS_PER_MESSAGE = 64;

/** Errors listed for one message; the last entry says how many more there were. */
export const MAX_ERRORS_PER_MESSAGE = 20;
