// The stamp of what a bundle is built from: a hash of every file under src/, package.json, tsconfig.json and the
// build configuration. bin/shortcut-webhook.js computes it on every start (about 2 ms for the 50 files of src/) and
// runs dist/ only when dist/stamp holds the same value, so an edit, a checkout, a `cp -p` or a deleted file is never
// missed, whatever the files' times say. Node built-ins only: it runs before anything else is loaded.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Written by build/bundle.js after the bundle, removed before it: no stamp, no bundle run. */
export const STAMP_FILE = 'stamp';
export const BUNDLE_ENTRY = 'shortcut-webhook.mjs';

const INPUTS = ['package.json', 'tsconfig.json', 'build/bundle.js', 'build/source-stamp.js'];

/** Relative paths (with `/`) of the files a bundle is built from, sorted. */
export function stampInputs(root = ROOT) {
  const sources = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else sources.push(path);
    }
  };
  walk('src');
  return [...INPUTS, ...sources].sort();
}

export function sourceStamp(root = ROOT) {
  const hash = createHash('sha256');
  for (const path of stampInputs(root)) {
    hash.update(`${path}\0`);
    hash.update(readFileSync(join(root, path)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The bundle's entry when `outdir` holds a bundle of the sources as they are now, else undefined. */
export function currentBundle(root = ROOT, outdir = join(root, 'dist')) {
  let stamp;
  try {
    stamp = readFileSync(join(outdir, STAMP_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  try {
    return stamp === sourceStamp(root) ? join(outdir, BUNDLE_ENTRY) : undefined;
  } catch {
    return undefined; // an input missing or unreadable: the sources decide, through tsx
  }
}

/**
 * The git commit of the checkout at `root` (only when `root` is the top of a git work tree, not a folder inside
 * another project's), else SOURCE_COMMIT (the Dockerfile's build argument: the image is built without .git), else
 * undefined. `shortcut-webhook version` reports it.
 */
export function buildCommit(root = ROOT, env = process.env) {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (resolve(git('rev-parse', '--show-toplevel')) === resolve(root)) return git('rev-parse', 'HEAD');
  } catch {
    // No git, or not a git checkout.
  }
  return /^[0-9a-f]{7,64}$/.test(env.SOURCE_COMMIT ?? '') ? env.SOURCE_COMMIT : undefined;
}
