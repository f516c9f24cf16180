// What the bundle needs from node_modules at run time, and nothing else: the image's `deps` stage runs this after
// `npm ci --omit=dev`, since every production dependency but the ones build/bundle.js keeps external is already inside
// dist/ (fastify, pino, prom-client, yaml, tsx: some 26 MB the image would carry for nothing).
//
//   node build/runtime-modules.js --modules dist/modules.json [--node-modules node_modules] [--dry-run]
//
// Keeps the packages the bundle imports (modules.json's `external` lists) and everything they depend on, found as
// Node resolves it (the nearest node_modules upwards, nested copies included); removes every other package folder,
// node_modules/.bin and the kept packages' type declarations and source maps. Prints what it kept and removed, in counts, on stderr; --dry-run removes nothing and prints the
// kept package folders on stdout, one a line.
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The package names a modules.json file says the bundle imports at run time (built-ins left out). */
export function externalPackages(modulesFile) {
  const modules = JSON.parse(readFileSync(modulesFile, 'utf8'));
  const names = new Set();
  for (const module of Object.values(modules)) {
    for (const specifier of module.external ?? []) {
      const parts = specifier.split('/');
      if (specifier.startsWith('node:') || builtinModules.includes(parts[0])) continue;
      names.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
    }
  }
  return [...names].sort();
}

/** The folder Node would load `name` from when required from `fromDir`, or undefined. */
function resolvePackage(name, fromDir, root) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/**
 * The package folders reachable from `names` through dependencies, optionalDependencies and installed
 * peerDependencies, as absolute real paths. A missing required dependency is an error: the image would fail on it.
 */
export function runtimeClosure(names, nodeModules) {
  const root = dirname(resolve(nodeModules));
  const keep = new Set();
  const queue = names.map((name) => ({ name, from: root, required: true, by: 'the bundle' }));
  while (queue.length > 0) {
    const { name, from, required, by } = queue.shift();
    const dir = resolvePackage(name, from, root);
    if (dir === undefined) {
      if (required) throw new Error(`${name}, needed by ${by}, is not installed under ${nodeModules}`);
      continue;
    }
    if (keep.has(dir)) continue;
    keep.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const [field, isRequired] of [['dependencies', true], ['optionalDependencies', false], ['peerDependencies', false]]) {
      for (const dependency of Object.keys(pkg[field] ?? {})) {
        // Type declarations only: nothing loads them at run time.
        if (dependency.startsWith('@types/')) continue;
        queue.push({ name: dependency, from: dir, required: isRequired, by: pkg.name });
      }
    }
  }
  return keep;
}

/** Every package folder under `nodeModules`, nested node_modules included, as absolute real paths. */
function packageFolders(nodeModules) {
  const found = [];
  const visit = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        visit(path);
        continue;
      }
      found.push(realpathSync(path));
      visit(join(path, 'node_modules'));
    }
  };
  visit(resolve(nodeModules));
  return found;
}

/** Files of a kept package that nothing loads at run time: type declarations and source maps. */
const DEAD_FILE = /\.(d\.[cm]?ts|map)$/;

function deadFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : deadFiles(path);
    return DEAD_FILE.test(entry.name) ? [path] : [];
  });
}

/**
 * Removes the package folders `keep` does not hold (a kept folder's parent package stays), node_modules/.bin, and the
 * kept packages' type declarations and source maps (half of the Kubernetes client's 54 MB). Returns the folders and
 * files removed.
 */
export function prune(nodeModules, keep, { dryRun }) {
  const removed = [];
  for (const dir of packageFolders(nodeModules)) {
    if (keep.has(dir) || [...keep].some((kept) => kept.startsWith(`${dir}${sep}`))) continue;
    removed.push(dir);
    if (!dryRun) rmSync(dir, { recursive: true, force: true });
  }
  const files = [...keep].flatMap(deadFiles);
  if (!dryRun) {
    for (const file of files) rmSync(file, { force: true });
    rmSync(join(nodeModules, '.bin'), { recursive: true, force: true });
  }
  return { folders: removed, files };
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { modules: { type: 'string' }, 'node-modules': { type: 'string' }, 'dry-run': { type: 'boolean' } } });
  if (values.modules === undefined) {
    process.stderr.write('usage: node build/runtime-modules.js --modules dist/modules.json [--node-modules DIR] [--dry-run]\n');
    process.exit(2);
  }
  const nodeModules = resolve(values['node-modules'] ?? 'node_modules');
  const keep = runtimeClosure(externalPackages(values.modules), nodeModules);
  const removed = prune(nodeModules, keep, { dryRun: values['dry-run'] === true });
  if (values['dry-run']) process.stdout.write([...keep].map((dir) => relative(nodeModules, dir)).sort().join('\n') + '\n');
  process.stderr.write(`runtime-modules: kept ${keep.size} packages; ${values['dry-run'] ? 'would remove' : 'removed'} ${removed.folders.length} packages and ${removed.files.length} declaration and map files\n`);
}
