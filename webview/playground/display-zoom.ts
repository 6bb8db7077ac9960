/**
 * How large the playground shows an image: small task images (the demo's are 224×112, the micro
 * model's 112×112) are scaled up by a whole factor, so a masked band or a drawn box is visible and
 * each source pixel stays a crisp square; images of a usual size are shown as they are.
 */
const TARGET_WIDTH = 448;
const MAX_FACTOR = 4;

export function displayZoom(width: number, height: number): number {
  const longest = Math.max(width, height);
  if (!(longest > 0)) return 1;
  return Math.max(1, Math.min(MAX_FACTOR, Math.floor(TARGET_WIDTH / longest)));
}
