// A real logger whose JSON lines are kept in memory: tests and the bench read what the product reports (its log)
// instead of reaching into its internals.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.ts';

export type LogRecord = Readonly<Record<string, unknown>>;

/** One 'reconcile pass done' line of the controller. */
export interface PassRecord {
  readonly listed: number; readonly patched: number; readonly unchanged: number;
  readonly conflict: number; readonly error: number; readonly gone: number;
}

export function recordingLogger(): { readonly logger: Logger; readonly records: readonly LogRecord[]; passes(): readonly PassRecord[] } {
  const records: LogRecord[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') records.push(JSON.parse(line) as LogRecord);
      done();
    },
  });
  return {
    logger: createLogger('info', sink),
    records,
    passes: () => records.filter((r) => r.msg === 'reconcile pass done') as unknown as PassRecord[],
  };
}
