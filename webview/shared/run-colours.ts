/**
 * Which of the theme's series colours a run is drawn in, the same in every panel and in the demo's
 * report: the demo's two arms keep theirs wherever they are listed (the `tools` arm the first series
 * colour, blue; the `text` arm the second, orange; trainer/vistool_trainer/run/demo_report.py's
 * ARM_COLOURS), and any other run takes the next colour no arm holds, in the order the runs are
 * listed. Listing the arms by name (text before tools) no longer swaps their colours. While a run
 * is selected in the dashboard, the other runs' lines are drawn dimmed and it at full opacity. Pure.
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

/**
 * How opaque the other runs' lines are while one run is selected (a point of its line picked on a
 * chart): the selected run keeps full opacity, so it stands out where the lines cross.
 */
export const DIMMED_RUN_ALPHA = 0.3;

/**
 * The colour a run's lines are drawn in: its own, at full opacity while no run is selected or
 * while it is the selected one; the others' at DIMMED_RUN_ALPHA. `selected` is the selected run's
 * id (null: none).
 */
export function drawnRunColour(colour: string, runId: string, selected: string | null): string {
  return selected === null || selected === runId ? colour : withAlpha(colour, DIMMED_RUN_ALPHA);
}

/**
 * A CSS colour at `alpha` times its own opacity, as rgba(). The theme hands its colours over as
 * #rgb, #rrggbb, #rrggbbaa (VS Code writes a translucent theme colour so) or rgb()/rgba(); any
 * other form (a name, a color-mix()) comes back unchanged.
 */
export function withAlpha(colour: string, alpha: number): string {
  const value = colour.trim();
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i.exec(value)?.[1];
  let channels: number[] | null = null;
  if (hex) {
    const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
    channels = [0, 2, 4, 6].filter((at) => at < full.length).map((at) => parseInt(full.slice(at, at + 2), 16));
    if (channels.length === 4) channels[3] = (channels[3] as number) / 255;
  } else {
    const rgb = /^rgba?\(\s*([\d.]+)\s*[,\s]\s*([\d.]+)\s*[,\s]\s*([\d.]+)\s*(?:[,/]\s*([\d.]+)(%?)\s*)?\)$/i.exec(value);
    if (rgb) channels = [Number(rgb[1]), Number(rgb[2]), Number(rgb[3]), ...(rgb[4] === undefined ? [] : [Number(rgb[4]) / (rgb[5] ? 100 : 1)])];
  }
  if (!channels) return colour;
  const [r, g, b, a = 1] = channels;
  return `rgba(${r}, ${g}, ${b}, ${Math.round(a * alpha * 1000) / 1000})`;
}
