/**
 * The charts' min/max downsampling: defined in protocol/downsample.ts, which a static bundle's page
 * runs too (`vistool view --bundle`), so a chart is shaped by one rule in every host.
 */
export { minMaxIndices } from '../../protocol/downsample.js';
