import assert from 'node:assert/strict';
import { test } from 'node:test';
import { containsAddress, hasHostBits, overlaps, parseCidr, remapAddress, type Cidr } from '../../src/core/cidr.ts';
import { ipv4, ipv6 } from '../../src/core/ip.ts';

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  assert.ok(parsed, `${text} should parse`);
  return parsed;
}

const accepted: readonly [string, string][] = [
  ['10.63.0.0/16', '10.63.0.0/16'],
  ['10.63.1.7/16', '10.63.0.0/16'],
  ['0.0.0.0/0', '0.0.0.0/0'],
  ['10.0.0.1/32', '10.0.0.1/32'],
  ['fd00:0:0:1::/64', 'fd00:0:0:1::/64'],
  ['FD00::5/64', 'fd00::/64'],
  ['::/0', '::/0'],
];
for (const [text, canonical] of accepted) {
  test(`CIDR ${text} parses with host bits cleared to ${canonical}`, () => assert.equal(cidr(text).text, canonical));
}

for (const [text, expected] of [['10.63.0.0/16', false], ['10.63.1.7/16', true], ['10.0.0.1/32', false], ['0.0.0.0/0', false],
  ['1.0.0.0/0', true], ['fd00::/64', false], ['FD00::/64', false], ['fd00::5/64', true], ['fd00:0:0:1::/63', true]] as const) {
  test(`${text} ${expected ? 'has' : 'has no'} host bits set`, () => assert.equal(hasHostBits(text, cidr(text)), expected));
}

const refused = ['10.63.0.0', '10.63.0.0/33', '10.63.0.0/016', '10.63.0.0/-1', '10.63/16', '010.63.0.0/16',
  '10.63.0.0/16/16', 'fd00::/129', 'fe80::%eth0/64', '10.63.0.0/ 16', '', '/16', '10.63.0.0/', 'x/8', '10.63.0.0/1e1'];
for (const text of refused) {
  test(`CIDR ${JSON.stringify(text)} is refused`, () => assert.equal(parseCidr(text), undefined));
}

test('remapping keeps the host part and swaps the prefix', () => {
  const from = cidr('10.63.0.0/16');
  const to = cidr('10.61.0.0/16');
  assert.ok(from.family === 'IPv4' && to.family === 'IPv4');
  assert.equal(remapAddress(ipv4, ipv4.parseCanonical('10.63.0.151') ?? 0, from, to), ipv4.parseCanonical('10.61.0.151'));
  assert.equal(remapAddress(ipv4, ipv4.parseCanonical('10.63.255.254') ?? 0, from, to), ipv4.parseCanonical('10.61.255.254'));
});

test('remapping into a /10 keeps the low 22 bits, as Liqo RemapMask does', () => {
  const from = cidr('10.0.0.0/10');
  const to = cidr('40.0.0.0/10');
  assert.ok(from.family === 'IPv4' && to.family === 'IPv4');
  assert.equal(ipv4.format(remapAddress(ipv4, ipv4.parseCanonical('10.1.0.1') ?? 0, from, to)), '40.1.0.1');
});

test('remapping works on IPv6 host bits', () => {
  const from = cidr('fd00:63::/32');
  const to = cidr('fd00:61::/32');
  assert.ok(from.family === 'IPv6' && to.family === 'IPv6');
  assert.equal(ipv6.format(remapAddress(ipv6, ipv6.parseCanonical('fd00:63:1::2') ?? 0n, from, to)), 'fd00:61:1::2');
});

test('overlap needs one family and a shared address', () => {
  assert.equal(overlaps(cidr('10.0.0.0/8'), cidr('10.63.0.0/16')), true);
  assert.equal(overlaps(cidr('10.63.0.0/16'), cidr('10.64.0.0/16')), false);
  assert.equal(overlaps(cidr('0.0.0.0/0'), cidr('::/0')), false);
});

test('containsAddress holds at both ends of a block and not one address beyond either', () => {
  const v4 = cidr('10.63.0.0/16');
  assert.deepEqual(['10.62.255.255', '10.63.0.0', '10.63.255.255', '10.64.0.0'].map((a) => containsAddress(v4, a)), [false, true, true, false]);
  const v6 = cidr('fd00:63::/32');
  assert.deepEqual(['fd00:62:ffff:ffff:ffff:ffff:ffff:ffff', 'fd00:63::', 'fd00:63:ffff:ffff:ffff:ffff:ffff:ffff', 'fd00:64::']
    .map((a) => containsAddress(v6, a)), [false, true, true, false]);
});

test('containsAddress takes only canonical text of the block\'s own family', () => {
  assert.equal(containsAddress(cidr('10.63.0.0/16'), '010.63.0.1'), false);
  assert.equal(containsAddress(cidr('10.63.0.0/16'), '::ffff:10.63.0.1'), false);
  assert.equal(containsAddress(cidr('fd00:63::/32'), 'FD00:63::1'), false);
  assert.equal(containsAddress(cidr('fd00:63::/32'), '10.63.0.1'), false);
});
