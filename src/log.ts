// Structured JSON logs (pino, fastify's own logger), one logger for the whole process.
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.ts';
import type { AddressEdit } from './core/rewrite.ts';

export type { Logger };

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino({
    level,
    base: { app: 'shortcut-webhook' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }, destination ?? process.stdout);
}

/** The first few changes: a slice of a thousand endpoints must not become a log line of megabytes. */
export function describeEdits(edits: readonly Pick<AddressEdit, 'from' | 'to'>[], shown = 10): string[] {
  const lines = edits.slice(0, shown).map((edit) => `${edit.from}->${edit.to}`);
  if (edits.length > shown) lines.push(`... ${edits.length - shown} more`);
  return lines;
}
