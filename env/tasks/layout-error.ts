/**
 * Raised when a drawing cannot be laid out legibly: the canvas is too small for the data at the
 * smallest allowed font, or labels cannot fit their bands. The message says what was needed,
 * so `data gen --image-size` can tell a person which size or difficulty would work.
 */
export class LayoutError extends Error {
  override name = 'LayoutError';
}

/** Space between bands' edges and any ink, in px. The tools inset every band by 2 px before
 *  masking or outlining (ReFocus's inset), so ink must sit at least that far inside its band. */
export const BAND_INSET_PX = 2;
