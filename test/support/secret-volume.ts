// A Secret volume as the kubelet lays it out, and the certificate a TLS server presents: for the rotation tests.
import { copyFileSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { TestCerts } from './certs.ts';

/**
 * tls.crt -> ..data/tls.crt, ..data -> ..<version>/: the new version is written in full before one rename swaps
 * ..data, and the previous version, if named, is removed afterwards. The tls.crt and tls.key links are the caller's.
 */
export function secretVolume(dir: string, certs: TestCerts, version: string, previous?: string): void {
  const versionDir = join(dir, `..${version}`);
  mkdirSync(versionDir);
  copyFileSync(certs.certFile, join(versionDir, 'tls.crt'));
  copyFileSync(certs.keyFile, join(versionDir, 'tls.key'));
  const link = join(dir, '..data_tmp');
  symlinkSync(`..${version}`, link);
  renameSync(link, join(dir, '..data'));
  if (previous !== undefined) rmSync(join(dir, `..${previous}`), { recursive: true });
}

/** The SHA-256 fingerprint of the certificate a new TLS connection is served, trusting `ca`. */
export function servedFingerprint(port: number, ca: Buffer | readonly Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ca: Buffer.isBuffer(ca) ? ca : [...ca], servername: 'localhost' }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.end();
    });
    socket.on('error', reject);
  });
}
