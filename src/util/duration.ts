// Go-style durations, as Kubernetes writes them (`?timeout=10s`, `--resync-interval 5m`).
const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Longer than any duration a person or an API server writes. `?timeout=` is client input, and the pattern below takes
 * quadratic time on a long run of digits without a unit (16,000 digits: 127 ms).
 */
const MAX_LENGTH = 64;

/** `90s`, `5m`, `1h30m`, `250ms` in milliseconds; `0` alone is zero; anything else is undefined. */
export function parseDuration(raw: string): number | undefined {
  if (raw === '0') return 0;
  if (raw.length > MAX_LENGTH) return undefined;
  const parts = [...raw.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== raw) return undefined;
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * (UNITS[unit ?? ''] ?? Number.NaN), 0);
}
