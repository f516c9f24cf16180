#!/usr/bin/env node
// `npm start`: the README's development server, in this process. It makes the development pair in certs/out when
// it is missing (certs/make-certs.sh; git-ignored), then runs `serve` on the examples (the FCC path, examples/stock-liqo and examples/direct-connections) as leaf cluster2, with any
// arguments after `npm start --` appended (a later flag wins: `npm start -- --port 9444`; with your own
// --tls-cert/--tls-key nothing is made).
//
// The server runs in this very process rather than as a child of `sh -c "make-certs && node ..."`: npm passes
// SIGTERM and SIGINT to its script's process, and package.json's `exec` makes that process this one, so stopping
// `npm start` stops the server (a shell in between died on SIGTERM and left the server holding its ports).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const path = (relative) => fileURLToPath(new URL(relative, import.meta.url));
const certs = path('../certs/out/');
const extra = process.argv.slice(2);
const ownTls = extra.some((arg) => /^--tls-(cert|key)(=|$)/.test(arg));
if (!ownTls && !(existsSync(`${certs}tls.crt`) && existsSync(`${certs}tls.key`))) {
  try {
    execFileSync('bash', [path('../certs/make-certs.sh'), '--out', certs], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch {
    // make-certs.sh said why on stderr.
    process.exit(1);
  }
}
process.argv = [process.argv[0] ?? 'node', path('shortcut-webhook.js'), 'serve',
  '--tls-cert', `${certs}tls.crt`, '--tls-key', `${certs}tls.key`,
  '--shortcuts', path('../examples/shortcuts.yaml'), '--shortcuts', path('../examples/stock-liqo/leaf.yaml'),
  '--hub', path('../examples/stock-liqo/hub.yaml'), '--hub', path('../examples/direct-connections/hub.yaml'),
  '--cluster-id', 'cluster2', ...extra];
await import('./shortcut-webhook.js');
