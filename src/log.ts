// Structured JSON logs (pino, fastify's own logger), one logger for the whole process.
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

export type { Logger };

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino({
    level,
    base: { app: 'shortcut-webhook' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }, destination ?? process.stdout);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
