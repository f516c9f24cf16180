// Thousands of hostile bodies over real HTTPS: every answer is a clean 200/400/413/415, never a 5xx, never a deny,
// and afterwards the server still answers the worked example correctly.
import assert from 'node:assert/strict';
import { Agent } from 'node:https';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Json } from '../../src/core/json.ts';
import { fcc, reviewObject, sliceObject } from '../support/builders.ts';
import { post1, type HttpAnswer } from '../support/https-client.ts';
import { startHarness, type Harness } from '../support/webhook-harness.ts';

let harness: Harness;
let agent: Agent;
before(async () => {
  harness = await startHarness({ fccs: [fcc()] });
  agent = new Agent({ keepAlive: true, maxSockets: 4 });
});
after(async () => {
  agent.destroy();
  await harness.close();
});

const slice = sliceObject();
const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue() as fc.Arbitrary<Json>,
  fc.constantFrom<Json>(null, [], {}, '', 0, -1, 1e308, true, '10.63.0.151', '__proto__'),
  fc.array(fc.constantFrom<Json>('10.63.0.1', null, 5, {}), { maxLength: 2000 }),
);
const keys = ['apiVersion', 'kind', 'request', 'uid', 'operation', 'object', 'metadata', 'annotations', 'labels',
  'endpoints', 'addresses', 'addressType', '__proto__', 'constructor', 'prototype'];

/** A valid review with one field, anywhere along its paths, replaced by something hostile. */
const mutatedReview = fc.tuple(fc.array(fc.constantFrom(...keys), { minLength: 1, maxLength: 4 }), hostileValue).map(([path, value]) => {
  const review = structuredClone(reviewObject(slice)) as Record<string, Json>;
  let node: Record<string, Json> = review;
  for (const key of path.slice(0, -1)) {
    // Own keys only: `review.__proto__` is Object.prototype, and this test runs in the server's own process.
    if (!Object.hasOwn(node, key)) break;
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) break;
    node = next as Record<string, Json>;
  }
  Object.defineProperty(node, path.at(-1) ?? 'x', { value, enumerable: true, writable: true, configurable: true });
  return JSON.stringify(review);
});

const truncated = fc.integer({ min: 0, max: 2000 }).map((cut) => JSON.stringify(reviewObject(slice)).slice(0, cut));
const deep = fc.integer({ min: 1000, max: 20_000 }).map((depth) => `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"d","operation":"CREATE","object":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
const garbage = fc.oneof(fc.string(), fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes).toString('latin1')));
const hugeSlice = fc.integer({ min: 5_000, max: 20_000 }).map((n) => JSON.stringify(reviewObject(sliceObject({ addresses: [Array.from({ length: n }, (_, i) => `10.63.${(i >> 8) & 255}.${i & 255}`)] }))));

const bodies = fc.oneof(
  { weight: 10, arbitrary: mutatedReview },
  { weight: 3, arbitrary: truncated },
  { weight: 3, arbitrary: garbage },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: hugeSlice },
);

test('thousands of hostile bodies get clean answers and leave the server correct', async () => {
  const samples = fc.sample(bodies, 2000);
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < samples.length; i = next++) {
      const body = samples[i] ?? '';
      let answer: HttpAnswer;
      try {
        answer = await post1(harness.url, harness.certs.ca, body, { agent });
      } catch (error) {
        failures.push(`request ${i} failed: ${String(error)}`);
        continue;
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (![200, 400, 413].includes(answer.status)) failures.push(`status ${answer.status} for ${body.slice(0, 200)}`);
      let parsed: { response?: { allowed?: unknown }; message?: unknown };
      try {
        parsed = JSON.parse(answer.body);
      } catch {
        failures.push(`non-JSON answer ${answer.body.slice(0, 100)}`);
        continue;
      }
      if (answer.status === 200 && parsed.response?.allowed !== true) failures.push(`not allowed: ${answer.body.slice(0, 200)}`);
      if (answer.status !== 200 && typeof parsed.message !== 'string') failures.push(`no message: ${answer.body.slice(0, 200)}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  assert.deepEqual(failures.slice(0, 5), []);
  assert.ok((statuses.get(200) ?? 0) > 100 && (statuses.get(400) ?? 0) > 100, JSON.stringify([...statuses]));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);

  const check = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(slice, { uid: 'after-fuzz' })), { agent });
  const review = JSON.parse(check.body);
  assert.equal(review.response.uid, 'after-fuzz');
  assert.deepEqual(JSON.parse(Buffer.from(review.response.patch, 'base64').toString())[0],
    { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' });
  assert.equal(harness.logs.filter((line) => line.includes('"level":"error"')).length, 0, 'no internal errors');
});
