// What this build is: the package's version, the commit it was built from when known, the Node.js running it. For
// `shortcut-webhook version`, the build_info metric, the "serving" log line and the User-Agent of API requests.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set by build/bundle.js (esbuild's define) to the commit of the checkout, or SOURCE_COMMIT for the image; '' when unknown. */
declare const SHORTCUT_WEBHOOK_BUILD_COMMIT: string | undefined;
/** Set by build/bundle.js (esbuild's define) to package.json's version at build time. */
declare const SHORTCUT_WEBHOOK_BUILD_VERSION: string | undefined;

export const PRODUCT = 'shortcut-webhook';

export interface BuildInfo {
  readonly version: string;
  /** The git commit, or undefined when neither the bundle nor a checkout beside the sources says. */
  readonly commit: string | undefined;
  /** `process.version`, e.g. v24.11.0. */
  readonly node: string;
}

// The checkout, one level above src/. Only the sources (through tsx) read it: a bundle carries its version and commit,
// wherever its folder lies (dist/ in the image, a temporary folder of the bench), so nothing beside it is looked for.
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function packageVersion(): string {
  if (typeof SHORTCUT_WEBHOOK_BUILD_VERSION === 'string') return SHORTCUT_WEBHOOK_BUILD_VERSION;
  const parsed: unknown = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
  return typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string' ? parsed.version : 'unknown';
}

/** The checkout's HEAD when the sources run from a git work tree of their own (not a folder of another project's). */
function checkoutCommit(): string | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return resolve(git('rev-parse', '--show-toplevel')) === resolve(ROOT) ? git('rev-parse', 'HEAD') : undefined;
  } catch {
    return undefined;
  }
}

let cached: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  if (cached !== undefined) return cached;
  // The bundle says what it was built from; the sources (through tsx) ask git, which costs a few milliseconds once.
  const bundled = typeof SHORTCUT_WEBHOOK_BUILD_COMMIT === 'string' ? SHORTCUT_WEBHOOK_BUILD_COMMIT : undefined;
  const commit = bundled === undefined ? checkoutCommit() : bundled || undefined;
  cached = Object.freeze({ version: packageVersion(), commit, node: process.version });
  return cached;
}

/** `shortcut-webhook/<version>` (e.g. `shortcut-webhook/0.2.0`): how the product names itself to API servers. */
export function userAgent(info: BuildInfo = buildInfo()): string {
  return `${PRODUCT}/${info.version}`;
}
