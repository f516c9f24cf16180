// A kubeconfig in a Secret volume as the kubelet lays it out: `kubeconfig -> ..data/kubeconfig`, `..data -> ..<version>`,
// each new version written in full before one rename swaps `..data`, the previous one removed afterwards.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigVolume {
  /** The path the product is given: `<volume>/kubeconfig`. */
  readonly path: string;
  /** Swaps in a kubeconfig for `server` with this bearer token, trusting `ca`. */
  write(server: string, ca: Buffer, token: string): void;
}

export function kubeconfigVolume(dir: string): KubeconfigVolume {
  mkdirSync(dir, { recursive: true });
  let version = 0;
  return {
    path: join(dir, 'kubeconfig'),
    write(server, ca, token) {
      const previous = version;
      version++;
      const versionDir = join(dir, `..v${version}`);
      mkdirSync(versionDir);
      writeFileSync(join(versionDir, 'kubeconfig'), stringify({
        apiVersion: 'v1', kind: 'Config', 'current-context': 'e2e',
        clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority-data': ca.toString('base64') } }],
        users: [{ name: 'e2e', user: { token } }],
        contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'e2e' } }],
      }), { mode: 0o600 });
      symlinkSync(`..v${version}`, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      if (previous === 0) symlinkSync('..data/kubeconfig', join(dir, 'kubeconfig'));
      else rmSync(join(dir, `..v${previous}`), { recursive: true });
    },
  };
}
