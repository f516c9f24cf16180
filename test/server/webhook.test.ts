// The webhook over real HTTPS (HTTP/1.1 and HTTP/2), with certificates made at test time by certs/make-certs.sh.
import assert from 'node:assert/strict';
import tls, { connect as tlsConnect } from 'node:tls';
import { after, before, test } from 'node:test';
import { Agent } from 'node:https';
import { decodeConfiguration } from '../../src/core/leaf-views.ts';
import { configurationObject, fcc, reviewObject, sliceObject } from '../support/builders.ts';
import { connect2, post1, post2 } from '../support/https-client.ts';
import { startHarness, type Harness } from '../support/webhook-harness.ts';

let harness: Harness;
before(async () => { harness = await startHarness({ fccs: [fcc()] }); });
after(async () => { await harness.close(); });

const WORKED_PATCH = [
  { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' },
  { op: 'add', path: '/metadata/annotations', value: {
    'liqo.io/shortcut-addresses': '10.61.0.151',
    'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}',
  } },
];

function decodePatch(body: string): unknown {
  const review = JSON.parse(body);
  assert.equal(review.response.allowed, true);
  assert.equal(review.response.patchType, 'JSONPatch');
  return JSON.parse(Buffer.from(review.response.patch, 'base64').toString());
}

test('answers a review over HTTP/1.1 with the worked example patch and the same uid', async () => {
  const answer = await post1(`${harness.url}/?x`, harness.certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'uid-1' })));
  assert.equal(answer.status, 200);
  assert.equal(answer.httpVersion, '1.1');
  assert.equal(JSON.parse(answer.body).response.uid, 'uid-1');
  assert.equal(JSON.parse(answer.body).apiVersion, 'admission.k8s.io/v1');
  assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
});

test('a dry-run review gets the same patch as the real write (SPEC §4: dryRun is handled identically)', async () => {
  const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'dry', dryRun: true })));
  assert.equal(JSON.parse(answer.body).response.uid, 'dry');
  assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
});

test('answers over HTTP/2 negotiated by ALPN, many reviews on one session', async () => {
  const session = await connect2(harness.url, harness.certs.ca);
  try {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      post2(session, JSON.stringify(reviewObject(sliceObject(), { uid: `h2-${i}` })))));
    answers.forEach((answer, i) => {
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.body).response.uid, `h2-${i}`);
      assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
    });
    assert.equal(session.alpnProtocol, 'h2');
  } finally {
    session.close();
  }
});

test('an UPDATE is patched from its object alone, whatever oldObject holds', async () => {
  const bodies = [
    reviewObject(sliceObject(), { operation: 'UPDATE', oldObject: sliceObject({ addresses: [['10.63.0.9'], ['10.63.0.10']] }) }),
    // A key "oldObject" inside the object comes first in the body: it must not be taken for the review's.
    reviewObject(sliceObject({ extra: { oldObject: { addresses: ['10.63.0.7'] } } }), { operation: 'UPDATE', oldObject: sliceObject() }),
  ];
  for (const body of bodies) {
    const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(body));
    assert.equal(answer.status, 200);
    assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
  }
  const broken = JSON.stringify(bodies[0]).replace('"oldObject":{', '"oldObject":{]');
  assert.equal((await post1(harness.url, harness.certs.ca, broken)).status, 400);
});

test('an unchanged slice is allowed without a patch', async () => {
  const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject({ addresses: [['10.200.0.1']] }), { uid: 'u' })));
  assert.deepEqual(JSON.parse(answer.body), { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true } });
});

test('a v1beta1 review is answered in v1beta1', async () => {
  const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject(), { apiVersion: 'admission.k8s.io/v1beta1' })));
  assert.equal(JSON.parse(answer.body).apiVersion, 'admission.k8s.io/v1beta1');
  assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
});

test('a DELETE review is allowed unchanged', async () => {
  const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject(), { operation: 'DELETE' })));
  assert.equal(JSON.parse(answer.body).response.patch, undefined);
  assert.equal(JSON.parse(answer.body).response.allowed, true);
});

