// Builds the data path's two programs for test/e2e/datapath.test.ts and `npm run demo -- datapath`, into the hashed
// cache of support/go-build.ts, from the Go module proxy only:
// - wireguard-go (golang.zx2c4.com/wireguard, the userspace WireGuard): the machine has no WireGuard kernel module,
//   and Liqo's gateways would use the kernel's;
// - kube-proxy (k8s.io/kubernetes/cmd/kube-proxy, the Kubernetes release of the control plane, same replaces as
//   controlplane/go.mod), run in nftables mode.
// Each is cached on its own: a change of one recipe rebuilds only that one. This module is a copy of
// controlplane/go.mod plus these two tools, so that the control plane's cache key does not move with them.
//
//   node --import tsx test/e2e/datapath-tools/build.ts      prints the folders holding them
//
// SHORTCUT_WEBHOOK_WIREGUARD_DIR and SHORTCUT_WEBHOOK_KUBE_PROXY_DIR put (or find) them elsewhere.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCached, builtIn, cacheDirOf, type Built, type GoProgram } from '../support/go-build.ts';

const moduleDir = fileURLToPath(new URL('.', import.meta.url));
const INPUTS = ['go.mod', 'go.sum'] as const;

function required(module: string): string {
  const escaped = module.replace(/[.]/g, '\\.');
  const match = new RegExp(`^\\s*${escaped} (v\\S+)`, 'm').exec(readFileSync(join(moduleDir, 'go.mod'), 'utf8'));
  if (match === null) throw new Error(`test/e2e/datapath-tools/go.mod does not require ${module}`);
  return match[1] ?? '';
}

export function kubeProxyVersion(): string {
  return required('k8s.io/kubernetes');
}

export function wireguardVersion(): string {
  return required('golang.zx2c4.com/wireguard');
}

function wireguardProgram(env: NodeJS.ProcessEnv): GoProgram {
  return {
    title: `wireguard-go ${wireguardVersion()}`,
    cacheName: 'wireguard-go',
    overrideDir: env.SHORTCUT_WEBHOOK_WIREGUARD_DIR,
    moduleDir,
    inputs: INPUTS,
    recipe: 'wireguard-go, -trimpath -s -w, 1',
    outputs: ['wireguard-go'],
    build: (staging, { go }) => {
      go(['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, 'wireguard-go'), 'golang.zx2c4.com/wireguard']);
    },
  };
}

function kubeProxyProgram(env: NodeJS.ProcessEnv): GoProgram {
  return {
    title: `kube-proxy ${kubeProxyVersion()}`,
    cacheName: 'kube-proxy',
    overrideDir: env.SHORTCUT_WEBHOOK_KUBE_PROXY_DIR,
    moduleDir,
    inputs: INPUTS,
    recipe: 'kube-proxy, -trimpath -s -w, version stamped, 1',
    outputs: ['kube-proxy'],
    build: (staging, { go }) => {
      const version = kubeProxyVersion();
      const [, major, minor] = /^v(\d+)\.(\d+)/.exec(version) ?? [];
      const versionFlags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
        `-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`,
      ]);
      go(['build', '-trimpath', `-ldflags=-s -w ${versionFlags.join(' ')}`, '-o', join(staging, 'kube-proxy'), 'k8s.io/kubernetes/cmd/kube-proxy']);
    },
  };
}

export function dataPathToolsBuilt(env: NodeJS.ProcessEnv = process.env): boolean {
  return [wireguardProgram(env), kubeProxyProgram(env)].every((program) => builtIn(program, cacheDirOf(program, env)));
}

export function buildWireguard(log?: (line: string) => void): Built {
  return buildCached(wireguardProgram(process.env), log);
}

export function buildKubeProxy(log?: (line: string) => void): Built {
  return buildCached(kubeProxyProgram(process.env), log);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const built of [buildWireguard(), buildKubeProxy()]) process.stdout.write(`${built.dir}${built.built ? ` (built in ${built.seconds} s)` : ' (cached)'}\n`);
}
