// Structured JSON logs (pino, fastify's own logger), one logger for the whole process.
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.ts';
import type { AddressEdit } from './core/rewrite.ts';
import type { IgnoredBecause } from './core/trust.ts';
import { OncePerKey } from './util/once-per-key.ts';

export type { Logger };

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino({
    level,
    base: { app: 'shortcut-webhook' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }, destination ?? process.stdout);
}

/** Objects whose ignored records were said: a stored object met by every pass and every write of Liqo's is said once. */
const IGNORED_SAID = new OncePerKey(4096);

/**
 * Records the product could not have written, found on an object and not used (core/trust.ts): said once per object,
 * with the first few entries, as a hub tenant's forgery or a record no view vouches for any more looks.
 */
export function logIgnoredRecords(
  logger: Logger, resource: string, object: string, entries: readonly { readonly out: string; readonly base: string; readonly because: IgnoredBecause }[],
): void {
  if (entries.length === 0 || !IGNORED_SAID.first(`${resource}/${object}`)) return;
  const shown = entries.slice(0, 10).map((entry) => `${entry.out}->${entry.base} (${entry.because})`);
  if (entries.length > shown.length) shown.push(`... ${entries.length - shown.length} more`);
  logger.warn({ resource, object, ignored: entries.length, entries: shown },
    'record entries the product could not have written are ignored: the addresses are taken as if they had none');
}

/** The first few changes: a slice of a thousand endpoints must not become a log line of megabytes. */
export function describeEdits(edits: readonly Pick<AddressEdit, 'from' | 'to'>[], shown = 10): string[] {
  const lines = edits.slice(0, shown).map((edit) => `${edit.from}->${edit.to}`);
  if (edits.length > shown) lines.push(`... ${edits.length - shown} more`);
  return lines;
}
