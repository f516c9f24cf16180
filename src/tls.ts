// Serving certificate and key from files, reloaded without restart.
// Secret volumes swap a `..data` symlink, so fs.watch on the files alone misses rotations: the directories are
// watched and the files are also polled. A pair is only taken once the key matches the certificate, so a
// half-written rotation (new cert, old key) keeps the previous pair until both halves are there.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errorMessage, type Logger } from './log.ts';

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly notAfter: Date;
  readonly subject: string;
}

export interface TlsFiles { readonly cert: string; readonly key: string }

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
  private timer: NodeJS.Timeout | undefined;
  private watchers: FSWatcher[] = [];
  private checking: Promise<void> | undefined;
  private recheck = false;
  private lastError = '';

  constructor(private readonly options: CertificateWatcherOptions) {}

  /** Loads the first pair (or throws: no TLS, no server), then watches for rotations. */
  async start(): Promise<TlsMaterial> {
    const material = await loadTlsMaterial(this.options.files);
    this.material = material;
    const interval = this.options.pollIntervalMs ?? 10_000;
    this.timer = setInterval(() => void this.check(), interval);
    this.timer.unref();
    for (const dir of new Set([dirname(this.options.files.cert), dirname(this.options.files.key)])) {
      try {
        const watcher = watch(dir, () => void this.check());
        watcher.on('error', () => watcher.close());
        watcher.unref();
        this.watchers.push(watcher);
      } catch {
        // Polling alone still finds the change.
      }
    }
    return material;
  }

  current(): TlsMaterial | undefined {
    return this.material;
  }

  /** Coalesces bursts of events (a symlink swap fires several) into one read at a time, and one more after it. */
  check(): Promise<void> {
    if (this.checking !== undefined) {
      this.recheck = true;
      return this.checking;
    }
    this.checking = this.reload().finally(() => {
      this.checking = undefined;
      if (this.recheck) {
        this.recheck = false;
        void this.check();
      }
    });
    return this.checking;
  }

  private async reload(): Promise<void> {
    let next: TlsMaterial;
    try {
      next = await loadTlsMaterial(this.options.files);
    } catch (error) {
      const message = errorMessage(error);
      if (message !== this.lastError) this.options.logger.warn({ err: message }, 'serving certificate not reloaded, keeping the current one');
      this.lastError = message;
      return;
    }
    this.lastError = '';
    const current = this.material;
    if (current !== undefined && current.cert.equals(next.cert) && current.key.equals(next.key)) return;
    this.material = next;
    this.options.onReload(next);
    this.options.logger.info({ subject: next.subject, notAfter: next.notAfter.toISOString() }, 'serving certificate reloaded');
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }
}
