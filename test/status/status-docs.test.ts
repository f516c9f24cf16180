// docs/reference.md describes `status` as it is: every flag, every column it prints, and exit codes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { STATUS_FLAGS } from '../../src/config.ts';
import { addressLines, peerLines, serviceLines } from '../../src/commands/status.ts';

const reference = readFileSync(new URL('../../docs/reference.md', import.meta.url), 'utf8');
const section = reference.slice(reference.indexOf('### status'), reference.indexOf('### version'));

test('the reference\'s status section names every flag of status, with its short form', () => {
  assert.ok(section.length > 0);
  for (const [flag, spec] of Object.entries(STATUS_FLAGS)) {
    assert.ok(section.includes(`--${flag}`) || (flag === 'help' && reference.includes('--help')), `--${flag}`);
    if ('short' in spec && flag !== 'help') assert.ok(section.includes(`-${spec.short}`), `-${spec.short}`);
  }
});

test('the reference\'s status section names every column status prints', () => {
  const headers = [peerLines([]), serviceLines([]), addressLines([])].flatMap((lines) => (lines[0] ?? '').split(/ {2,}/));
  assert.ok(headers.length >= 20);
  for (const header of headers) assert.ok(section.includes(`\`${header}\``) || section.includes(`\`${header}\`,`), header);
});
