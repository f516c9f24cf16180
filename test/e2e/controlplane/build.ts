// Builds the end-to-end tests' control plane once: kube-apiserver (k8s.io/kubernetes, as pinned in go.mod/go.sum)
// and etcd (./etcd, go.etcd.io/etcd/server/v3 embedded), into the hashed cache of support/go-build.ts.
//
//   npm run build:controlplane      (node --import tsx test/e2e/controlplane/build.ts) prints the folder holding them
//
// SHORTCUT_WEBHOOK_CONTROLPLANE_DIR=<dir> puts (or finds) the binaries there instead of the hashed cache folder.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCached, builtIn as builtInCache, cacheDirOf, goAvailable, type Built, type GoProgram } from '../support/go-build.ts';

export { goAvailable, type Built };
export const moduleDir = fileURLToPath(new URL('.', import.meta.url));

/** The Kubernetes release the module pins, read from go.mod. */
export function kubernetesVersion(): string {
  const match = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(readFileSync(join(moduleDir, 'go.mod'), 'utf8'));
  if (match === null) throw new Error('go.mod does not require k8s.io/kubernetes');
  return match[1] ?? '';
}

function program(env: NodeJS.ProcessEnv): GoProgram {
  return {
    title: `kube-apiserver ${kubernetesVersion()} and etcd`,
    cacheName: 'controlplane',
    overrideDir: env.SHORTCUT_WEBHOOK_CONTROLPLANE_DIR,
    moduleDir,
    inputs: ['go.mod', 'go.sum', 'etcd/main.go'],
    // Bump when the way of building changes (flags, names): the cache key changes with it.
    recipe: 'kube-apiserver+etcd, -trimpath -s -w, version stamped, 1',
    outputs: ['kube-apiserver', 'etcd'],
    build: (staging, { go }) => {
      const version = kubernetesVersion();
      const [, major, minor] = /^v(\d+)\.(\d+)/.exec(version) ?? [];
      const versionFlags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
        `-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`,
      ]);
      go(['build', '-trimpath', `-ldflags=-s -w ${versionFlags.join(' ')}`, '-o', join(staging, 'kube-apiserver'), 'k8s.io/kubernetes/cmd/kube-apiserver']);
      go(['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, 'etcd'), './etcd']);
    },
  };
}

/** Where the binaries of this exact go.mod/go.sum/launcher live. */
export function controlPlaneDir(env: NodeJS.ProcessEnv = process.env): string {
  return cacheDirOf(program(env), env);
}

export function builtIn(dir: string): boolean {
  return builtInCache(program(process.env), dir);
}

/** Builds into the cache unless it is already there; returns the folder and whether this call built it. */
export function buildControlPlane(log?: (line: string) => void): Built {
  return buildCached(program(process.env), log);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { dir } = buildControlPlane();
  process.stdout.write(`${dir}\n`);
}