const refusals: readonly [string, string | Buffer, string | null, number, RegExp][] = [
  ['truncated JSON', '{"apiVersion":"admission.k8s.io/v1","kind":"Adm', 'application/json', 400, /not valid JSON/],
  ['an empty body', '', 'application/json', 400, /JSON|empty/i],
  ['JSON that is not a review', '{"hello":"world"}', 'application/json', 400, /malformed AdmissionReview: apiVersion/],
  ['a review without a uid', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }), 'application/json', 400, /uid/],
  ['a JSON array', '[]', 'application/json', 400, /not a JSON object/],
  // Broken inside the endpoints, the part the rewrite reads: refused like any other invalid JSON.
  ...['[{"addresses":["10.63.0.1"],}]', '[{"addresses":["10.63.0.1"] "x":1}]', '[{"addresses":["10.63.0.1"],"port":01}]', '[{"addresses":["10.63.0.1\\x"]}]']
    .map((endpoints): [string, string, string, number, RegExp] => [`a review with endpoints ${endpoints}`,
      JSON.stringify(reviewObject(sliceObject(), { operation: 'UPDATE', oldObject: sliceObject() }))
        .replace(/"endpoints":\[.*?\],"ports"/, `"endpoints":${endpoints},"ports"`), 'application/json', 400, /not valid JSON/]),
  ['a text/plain body', 'hello', 'text/plain', 415, /Content-Type must be application\/json/],
  ['a YAML body', 'apiVersion: v1', 'application/yaml', 415, /Content-Type/],
  ['a review without a Content-Type', JSON.stringify(reviewObject(sliceObject())), null, 415, /Content-Type must be application\/json, got null/],
  ['an oversized body', Buffer.alloc(7 * 1024 * 1024 + 10, 0x20), 'application/json', 413, /7 MiB/],
];
for (const [name, body, contentType, status, message] of refusals) {
  test(`${name} gets ${status} with a clear message`, async () => {
    const logged = harness.logs.length;
    const answer = await post1(harness.url, harness.certs.ca, body, { contentType });
    assert.equal(answer.status, status);
    assert.match(JSON.parse(answer.body).message, message);
    // Every refusal is logged once, with its status, whichever layer refused it.
    const lines = harness.logs.slice(logged).filter((line) => line.includes('"msg":"request refused"'));
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', new RegExp(`"status":${status}`));
  });
}

test('a JSON body with a charset parameter is accepted', async () => {
  const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject())), { contentType: 'application/json; charset=utf-8' });
  assert.equal(answer.status, 200);
});

test('a body of exactly 7 MiB minus a little is read, not refused', async () => {
  const review = JSON.stringify(reviewObject(sliceObject()));
  const padded = review.slice(0, -1) + ' '.repeat(7 * 1024 * 1024 - review.length - 100) + '}';
  const answer = await post1(harness.url, harness.certs.ca, padded);
  assert.equal(answer.status, 200);
  assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
});

test('an unknown path is 404', async () => {
  const answer = await post1(harness.url, harness.certs.ca, '{}', { path: '/validate' });
  assert.equal(answer.status, 404);
});

test('refuses TLS below 1.2 and accepts TLS 1.2, by its own minimum, not only OpenSSL\'s defaults', async () => {
  // Node's defaults already refuse TLS 1.1, so they are lowered while this server is built: only the webhook's own
  // minVersion can then refuse it.
  const defaults = { ciphers: tls.DEFAULT_CIPHERS, min: tls.DEFAULT_MIN_VERSION };
  tls.DEFAULT_CIPHERS = 'DEFAULT@SECLEVEL=0';
  tls.DEFAULT_MIN_VERSION = 'TLSv1';
  let lenient: Harness;
  try {
    lenient = await startHarness({ fccs: [fcc()] });
  } finally {
    tls.DEFAULT_CIPHERS = defaults.ciphers;
    tls.DEFAULT_MIN_VERSION = defaults.min;
  }
  try {
    const { port } = new URL(lenient.url);
    const handshake = (maxVersion: 'TLSv1.1' | 'TLSv1.2') => new Promise<string | null>((resolve, reject) => {
      const socket = tlsConnect({ port: Number(port), host: '127.0.0.1', ca: lenient.certs.ca, servername: 'localhost', maxVersion,
        minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }, () => { resolve(socket.getProtocol()); socket.end(); });
      socket.on('error', reject);
    });
    await assert.rejects(handshake('TLSv1.1'));
    assert.equal(await handshake('TLSv1.2'), 'TLSv1.2');
  } finally {
    await lenient.close();
  }
});

test('prototype keys in the body are plain data, never a crash or a refusal', async () => {
  const slice = sliceObject({ annotations: { keep: 'x' } });
  const body = JSON.stringify(reviewObject(slice)).replace('"keep":"x"', '"keep":"x","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}');
  const answer = await post1(harness.url, harness.certs.ca, body);
  assert.equal(answer.status, 200);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const patch = decodePatch(answer.body) as { path: string }[];
  assert.deepEqual(patch.map((op) => op.path), ['/endpoints/0/addresses/0', '/metadata/annotations/liqo.io~1shortcut-addresses', '/metadata/annotations/liqo.io~1shortcut-original-addresses']);
});

