/**
 * The generators' one refusal: a question with no single answer (a tie for the largest value, two
 * equal values to compare, a list with no members, a diagram whose answer a few pixels could
 * flip). Whoever picks questions catches it and chooses another; nothing else throws it.
 */
export class IllPosedQuestion extends Error {
  override name = 'IllPosedQuestion';
}
