import type { ServeConfig } from './config.ts';

export async function serve(_config: ServeConfig): Promise<number> {
  throw new Error('serve is not built yet');
}
