import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export function repoPath(...parts: string[]): string {
  return join(repoRoot, ...parts);
}
