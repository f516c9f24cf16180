// Reads `--shortcuts` paths: files with one or more YAML/JSON documents, or folders of such files.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocuments, type Document } from '../util/documents.ts';
import { failure, success, type Result } from '../core/result.ts';
import { errorMessage } from '../util/errors.ts';
import { fccsFromDocuments, type FccDocuments } from './fcc-documents.ts';

const DOCUMENT_FILE = /\.(ya?ml|json)$/i;

export interface ShortcutFiles extends FccDocuments {
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
  readonly files: readonly { readonly file: string; readonly text: string }[];
  readonly fingerprint: string;
}

export type ReadShortcutTexts = Result<ShortcutTexts>;

export async function readShortcutTexts(paths: readonly string[]): Promise<ReadShortcutTexts> {
  const names: string[] = [];
  for (const path of paths) {
    try {
      names.push(...await filesUnder(path));
    } catch (error) {
      return failure(`cannot read shortcuts ${path}: ${errorMessage(error)}`);
    }
  }
  const files: { file: string; text: string }[] = [];
  for (const file of names) {
    try {
      files.push({ file, text: await readFile(file, 'utf8') });
    } catch (error) {
      return failure(`cannot read shortcuts ${file}: ${errorMessage(error)}`);
    }
  }
  return success({ files, fingerprint: files.map(({ file, text }) => `${file}\0${text}`).join('\0') });
}

export function parseShortcutTexts(texts: ShortcutTexts): LoadedShortcutFiles {
  const documents: Document[] = [];
  for (const { file, text } of texts.files) {
    const parsed = parseDocuments(text, file);
    if (!parsed.ok) return failure(`invalid shortcuts ${parsed.message}`);
    documents.push(...parsed.value);
  }
  return success({ ...fccsFromDocuments(documents), files: texts.files.map(({ file }) => file), fingerprint: texts.fingerprint });
}

export async function loadShortcutFiles(paths: readonly string[]): Promise<LoadedShortcutFiles> {
  const texts = await readShortcutTexts(paths);
  return texts.ok ? parseShortcutTexts(texts.value) : texts;
}
