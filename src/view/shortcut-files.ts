// Reads `--shortcuts` and `--hub` paths: files with one or more YAML/JSON documents, or folders of such files.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocuments, type Document } from '../util/documents.ts';
import { failure, success, type Result } from '../core/result.ts';
import { errorMessage } from '../util/errors.ts';
import { indexHubIps } from '../core/hub-ipam.ts';
import { readerBinding, type HubPart } from '../core/hubs.ts';
import { fccsFromDocuments, hubFromDocuments, type FccDocuments } from './fcc-documents.ts';

/**
 * Where the view's files are: the leaf's (`--shortcuts`) and the hubs' (`--hub`, optional), the latter as given:
 * `PATH` for the one hub an unbound reader stands for, `ID=PATH` for the hub `ID` (core/hubs.ts readerBinding).
 */
export interface ViewPaths {
  readonly shortcuts: readonly string[];
  readonly hub: readonly string[];
}

const DOCUMENT_FILE = /\.(ya?ml|json)$/i;

export interface ShortcutFiles extends FccDocuments {
  /** One part per hub the `--hub` files name (the unbound files together), in the order first given; none without. */
  readonly hubs: readonly HubPart[];
  /** Every file read, in order: what a watcher must look at. */
  readonly files: readonly string[];
  /** The text read, joined: unchanged text means an unchanged view, so rereads can be skipped cheaply. */
  readonly fingerprint: string;
}

export type LoadedShortcutFiles = Result<ShortcutFiles>;

/**
 * Folders are read in name order, skipping dot entries: a mounted ConfigMap or Secret keeps each file once as
 * `name -> ..data/name` and its real copies under `..<timestamp>/`, which must not be read twice.
 */
async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const entries = (await readdir(path)).filter((name) => !name.startsWith('.')).sort();
  const files: string[] = [];
  for (const name of entries) {
    const child = join(path, name);
    const childInfo = await stat(child).catch(() => undefined);
    if (childInfo?.isDirectory()) files.push(...await filesUnder(child));
    else if (childInfo?.isFile() && DOCUMENT_FILE.test(name)) files.push(child);
  }
  return files;
}

/** The files' text as read: comparing it first spares a poll the parse of an unchanged (possibly large) view. */
export interface ShortcutTexts {
  readonly files: readonly { readonly file: string; readonly text: string; readonly role: 'shortcuts' | 'hub'; readonly hub?: string | undefined }[];
  readonly fingerprint: string;
}

export type ReadShortcutTexts = Result<ShortcutTexts>;

export async function readShortcutTexts(paths: ViewPaths): Promise<ReadShortcutTexts> {
  const names: { file: string; role: 'shortcuts' | 'hub'; hub: string | undefined }[] = [];
  for (const role of ['shortcuts', 'hub'] as const) {
    for (const given of paths[role]) {
      const { hub, value: path } = role === 'hub' ? readerBinding(given) : { hub: undefined, value: given };
      try {
        names.push(...(await filesUnder(path)).map((file) => ({ file, role, hub })));
      } catch (error) {
        return failure(`cannot read ${role} ${path}: ${errorMessage(error)}`);
      }
    }
  }
  const files: { file: string; text: string; role: 'shortcuts' | 'hub'; hub: string | undefined }[] = [];
  for (const { file, role, hub } of names) {
    try {
      files.push({ file, role, hub, text: await readFile(file, 'utf8') });
    } catch (error) {
      return failure(`cannot read ${role} ${file}: ${errorMessage(error)}`);
    }
  }
  return success({ files, fingerprint: files.map(({ file, role, hub, text }) => `${role}\0${hub ?? ''}\0${file}\0${text}`).join('\0') });
}

export function parseShortcutTexts(texts: ShortcutTexts): LoadedShortcutFiles {
  const leafDocuments: Document[] = [];
  // By hub, in the order first given: the unbound files (key undefined) are one hub's, as each bound ID's are.
  const hubDocuments = new Map<string | undefined, Document[]>();
  for (const { file, text, role, hub } of texts.files) {
    const parsed = parseDocuments(text, file);
    if (!parsed.ok) return failure(`invalid ${role} ${parsed.message}`);
    if (role === 'shortcuts') leafDocuments.push(...parsed.value);
    else hubDocuments.set(hub, [...hubDocuments.get(hub) ?? [], ...parsed.value]);
  }
  const leaf = fccsFromDocuments(leafDocuments);
  const ignored = [...leaf.ignored];
  const hubs: HubPart[] = [];
  for (const [id, documents] of hubDocuments) {
    const hub = hubFromDocuments(documents);
    ignored.push(...hub.ignored);
    // Given files make the hub known, even with no IP in them yet: a hub that offloaded nothing has none.
    hubs.push({ id, ipam: { known: true, ips: indexHubIps(hub.ips), configurations: hub.configurations }, fccs: hub.fccs });
  }
  return success({
    fccs: leaf.fccs,
    tunnels: leaf.tunnels,
    configurations: leaf.configurations,
    consumers: leaf.consumers,
    hubs,
    ignored,
    files: texts.files.map(({ file }) => file),
    fingerprint: texts.fingerprint,
  });
}

export async function loadShortcutFiles(paths: ViewPaths): Promise<LoadedShortcutFiles> {
  const texts = await readShortcutTexts(paths);
  return texts.ok ? parseShortcutTexts(texts.value) : texts;
}
