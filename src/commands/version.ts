// `shortcut-webhook version`: the build's version, commit and Node.js, as text or one JSON line.
import { EXIT_OK, type Io } from '../cli.ts';
import { buildInfo } from '../version.ts';

export function runVersion(output: 'text' | 'json', io: Pick<Io, 'stdout'>): number {
  const info = buildInfo();
  io.stdout.write(output === 'json'
    ? `${JSON.stringify({ version: info.version, commit: info.commit ?? null, node: info.node })}\n`
    : `shortcut-webhook ${info.version}${info.commit === undefined ? '' : ` (commit ${info.commit})`}, Node.js ${info.node}\n`);
  return EXIT_OK;
}
