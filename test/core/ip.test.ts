import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatIPv4, formatIPv6, ipv4, ipv6, parseIPv4 } from '../../src/core/ip.ts';
import { isCanonicalAddress } from '../support/builders.ts';

const ipv4Vectors: readonly [string, number | undefined][] = [
  ['10.63.0.151', 0x0a3f0097],
  ['0.0.0.0', 0],
  ['255.255.255.255', 0xffffffff],
  ['010.0.0.1', undefined],
  ['10.01.0.1', undefined],
  ['10.1', undefined],
  ['10.0.0', undefined],
  ['10.0.0.1.', undefined],
  ['.10.0.0.1', undefined],
  ['10..0.1', undefined],
  ['256.0.0.1', undefined],
  ['0x0a.0.0.1', undefined],
  ['10.63.0.151 ', undefined],
  [' 10.63.0.151', undefined],
  ['1e1.0.0.1', undefined],
  ['10.0.0.-1', undefined],
  ['', undefined],
  ['10.0.0.1/32', undefined],
];

for (const [text, expected] of ipv4Vectors) {
  test(`IPv4 ${JSON.stringify(text)} is ${expected === undefined ? 'refused' : 'read strictly'}`, () => {
    assert.equal(parseIPv4(text), expected);
    if (expected !== undefined) assert.equal(formatIPv4(expected), text);
  });
}

const ipv6Canonical: readonly [string, boolean][] = [
  ['fd00::1', true],
  ['2001:db8::1:0:0:1', true],
  ['2001:db8:0:0:1:0:0:1', false],
  ['2001:0db8::1', false],
  ['FD00::1', false],
  ['::', true],
  ['::1', true],
  ['1::', true],
  ['2001:db8:0:1:1:1:1:1', true],
  ['2001:db8::1:1:1:1:1', false],
  ['fe80::1%eth0', false],
  ['::ffff:1.2.3.4', false],
  ['1:2:3:4:5:6:7:8:9', false],
  ['10.0.0.1', false],
  ['fd00::1 ', false],
];

for (const [text, canonical] of ipv6Canonical) {
  test(`IPv6 ${JSON.stringify(text)} is ${canonical ? '' : 'not '}canonical RFC 5952 text`, () => {
    assert.equal(isCanonicalAddress(text, 'IPv6'), canonical);
  });
}

test('RFC 5952 compresses the longest run of zero groups, the first on a tie, never a single group', () => {
  const format = (text: string) => formatIPv6(ipv6.parseLenient(text) ?? -1n);
  assert.equal(format('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
  assert.equal(format('2001:db8:0:1:0:0:0:1'), '2001:db8:0:1::1');
  assert.equal(format('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1');
  assert.equal(format('0:0:0:0:0:0:0:0'), '::');
  assert.equal(format('FD00:0000::00AB'), 'fd00::ab');
});

test('IPv4 addresses are not IPv6 and IPv6 addresses are not IPv4', () => {
  assert.equal(isCanonicalAddress('10.0.0.1', 'IPv6'), false);
  assert.equal(isCanonicalAddress('fd00::1', 'IPv4'), false);
  assert.equal(ipv4.parseCanonical('fd00::1'), undefined);
});
