// `node --import ./module-record.mjs …` (or in NODE_OPTIONS) with MODULE_RECORD_FILE set: appends to that file the
// URL of every ES module the process resolves (a resolve hook, on the loaders' thread, written as it resolves), and
// at exit the file of every CommonJS module in require's cache (fastify, pino and prom-client are CommonJS, loaded
// by an `import` of the ES side or by require). Plain JavaScript, so that it runs before tsx is registered.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.MODULE_RECORD_FILE;
if (file) {
  register('./module-record-hooks.mjs', import.meta.url, { data: { file } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    const loaded = Object.keys(require.cache).map((path) => pathToFileURL(path).href);
    if (loaded.length > 0) appendFileSync(file, `${loaded.join('\n')}\n`);
  });
}
