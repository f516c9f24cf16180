#!/usr/bin/env node
// `npx shortcut-webhook` right after `npm ci`, without a build step to remember: `npm ci` / `npm install` bundle
// src/ into dist/ (build/bundle.js, the `prepare` script), and this runs that bundle while it was built from the
// sources as they are now (build/source-stamp.js: a hash of src/ and the build inputs, about 2 ms). After any edit
// of src/, or with no bundle at all, it runs the sources through tsx, which compiles them on every start.
import module from 'node:module';
import { pathToFileURL } from 'node:url';
import { currentBundle } from '../build/source-stamp.js';
import { warnIfOldNode } from './node-version.js';

warnIfOldNode();

// Node 22.1 and later keep V8's compiled code of every module in a cache under the temporary folder, checked
// against each module's source: a `serve` start compiles fastify, pino and prom-client once, not every time (the
// start-up bench's serve to /readyz went from 9.0x to 7.7x a bare start on Node 24). Without a writable cache
// folder it does nothing; Node 20 has no such cache.
module.enableCompileCache?.();

const bundle = currentBundle();
if (bundle !== undefined) {
  // The bundle runs main() on process.argv itself. Source maps are not turned on here: parsing them took 10 to 30 ms
  // of CPU per start. NODE_OPTIONS=--enable-source-maps gives stack traces in src/ terms (the image turns them on).
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/main.ts');
  process.exitCode = await main(process.argv.slice(2));
}
