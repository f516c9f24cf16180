// The "shadow" rows of `npm run bench`: bench/shadow.ts three times in each mode, fresh processes, medians. Kept out of
// run.ts, which registers it with one block.
import { entrypointNodeFlags } from '../test/deploy/support/dockerfile.ts';
import { median, round } from './stats.ts';

interface Comparison { readonly shadowNsPerEndpoint: number; readonly sliceNsPerEndpoint: number; readonly ratio: number }
interface ShadowTime {
  readonly ips: number; readonly peers: number; readonly endpoints: number; readonly listed: number;
  readonly rule5: Comparison; readonly rule50: Comparison; readonly review5: Comparison;
}
interface ShadowRss { readonly ips: number; readonly shadows: number; readonly repaired: number; readonly rssMB: number; readonly baselineRssMB: number; readonly heapUsedMB: number }

type Run = <T>(file: string, args?: readonly string[], flags?: readonly string[]) => Promise<T>;

const n = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export async function shadowSection(runSection: Run): Promise<{
  results: Record<string, number>; rows: [string, string, string][]; targets: [boolean, string][];
}> {
  const times: ShadowTime[] = [];
  const memories: ShadowRss[] = [];
  for (let i = 0; i < 3; i++) {
    times.push(await runSection<ShadowTime>('shadow.ts', ['time'], ['--expose-gc']));
    // The image's node flags, as the product would hold these: Node 24 sizes the young generation from the heap it may
    // use, large on a machine of 23.5 GiB, where the image caps a semi-space at 4 MB (Node 24, 2026-11-27: 203 MB
    // without them, 167 to 173 MB with them).
    memories.push(await runSection<ShadowRss>('shadow.ts', ['rss'], ['--expose-gc', ...entrypointNodeFlags()]));
  }
  const of = (key: 'rule5' | 'rule50' | 'review5', field: keyof Comparison) => round(median(times.map((t) => t[key][field])), 3);
  const rss = (key: 'rssMB' | 'baselineRssMB' | 'heapUsedMB') => round(median(memories.map((m) => m[key])), 1);
  const first = times[0];
  const results = {
    ruleRatio5: of('rule5', 'ratio'), ruleRatio50: of('rule50', 'ratio'), reviewRatio: of('review5', 'ratio'),
    rssMB: rss('rssMB'), shadows: memories[0]?.shadows ?? 0, ips: memories[0]?.ips ?? 0,
  };
  const line = (key: 'rule5' | 'rule50' | 'review5') => `${n(of(key, 'shadowNsPerEndpoint'), 1)} / ${n(of(key, 'sliceNsPerEndpoint'), 1)}  (${n(of(key, 'ratio'), 3)}x)`;
  const rows: [string, string, string][] = [
    ['shadow', `review of ${first?.endpoints ?? 0} endpoints (${first?.listed ?? 0} listed, on 5 leaves), ns/endpoint: shadow / EndpointSlice of the same pods`, line('review5')],
    ['shadow', '  the pure rules alone (repair + patch against rewrite + patch), 5 leaves', line('rule5')],
    ['shadow', '  the pure rules alone, 50 leaves', line('rule50')],
    ['shadow', `RSS with ${n(results.ips)} hub IPs and ${n(results.shadows)} shadows held and repaired (under tsx, node ${entrypointNodeFlags().join(' ')})`, `${n(results.rssMB, 1)} MB`],
    ['shadow', `  node alone ${n(rss('baselineRssMB'), 1)} MB, live heap ${n(rss('heapUsedMB'), 1)} MB`, ''],
  ];
  const targets: [boolean, string][] = [
    [results.reviewRatio <= 1.2, `shadow review ${n(results.reviewRatio, 3)}x an EndpointSlice review of the same pods <= 1.2`],
    [results.rssMB <= 180, `shadow rssMB ${n(results.rssMB, 1)} <= 180 (${n(results.shadows)} shadows, ${n(results.ips)} hub IPs)`],
  ];
  return { results, rows, targets };
}
