// `--shortcuts fcc.yaml` replaced by rename, as editors (vim, VS Code) and `kubectl cp` write a file: a new file takes
// the old one's name, and a watch on the old file sees it go and nothing after. The change must still be read, again
// and again, without the poll's help: the poll here is an hour, so only the folder watch can notice.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { createLogger } from '../../src/log.ts';
import { FileShortcutSource } from '../../src/view/file-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject } from '../support/builders.ts';
import { waitFor } from '../support/wait-for.ts';

const HOUR = 3_600_000;

function targets(store: SnapshotStore): string[] {
  return store.current().forCluster('cluster2').pairs.map((pair) => pair.shortcutPrefix.text);
}

test('a --shortcuts file replaced by rename is read again, each time it is replaced', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-rename-'));
  const file = join(dir, 'fcc.yaml');
  writeFileSync(file, stringify(fccObject()));
  const store = new SnapshotStore();
  const source = new FileShortcutSource({ paths: { shortcuts: [file], hub: [] }, store, logger: createLogger('silent'), pollIntervalMs: HOUR });
  await source.start();
  try {
    assert.deepEqual(targets(store), ['10.61.0.0/16']);
    for (const [i, remapped] of ['10.71.0.0/16', '10.81.0.0/16', '10.91.0.0/16'].entries()) {
      const staging = join(dir, `.fcc.yaml.swp${i}`);
      writeFileSync(staging, stringify(fccObject({ aRemapped: remapped })));
      renameSync(staging, file);
      await waitFor(() => targets(store)[0] === remapped, { description: `replacement ${i + 1} (${remapped}) is read` });
    }
  } finally {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
