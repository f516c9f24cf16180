// A serving pair for trying the webhook out without --tls-cert/--tls-key: set-up work, apart from loading and
// reloading certificates (tls.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from './log.ts';
import type { TlsFiles } from './tls.ts';

// Found from this module, not the working directory: `npx shortcut-webhook serve` may run from anywhere.
const DEV_CERTS = fileURLToPath(new URL('../certs/out/', import.meta.url));
const MAKE_CERTS = new URL('../certs/make-certs.sh', import.meta.url);

/**
 * Without --tls-cert/--tls-key: the pair `npm start` made in certs/out, else one made now by certs/make-certs.sh in
 * a temporary folder. Only for trying the webhook out: clients must trust a CA nobody distributed.
 */
export function developmentTls(logger: Logger): TlsFiles {
  const existing = { cert: join(DEV_CERTS, 'tls.crt'), key: join(DEV_CERTS, 'tls.key') };
  if (existsSync(existing.cert) && existsSync(existing.key)) {
    logger.warn({ ...existing }, 'no --tls-cert/--tls-key: serving the development pair of certs/out');
    return existing;
  }
  const out = mkdtempSync(join(tmpdir(), 'shortcut-webhook-tls-'));
  execFileSync('bash', [fileURLToPath(MAKE_CERTS), '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const made = { cert: join(out, 'tls.crt'), key: join(out, 'tls.key') };
  logger.warn({ ...made, ca: join(out, 'ca.crt') }, 'no --tls-cert/--tls-key: serving a development pair made now');
  return made;
}
