// A Node.js older than package.json's `engines` is said once per command, on stderr, and the command goes on (most
// of it works on Node 20; what does not fails on its own). "Once": the first process says it and marks the
// environment, which the processes it starts inherit (npm test's test files, the CLI the tests run).
import { readFileSync } from 'node:fs';

const SAID = 'OLD_NODE_WARNED_BY_SHORTCUT_WEBHOOK';

/** Whether `version` (x.y.z) is below the lower bound `>=A[.B[.C]]`; undefined for a range of another shape. */
export function olderThan(version, range) {
  const bound = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (bound === null) return undefined;
  const have = version.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const need = Number(bound[i + 1] ?? 0);
    const got = have[i] ?? 0;
    if (got !== need) return got < need;
  }
  return false;
}

export function warnIfOldNode() {
  if (process.env[SAID] === '1') return;
  let range;
  try {
    range = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines?.node;
  } catch {
    return;
  }
  if (typeof range !== 'string' || olderThan(process.versions.node, range) !== true) return;
  process.env[SAID] = '1';
  process.stderr.write(`shortcut-webhook: Node.js ${process.versions.node} is older than this package supports (engines: node ${range}); `
    + 'use Node.js 22 or newer (the image runs 24)\n');
}
