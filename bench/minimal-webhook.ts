// The floor for the webhook's job in Node, for the bench section "writepath": node:https, parse the review, swap the
// prefix of LIQO.md's shortcut (10.63.0.0/16 -> 10.61.0.0/16) in every address, the JSON Patch of it with the two
// annotations the product writes, and the answer. No framework, no metrics, no logging, no validation beyond what
// the job needs. Not product code: the bench bundles it and runs it with the product's node flags.
//   node minimal-webhook.mjs PORT CERT KEY [HOST]     prints "listening" once it accepts connections
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const [port, certFile, keyFile, host = '127.0.0.1'] = process.argv.slice(2);
const FROM = '10.63.';
const TO = '10.61.';
const SHORTCUT = 'liqo.io/shortcut-addresses';
const ORIGINAL = 'liqo.io/shortcut-original-addresses';

interface Slice { metadata?: { annotations?: Record<string, string> }; endpoints?: { addresses?: string[] }[] }
interface Review { request: { uid: string; object: Slice } }

function patchOf(slice: Slice): unknown[] {
  const operations: unknown[] = [];
  const flagged: string[] = [];
  const originals: Record<string, string> = {};
  // Liqo writes hub addresses (10.63.x.y): each one becomes the shortcut's, and is recorded as the product records it.
  (slice.endpoints ?? []).forEach((endpoint, i) => (endpoint.addresses ?? []).forEach((address, j) => {
    if (!address.startsWith(FROM)) return;
    const out = TO + address.slice(FROM.length);
    operations.push({ op: 'replace', path: `/endpoints/${i}/addresses/${j}`, value: out });
    flagged.push(out);
    originals[out] = address;
  }));
  const annotations = slice.metadata?.annotations;
  const wanted = { [SHORTCUT]: flagged.join(','), [ORIGINAL]: JSON.stringify(originals) };
  if (annotations === undefined) operations.push({ op: 'add', path: '/metadata/annotations', value: wanted });
  else {
    for (const [key, value] of Object.entries(wanted)) {
      if (annotations[key] !== value) operations.push({ op: key in annotations ? 'replace' : 'add', path: `/metadata/annotations/${key.replace('/', '~1')}`, value });
    }
  }
  return operations;
}

createServer({ cert: readFileSync(certFile ?? ''), key: readFileSync(keyFile ?? '') }, (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString()) as Review;
    const patch = patchOf(review.request.object);
    const answer = { uid: review.request.uid, allowed: true,
      ...(patch.length === 0 ? {} : { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }) };
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: answer });
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
}).listen(Number(port), host, () => process.stdout.write('listening\n'));
// Ends on SIGTERM as a pod does, through exit, so that node writes a profile it was asked for (--cpu-prof).
process.once('SIGTERM', () => process.exit(0));
