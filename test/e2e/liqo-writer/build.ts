// Builds Liqo's leaf writer for the end-to-end tests (main.go: Liqo v1.2.0's shadowendpointslice-controller in a
// controller-runtime manager) and copies Liqo's CRDs out of the same Liqo module, into the hashed cache of
// support/go-build.ts. The Liqo module comes from the Go module proxy at the version go.mod pins (v1.2.0, an explicit
// version: the proxy's version list is not needed); the tests install its CRDs as `helm install liqo` would.
//
//   node --import tsx test/e2e/liqo-writer/build.ts      prints the folder holding `liqo-writer` and `crds/`
//
// SHORTCUT_WEBHOOK_LIQO_WRITER_DIR=<dir> puts (or finds) them there instead of the hashed cache folder.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCached, builtIn, cacheDirOf, type Built, type GoProgram } from '../support/go-build.ts';

const moduleDir = fileURLToPath(new URL('.', import.meta.url));
const LIQO = 'github.com/liqotech/liqo';
/** Where Liqo's chart keeps its CRDs in the module. */
const CRDS = 'deployments/liqo/charts/liqo-crds/crds';
/** The CRDs the tests install (and so the build copies): Liqo objects the writer or the webhook reads. */
export const LIQO_CRDS = [
  'core.liqo.io_foreignclusters.yaml',
  'ipam.liqo.io_ips.yaml',
  'networking.liqo.io_configurations.yaml',
  'networking.liqo.io_connections.yaml',
  'offloading.liqo.io_shadowendpointslices.yaml',
] as const;

/** The Liqo release the module pins, read from go.mod. */
export function liqoVersion(): string {
  const match = /^\s*github\.com\/liqotech\/liqo (v\S+)/m.exec(readFileSync(join(moduleDir, 'go.mod'), 'utf8'));
  if (match === null) throw new Error(`go.mod does not require ${LIQO}`);
  return match[1] ?? '';
}

function program(env: NodeJS.ProcessEnv): GoProgram {
  return {
    title: `Liqo ${liqoVersion()}'s shadowendpointslice-controller (liqo-writer)`,
    cacheName: 'liqo-writer',
    overrideDir: env.SHORTCUT_WEBHOOK_LIQO_WRITER_DIR,
    moduleDir,
    inputs: ['go.mod', 'go.sum', 'main.go'],
    recipe: `liqo-writer, -trimpath -s -w, crds ${LIQO_CRDS.join(',')}, 1`,
    outputs: ['liqo-writer', ...LIQO_CRDS.map((file) => join('crds', file))],
    build: (staging, { go, goOutput }) => {
      go(['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, 'liqo-writer'), '.']);
      // The build downloaded the module (or found it in GOMODCACHE): its folder holds the chart's CRDs.
      const liqoDir = goOutput(['list', '-m', '-f', '{{.Dir}}', LIQO]).trim();
      if (liqoDir === '') throw new Error(`go list found no folder for ${LIQO}`);
      mkdirSync(join(staging, 'crds'));
      for (const file of LIQO_CRDS) copyFileSync(join(liqoDir, CRDS, file), join(staging, 'crds', file));
    },
  };
}

export function liqoWriterDir(env: NodeJS.ProcessEnv = process.env): string {
  return cacheDirOf(program(env), env);
}

export function liqoWriterBuilt(): boolean {
  return builtIn(program(process.env), liqoWriterDir());
}

/** Builds into the cache unless it is already there. */
export function buildLiqoWriter(log?: (line: string) => void): Built {
  return buildCached(program(process.env), log);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { dir } = buildLiqoWriter();
  process.stdout.write(`${dir}\n`);
}
