/** The first divergence of a broken chain's tokens (a pure function of a chain build). */
export {
  divergenceTargets,
  firstDivergences,
  WINDOW_AFTER,
  WINDOW_BEFORE,
  type Divergence,
  type DivergenceHunk,
  type IdWindow,
} from './first-divergence.js';
export { divergenceJson, type DivergenceJson } from './divergence-json.js';
export { PrefixTree, type LongestPrefix, type TokenSequence } from './prefix-tree.js';
