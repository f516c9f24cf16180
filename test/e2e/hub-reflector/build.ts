// Builds the hub's EndpointSlice reflection for the end-to-end tests (main.go: Liqo v1.2.0's own reflector, started as
// the virtual kubelet starts it) and copies the CRD it needs beyond liqo-writer's (NamespaceMap, which tells it which
// namespaces to reflect) out of the same Liqo module, into the hashed cache of support/go-build.ts. Same module set as
// liqo-writer (go.mod), so GOMODCACHE and GOCACHE serve both.
//
//   node --import tsx test/e2e/hub-reflector/build.ts      prints the folder holding `hub-reflector` and `crds/`
//
// SHORTCUT_WEBHOOK_HUB_REFLECTOR_DIR=<dir> puts (or finds) them there instead of the hashed cache folder.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCached, builtIn, cacheDirOf, type Built, type GoProgram } from '../support/go-build.ts';

const moduleDir = fileURLToPath(new URL('.', import.meta.url));
const LIQO = 'github.com/liqotech/liqo';
const CRDS = 'deployments/liqo/charts/liqo-crds/crds';
/** The CRDs the hub needs beyond liqo-writer's LIQO_CRDS. */
export const HUB_REFLECTOR_CRDS = ['offloading.liqo.io_namespacemaps.yaml'] as const;

function program(env: NodeJS.ProcessEnv): GoProgram {
  return {
    title: 'Liqo v1.2.0\'s EndpointSlice reflection (hub-reflector)',
    cacheName: 'hub-reflector',
    overrideDir: env.SHORTCUT_WEBHOOK_HUB_REFLECTOR_DIR,
    moduleDir,
    inputs: ['go.mod', 'go.sum', 'main.go'],
    recipe: `hub-reflector, -trimpath -s -w, crds ${HUB_REFLECTOR_CRDS.join(',')}, 1`,
    outputs: ['hub-reflector', ...HUB_REFLECTOR_CRDS.map((file) => join('crds', file))],
    build: (staging, { go, goOutput }) => {
      go(['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, 'hub-reflector'), '.']);
      const liqoDir = goOutput(['list', '-m', '-f', '{{.Dir}}', LIQO]).trim();
      if (liqoDir === '') throw new Error(`go list found no folder for ${LIQO}`);
      mkdirSync(join(staging, 'crds'));
      for (const file of HUB_REFLECTOR_CRDS) copyFileSync(join(liqoDir, CRDS, file), join(staging, 'crds', file));
    },
  };
}

export function hubReflectorDir(env: NodeJS.ProcessEnv = process.env): string {
  return cacheDirOf(program(env), env);
}

export function hubReflectorBuilt(): boolean {
  return builtIn(program(process.env), hubReflectorDir());
}

/** Builds into the cache unless it is already there. */
export function buildHubReflector(log?: (line: string) => void): Built {
  return buildCached(program(process.env), log);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { dir } = buildHubReflector();
  process.stdout.write(`${dir}\n`);
}
