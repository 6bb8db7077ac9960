/** `#rrggbb` (how every layout writes its colours) as [r, g, b]; anything else is refused. */
export function parseHexColour(colour: string): [number, number, number] {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour);
  if (!m) throw new Error(`colour must be #rrggbb, got '${colour}'`);
  return [parseInt(m[1] as string, 16), parseInt(m[2] as string, 16), parseInt(m[3] as string, 16)];
}

export function isHexColour(colour: string): boolean {
  return /^#[0-9a-f]{6}$/i.test(colour);
}
