/**
 * The search question families and the directions a neighbour question may ask (a leaf module:
 * the record's types import it, so it imports nothing).
 * - text_on: what is written on the <colour> <shape> (the only one of that colour and shape);
 * - colour_of: what colour is the <shape> labelled "<text>";
 * - next_to: what is written on the nearest object in line with the <colour> <shape> in a direction;
 * - how_many: how many <colour> <shape>s there are (all of them near each other).
 */
export const SEARCH_FAMILIES = ['text_on', 'colour_of', 'next_to', 'how_many'] as const;
export type SearchFamily = (typeof SEARCH_FAMILIES)[number];

export const DIRECTIONS = ['left', 'right', 'above', 'below'] as const;
export type Direction = (typeof DIRECTIONS)[number];
