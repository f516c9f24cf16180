// Serving certificate and key from files, reloaded without restart (watched and polled, see watch-paths.ts).
// A pair is only taken once the key matches the certificate, so a
// half-written rotation (new cert, old key) keeps the previous pair until both halves are there.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { errorMessage } from './util/errors.ts';
import type { Logger } from './log.ts';
import { ProblemLatch } from './util/problem-latch.ts';
import { SerialTask } from './util/serial-task.ts';
import { watchPaths, type PathWatch } from './util/watch-paths.ts';

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly notAfter: Date;
  readonly subject: string;
}

export interface TlsFiles { readonly cert: string; readonly key: string }

/**
 * The secure-context options the webhook serves with, at start and on every reload: one place, so a rotation can
 * never serve with weaker settings than the start did.
 */
export function secureContextOptions(material: TlsMaterial): { cert: Buffer; key: Buffer; minVersion: 'TLSv1.2' } {
  return { cert: material.cert, key: material.key, minVersion: 'TLSv1.2' };
}

/** Reads and checks one pair; the error says which file is wrong and why. */
export async function loadTlsMaterial(files: TlsFiles): Promise<TlsMaterial> {
  const [cert, key] = await Promise.all([readFile(files.cert), readFile(files.key)]);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    throw new Error(`${files.cert} is not a PEM certificate: ${errorMessage(error)}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new Error(`${files.key} is not a PEM private key: ${errorMessage(error)}`);
  }
  if (!certificate.checkPrivateKey(privateKey)) throw new Error(`${files.key} does not match ${files.cert}`);
  return { cert, key, notAfter: new Date(certificate.validTo), subject: certificate.subject };
}

export interface CertificateWatcherOptions {
  readonly files: TlsFiles;
  readonly logger: Logger;
  readonly onReload: (material: TlsMaterial) => void;
  /** How often the files are read even without a watch event (default 10 s). */
  readonly pollIntervalMs?: number;
}

export class CertificateWatcher {
  private material: TlsMaterial | undefined;
  private watching: PathWatch | undefined;
  private readonly reloads = new SerialTask(() => this.reload());
  private readonly reloadProblems = new ProblemLatch();

  constructor(private readonly options: CertificateWatcherOptions) {}

  /** Loads the first pair (or throws: no TLS, no server), then watches for rotations. */
  async start(): Promise<TlsMaterial> {
    const material = await loadTlsMaterial(this.options.files);
    this.material = material;
    this.watching = watchPaths([dirname(this.options.files.cert), dirname(this.options.files.key)],
      () => void this.check(), this.options.pollIntervalMs ?? 10_000, { names: [basename(this.options.files.cert), basename(this.options.files.key)] });
    return material;
  }

  current(): TlsMaterial | undefined {
    return this.material;
  }

  /** Reads the files again; a symlink swap fires several events, and they become one read. */
  check(): Promise<void> {
    return this.reloads.run();
  }

  private async reload(): Promise<void> {
    let next: TlsMaterial;
    try {
      next = await loadTlsMaterial(this.options.files);
    } catch (error) {
      const message = errorMessage(error);
      if (this.reloadProblems.isNew(message)) this.options.logger.warn({ err: message }, 'serving certificate not reloaded, keeping the current one');
      return;
    }
    this.reloadProblems.clear();
    const current = this.material;
    if (current !== undefined && current.cert.equals(next.cert) && current.key.equals(next.key)) return;
    this.material = next;
    this.options.onReload(next);
    this.options.logger.info({ subject: next.subject, notAfter: next.notAfter.toISOString() }, 'serving certificate reloaded');
  }

  stop(): void {
    this.watching?.close();
  }
}
