// A serving pair for trying the webhook out without --tls-cert/--tls-key: set-up work, apart from loading and
// reloading certificates (tls.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from './log.ts';
import type { TlsFiles } from './tls.ts';

// Found from this module, not the working directory: `npx shortcut-webhook serve` may run from anywhere.
const MAKE_CERTS = new URL('../certs/make-certs.sh', import.meta.url);

/** A development pair and how to remove it: its folder holds a CA key and a server key nobody must find later. */
export interface DevelopmentTls {
  readonly files: TlsFiles;
  readonly remove: () => void;
}

/**
 * Without --tls-cert/--tls-key: a pair made now by certs/make-certs.sh in a temporary folder, whose CA is logged. It
 * never reuses files found in the checkout (certs/out, which `npm start` passes explicitly): what serve does must not
 * depend on what an earlier command left behind. Only for trying the webhook out: clients must trust a CA nobody
 * distributed. The folder goes when serve returns or the process exits; a failed make-certs leaves none.
 */
export function developmentTls(logger: Logger): DevelopmentTls {
  const out = mkdtempSync(join(tmpdir(), 'shortcut-webhook-tls-'));
  const remove = (): void => rmSync(out, { recursive: true, force: true });
  try {
    execFileSync('bash', [fileURLToPath(MAKE_CERTS), '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    remove();
    throw error;
  }
  const files = { cert: join(out, 'tls.crt'), key: join(out, 'tls.key') };
  logger.warn({ ...files, ca: join(out, 'ca.crt') }, 'no --tls-cert/--tls-key: serving a development pair made now (removed on exit)');
  return { files, remove };
}
