#!/usr/bin/env node
// `npx shortcut-webhook` right after `npm ci`, without a build step to remember: `npm ci` / `npm install` bundle
// src/ into dist/ (build/bundle.js, the `prepare` script), and this runs that bundle while it was built from the
// sources as they are now (build/source-stamp.js: a hash of src/ and the build inputs, about 2 ms). After any edit
// of src/, or with no bundle at all, it runs the sources through tsx, which compiles them on every start.
import { pathToFileURL } from 'node:url';
import { currentBundle } from '../build/source-stamp.js';

const bundle = currentBundle();
if (bundle !== undefined) {
  // Stack traces name src/ files and lines, as under tsx; the bundle runs main() on process.argv itself.
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/main.ts');
  process.exitCode = await main(process.argv.slice(2));
}
