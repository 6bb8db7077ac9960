/**
 * Which of the theme's series colours a run is drawn in, the same in every panel and in the demo's
 * report: the demo's two arms keep theirs wherever they are listed (the `tools` arm the first series
 * colour, blue; the `text` arm the second, orange; trainer/vistool_trainer/run/demo_report.py's
 * ARM_COLOURS), and any other run takes the next colour no arm holds, in the order the runs are
 * listed. Listing the arms by name (text before tools) no longer swaps their colours. Pure.
 */

/** The demo's arms by run name, in the order of the palette colours they hold. */
export const ARM_COLOUR_ORDER: readonly string[] = ['tools', 'text'];

/** The palette index of each run, by the runs' names in the order they are listed. */
export function runColourIndices(names: readonly string[]): number[] {
  const held = new Set(names.map((name) => ARM_COLOUR_ORDER.indexOf(name)).filter((i) => i >= 0));
  let next = 0;
  const taken = new Set<string>();
  return names.map((name) => {
    const arm = ARM_COLOUR_ORDER.indexOf(name);
    if (arm >= 0 && !taken.has(name)) {
      taken.add(name);
      return arm;
    }
    while (held.has(next)) next += 1;
    return next++;
  });
}
