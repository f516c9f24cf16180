// The Dockerfile read as instructions: what the image tests check, and how the admission benchmark builds and starts
// the webhook exactly as the image does.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { repoPath, repoRoot } from './paths.ts';

export interface Instruction { readonly keyword: string; readonly args: string; readonly stage: number }

/** Dockerfile instructions with continuation lines joined and comments dropped, numbered by stage. */
export function instructions(text: string): Instruction[] {
  const joined = text.split('\n').filter((line) => !/^\s*#/.test(line)).join('\n').replace(/\\\n/g, ' ');
  const result: Instruction[] = [];
  let stage = -1;
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!match?.[1]) continue;
    if (match[1] === 'FROM') stage += 1;
    result.push({ keyword: match[1], args: (match[2] ?? '').replace(/\s+/g, ' ').trim(), stage });
  }
  return result;
}

export function readDockerfile(): Instruction[] {
  return instructions(readFileSync(repoPath('Dockerfile'), 'utf8'));
}

/** The arguments between `node` and the bundle in the JSON-form ENTRYPOINT of the final stage. */
export function entrypointNodeFlags(dockerfile: readonly Instruction[] = readDockerfile()): string[] {
  const last = Math.max(...dockerfile.map((instruction) => instruction.stage));
  const line = dockerfile.find((instruction) => instruction.keyword === 'ENTRYPOINT' && instruction.stage === last)?.args;
  const entrypoint: unknown = JSON.parse(line ?? 'null');
  if (!Array.isArray(entrypoint) || entrypoint[0] !== 'node' || !entrypoint.every((arg) => typeof arg === 'string')) {
    throw new Error(`the Dockerfile's ENTRYPOINT is not ["node", ...flags, bundle]: ${line ?? 'none'}`);
  }
  return entrypoint.slice(1).filter((arg: string) => arg.startsWith('--'));
}

export const IMAGE_BUNDLE = 'dist/shortcut-webhook.mjs';

/**
 * Runs the Dockerfile's own build step (build/bundle.js) against this checkout, writing the bundle's files beside
 * `outfile` instead of into dist/. `outfile` must lie inside the checkout, so that the bundle's packages resolve, and
 * be named as IMAGE_BUNDLE is; its folder gets the bundle's chunks too.
 */
export function buildImageBundle(outfile: string, dockerfile: readonly Instruction[] = readDockerfile()): { status: number | null; stderr: string } {
  const build = dockerfile.find((instruction) => instruction.keyword === 'RUN' && instruction.args.includes('build/bundle.js'));
  const outdir = dirname(IMAGE_BUNDLE);
  if (basename(outfile) !== basename(IMAGE_BUNDLE)) return { status: null, stderr: `${outfile} is not named ${basename(IMAGE_BUNDLE)}` };
  const command = (build?.args ?? '').replace(`--outdir ${outdir}`, `--outdir ${dirname(outfile)}`);
  if (!command.includes(dirname(outfile))) return { status: null, stderr: `the build step does not write ${IMAGE_BUNDLE}` };
  // Docker runs RUN lines with /bin/sh -c in WORKDIR, which holds a copy of this checkout.
  const result = spawnSync('/bin/sh', ['-c', command], { cwd: repoRoot, encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}
