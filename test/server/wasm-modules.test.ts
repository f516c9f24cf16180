// Each committed WebAssembly binary must be exactly what `npm run wasm` makes of its text source: the binary is what
// runs, the source is what is reviewed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assemble, MODULES } from '../../scripts/wasm.ts';

for (const module of MODULES) {
  test(`the committed ${module.target} is exactly what \`npm run wasm\` makes of ${module.source}`, async () => {
    const committed: unknown = (await import(`../../src/server/${module.target}`) as Record<string, unknown>)[module.constant];
    assert.ok(committed instanceof Uint8Array);
    assert.deepEqual(Buffer.from(await assemble(module)), Buffer.from(committed));
  });
}