test('counts reviews by operation and result in the metrics', async () => {
  const agent = new Agent({ keepAlive: true });
  await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject(), { operation: 'UPDATE' })), { agent });
  await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject({ managedBy: 'other' }), { operation: 'UPDATE' })), { agent });
  await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject(), { operation: 'constructor' })), { agent });
  await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(sliceObject({ addresses: [['10.200.0.1']] }), { operation: 'UPDATE' })), { agent });
  agent.destroy();
  const text = await harness.metrics.registry.metrics();
  assert.match(text, /admission_requests_total\{operation="other",result="skipped",resource="endpointslices"\} 1/, 'client-chosen operations do not become labels');
  assert.match(text, /shortcut_webhook_admission_requests_total\{operation="UPDATE",result="patched",resource="endpointslices"\} [1-9]/);
  assert.match(text, /shortcut_webhook_admission_requests_total\{operation="UPDATE",result="skipped",resource="endpointslices"\} [1-9]/);
  assert.match(text, /shortcut_webhook_admission_requests_total\{operation="UPDATE",result="unchanged",resource="endpointslices"\} [1-9]/);
  assert.match(text, /shortcut_webhook_addresses_rewritten_total [1-9]/);
  // SPEC §4: buckets from 100 µs to 10 s.
  assert.match(text, /shortcut_webhook_admission_duration_seconds_bucket\{le="0.0001"\}/);
  assert.match(text, /shortcut_webhook_admission_duration_seconds_bucket\{le="10"\}/);
});

test('a body refused on a route called with the API server\'s ?timeout= is counted for that route, not as unknown', async () => {
  const fresh = await startHarness({ fccs: [fcc()] });
  try {
    // kube-apiserver always calls the webhook with ?timeout=<the configuration's timeoutSeconds>s.
    assert.equal((await post1(fresh.url, fresh.certs.ca, '{"apiVersion":', { path: '/mutate/endpointslices?timeout=5s' })).status, 400);
    assert.equal((await post1(fresh.url, fresh.certs.ca, '{}', { path: '/mutate/shadowendpointslices?timeout=5s', contentType: 'text/plain' })).status, 415);
    const text = await fresh.metrics.registry.metrics();
    assert.match(text, /admission_requests_total\{operation="unknown",result="error",resource="endpointslices"\} 1$/m);
    assert.match(text, /admission_requests_total\{operation="unknown",result="error",resource="shadowendpointslices"\} 1$/m);
    assert.doesNotMatch(text, /resource="unknown"/);
  } finally {
    await fresh.close();
  }
});

