// Real certificates for real HTTPS tests, made by the project's own certs/make-certs.sh (openssl).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from './scratch.ts';

export interface TestCerts {
  readonly dir: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

const script = new URL('../../certs/make-certs.sh', import.meta.url).pathname;

/** Certificates in `dir`, or in a folder of their own removed when the process exits (the key is a private key). */
export function makeCerts(dir = scratchDir('shortcut-certs-'), namespace = 'shortcut-webhook'): TestCerts {
  execFileSync('bash', [script, '--out', dir, '--namespace', namespace, '--force'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  return { dir, ...files, ca: readFileSync(files.caFile), cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}
