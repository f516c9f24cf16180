// Reads `--shortcuts` and `--hub` paths: files with one or more YAML/JSON documents, or folders of such files.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocuments, type Document } from '../util/documents.ts';
import { failure, success, type Result } from '../core/result.ts';
import { errorMessage } from '../util/errors.ts';
import { indexHubIps } from '../core/hub-ipam.ts';
import { HUB_NOT_READ, type HubIpam } from '../core/hub-resolution.ts';
import { fccsFromDocuments, hubFromDocuments, type FccDocuments } from './fcc-documents.ts';

/** Where the view's files are: the leaf's (`--shortcuts`) and the hub's (`--hub`, optional). */
export interface ViewPaths {
  readonly shortcuts: readonly string[];
  readonly hub: readonly string[];
}

const DOCUMENT_FILE = /\.(ya?ml|json)$/i;

export interface ShortcutFiles extends FccDocuments {
  /** The hub's IPAM objects from `--hub`; not known without such files. */
  readonly hub: HubIpam;
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
  readonly files: readonly { readonly file: string; readonly text: string; readonly role: 'shortcuts' | 'hub' }[];
  readonly fingerprint: string;
}

export type ReadShortcutTexts = Result<ShortcutTexts>;

export async function readShortcutTexts(paths: ViewPaths): Promise<ReadShortcutTexts> {
  const names: { file: string; role: 'shortcuts' | 'hub' }[] = [];
  for (const role of ['shortcuts', 'hub'] as const) {
    for (const path of paths[role]) {
      try {
        names.push(...(await filesUnder(path)).map((file) => ({ file, role })));
      } catch (error) {
        return failure(`cannot read ${role} ${path}: ${errorMessage(error)}`);
      }
    }
  }
  const files: { file: string; text: string; role: 'shortcuts' | 'hub' }[] = [];
  for (const { file, role } of names) {
    try {
      files.push({ file, role, text: await readFile(file, 'utf8') });
    } catch (error) {
      return failure(`cannot read ${role} ${file}: ${errorMessage(error)}`);
    }
  }
  return success({ files, fingerprint: files.map(({ file, role, text }) => `${role}\0${file}\0${text}`).join('\0') });
}

export function parseShortcutTexts(texts: ShortcutTexts, options: { readonly hubGiven: boolean }): LoadedShortcutFiles {
  const documents: Record<'shortcuts' | 'hub', Document[]> = { shortcuts: [], hub: [] };
  for (const { file, text, role } of texts.files) {
    const parsed = parseDocuments(text, file);
    if (!parsed.ok) return failure(`invalid ${role} ${parsed.message}`);
    documents[role].push(...parsed.value);
  }
  const leaf = fccsFromDocuments(documents.shortcuts);
  const hub = hubFromDocuments(documents.hub);
  return success({
    fccs: [...leaf.fccs, ...hub.fccs],
    tunnels: leaf.tunnels,
    configurations: leaf.configurations,
    // Given files make the hub known, even with no IP in them yet: a hub that offloaded nothing has none.
    hub: options.hubGiven ? { known: true, ips: indexHubIps(hub.ips), configurations: hub.configurations } : HUB_NOT_READ,
    ignored: [...leaf.ignored, ...hub.ignored],
    files: texts.files.map(({ file }) => file),
    fingerprint: texts.fingerprint,
  });
}

export async function loadShortcutFiles(paths: ViewPaths): Promise<LoadedShortcutFiles> {
  const texts = await readShortcutTexts(paths);
  return texts.ok ? parseShortcutTexts(texts.value, { hubGiven: paths.hub.length > 0 }) : texts;
}