test('with --cluster-id, an unlabelled slice is rewritten for that cluster; a restore is counted', async () => {
  const local = await startHarness({ fccs: [fcc()], clusterId: 'cluster2' });
  try {
    const answer = await post1(local.url, local.certs.ca, JSON.stringify(reviewObject(sliceObject({ destination: null }))));
    assert.deepEqual(decodePatch(answer.body), WORKED_PATCH);
  } finally {
    await local.close();
  }
  // Through the shortcut, and the shortcut is down: the address goes back to the hub one, and the metric says so.
  const empty = await startHarness({ fccs: [fcc({ connected: false })] });
  try {
    const rewritten = sliceObject({ addresses: [['10.61.0.151']], annotations: {
      'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' } });
    const answer = await post1(empty.url, empty.certs.ca, JSON.stringify(reviewObject(rewritten, { operation: 'UPDATE', oldObject: rewritten })));
    assert.deepEqual((decodePatch(answer.body) as { path: string; value?: unknown }[])[0], { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.63.0.151' });
    assert.match(await empty.metrics.registry.metrics(), /shortcut_webhook_addresses_restored_total 1\n/);
  } finally {
    await empty.close();
  }
});

test('a rewritten address counts in addresses_rewritten_total only, a restored one in addresses_restored_total only', async () => {
  const fresh = await startHarness({ fccs: [fcc(), fcc({ name: 'down', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.65.0.0/16', connected: false })] });
  const counted = async () => {
    const text = await (await fetch(`${fresh.opsUrl}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^shortcut_webhook_${name} (\\d+)$`, 'm').exec(text)?.[1]);
    return { rewritten: value('addresses_rewritten_total'), restored: value('addresses_restored_total') };
  };
  try {
    await post1(fresh.url, fresh.certs.ca, JSON.stringify(reviewObject(sliceObject({ addresses: [['10.63.0.151'], ['10.63.0.152']] }))));
    assert.deepEqual(await counted(), { rewritten: 2, restored: 0 });
    // A shortcut address whose hub address no usable pair holds any more (its shortcut is down): back to the hub address.
    const stale = sliceObject({ addresses: [['10.65.0.9']], annotations: {
      'liqo.io/shortcut-addresses': '10.65.0.9', 'liqo.io/shortcut-original-addresses': '{"10.65.0.9":"10.64.0.9"}' } });
    const answer = await post1(fresh.url, fresh.certs.ca, JSON.stringify(reviewObject(stale, { operation: 'UPDATE', oldObject: stale })));
    assert.deepEqual((decodePatch(answer.body) as { path: string; value?: unknown }[])[0], { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.64.0.9' });
    assert.deepEqual(await counted(), { rewritten: 2, restored: 1 });
  } finally {
    await fresh.close();
  }
});

test('a change of annotations alone is patched too: an identity pair is flagged, a stale flag removed', async () => {
  const identity = await startHarness({ fccs: [fcc({ aPod: '10.70.0.0/16', aRemapped: '10.70.0.0/16' })] });
  try {
    const flagged = await post1(identity.url, identity.certs.ca, JSON.stringify(reviewObject(sliceObject({ addresses: [['10.70.0.5']] }))));
    assert.deepEqual(decodePatch(flagged.body),
      [{ op: 'add', path: '/metadata/annotations', value: { 'liqo.io/shortcut-addresses': '10.70.0.5' } }]);
    const stale = sliceObject({ addresses: [['10.200.0.1']], annotations: { 'liqo.io/shortcut-addresses': '10.200.0.1', keep: 'me' } });
    const cleared = await post1(identity.url, identity.certs.ca, JSON.stringify(reviewObject(stale, { operation: 'UPDATE', oldObject: stale })));
    assert.deepEqual(decodePatch(cleared.body), [{ op: 'remove', path: '/metadata/annotations/liqo.io~1shortcut-addresses' }]);
    // The flag was the only annotation: the map goes with it.
    const alone = sliceObject({ addresses: [['10.200.0.1']], annotations: { 'liqo.io/shortcut-addresses': '10.200.0.1' } });
    const emptied = await post1(identity.url, identity.certs.ca, JSON.stringify(reviewObject(alone, { operation: 'UPDATE', oldObject: alone })));
    assert.deepEqual(decodePatch(emptied.body), [{ op: 'remove', path: '/metadata/annotations' }]);
  } finally {
    await identity.close();
  }
});

test('every review is timed in the duration histogram, and /metrics says its text format version', async () => {
  const fresh = await startHarness({ fccs: [fcc()] });
  try {
    await post1(fresh.url, fresh.certs.ca, JSON.stringify(reviewObject(sliceObject())));
    await post1(fresh.url, fresh.certs.ca, JSON.stringify(reviewObject(sliceObject({ managedBy: 'endpointslice-controller.k8s.io' }))));
    const response = await fetch(`${fresh.opsUrl}/metrics`);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.match(text, /^shortcut_webhook_admission_duration_seconds_count 2$/m);
    assert.match(text, /^shortcut_webhook_admission_duration_seconds_bucket\{le="10"\} 2$/m);
  } finally {
    await fresh.close();
  }
});

test('says why addresses were left alone: addresses_untouched_total by reason', async () => {
  const local = await startHarness({ fccs: [fcc()] });
  try {
    // cluster2 sees its hub cluster1's external CIDR at 10.71/16: where upstream Liqo reflects peer pods.
    local.store.publishConfigurations([decodeConfiguration(configurationObject({ peer: 'cluster1' }))]);
    const review = (addresses: string[], destination = 'cluster2') =>
      post1(local.url, local.certs.ca, JSON.stringify(reviewObject(sliceObject({ destination, addresses: [addresses] }))));
    await review(['10.71.0.9', '10.71.0.10', '10.63.0.5', '10.200.0.1', '010.0.0.1']);
    await review(['10.63.0.6'], 'cluster7');
    const text = await local.metrics.registry.metrics();
    assert.match(text, /shortcut_webhook_addresses_untouched_total\{reason="hub-external"\} 2$/m);
    assert.match(text, /shortcut_webhook_addresses_untouched_total\{reason="no-pair"\} 1$/m);
    assert.match(text, /shortcut_webhook_addresses_untouched_total\{reason="not-canonical"\} 1$/m);
    assert.match(text, /shortcut_webhook_addresses_untouched_total\{reason="not-hub-external"\} 1$/m);
    assert.match(text, /shortcut_webhook_addresses_rewritten_total 1$/m);
  } finally {
    await local.close();
  }
});
