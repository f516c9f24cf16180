// The baseline of section "status": a plain client listing the same objects as `status` does, the way kubectl lists a
// large collection: `node:https` GETs of pages of 500 over one keep-alive connection, each page read whole and parsed
// once, the next asked for with its continue token. Run as its own process (bundled, like the command), exec to exit.
// Prints the number of items listed. Not product code.
//   node plain-list.mjs <server URL> <CA file> <client certificate> <client key> <path with its query>
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';

const [server, caFile, certFile, keyFile, path] = process.argv.slice(2);
if (server === undefined || caFile === undefined || certFile === undefined || keyFile === undefined || path === undefined) {
  throw new Error('usage: plain-list <server> <ca> <cert> <key> <path>');
}
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: readFileSync(caFile), cert: readFileSync(certFile), key: readFileSync(keyFile) });

function page(continueToken: string | undefined): Promise<{ items: unknown[]; metadata?: { continue?: string } }> {
  const url = new URL(path ?? '', server);
  url.searchParams.set('limit', '500');
  if (continueToken !== undefined) url.searchParams.set('continue', continueToken);
  return new Promise((resolve, reject) => {
    request(url, { agent, headers: { accept: 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => { text += chunk; });
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`HTTP ${response.statusCode}: ${text.slice(0, 300)}`));
        else resolve(JSON.parse(text) as { items: unknown[]; metadata?: { continue?: string } });
      });
      response.on('error', reject);
    }).on('error', reject).end();
  });
}

let listed = 0;
let token: string | undefined;
do {
  const answer = await page(token);
  listed += answer.items.length;
  token = answer.metadata?.continue || undefined;
} while (token !== undefined);
agent.destroy();
process.stdout.write(`${listed}\n`);
