// Folders for a test's files under the OS temp dir, removed once they are no longer needed, whether the tests passed
// or failed: the suite leaves nothing behind (the certificates' folders hold private keys).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

const leftAtExit = new Set<string>();

function removeLeftAtExit(): void {
  for (const dir of leftAtExit) rmSync(dir, { recursive: true, force: true });
}

/**
 * A folder removed when this process exits: for folders a whole test file shares, some made in `before` hooks or
 * cached across tests (a test file runs in a process of its own). Node's top-level `after` is not used: called from
 * inside a hook or a test, it attaches to whatever runs then. Exit comes after a failed test too, and after an uncaught
 * exception; only a killed process leaves the folder.
 */
export function removeAtExit(dir: string): string {
  if (leftAtExit.size === 0) process.once('exit', removeLeftAtExit);
  leftAtExit.add(dir);
  return dir;
}

/** A new folder under the OS temp dir, named `prefix` and a random tail, removed after `test` ends or, without one, at exit. */
export function scratchDir(prefix: string, test?: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (test === undefined) return removeAtExit(dir);
  test.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
