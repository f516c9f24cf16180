// What changed between two evaluations of one cluster's FCCs: logged once per change, and the controller's trigger.
import { pairKey, type PairState } from './pairs.ts';
import type { ClusterView } from './snapshot.ts';

export interface PairChange {
  readonly fcc: string;
  /** Undefined when the FCC appeared. */
  readonly before: string | undefined;
  /** Undefined when the FCC disappeared; the state otherwise. */
  readonly after: PairState | undefined;
}

/** A state as a comparable string: usable with its prefixes, or the reason. */
function stateKey(state: PairState): string {
  return state.usable
    ? `usable ${state.pair.hubPrefix.text}->${state.pair.shortcutPrefix.text}`
    : state.reason;
}

export function pairChanges(before: readonly PairState[], after: readonly PairState[]): PairChange[] {
  const previous = new Map(before.map((state) => [state.fcc, stateKey(state)]));
  const changes: PairChange[] = [];
  const seen = new Set<string>();
  for (const state of after) {
    seen.add(state.fcc);
    const was = previous.get(state.fcc);
    if (was !== stateKey(state)) changes.push({ fcc: state.fcc, before: was, after: state });
  }
  for (const [fcc, was] of previous) if (!seen.has(fcc)) changes.push({ fcc, before: was, after: undefined });
  return changes;
}

/** The usable rules of a cluster as one string: equal strings, equal rewrites. */
export function pairSignature(view: ClusterView): string {
  return view.pairs.map(pairKey).sort().join(',');
}
