// The versions the webhook has just answered for, so that the healing watch can pass over their stored copies without
// parsing or planning them. Every write the webhook reviews comes back on the healing watch a few milliseconds later;
// planning it again (one parse of the whole object, the rule once more) doubled the product's CPU per write (bench
// section writepath). A version is passed over only where the view has not moved since the answer and the watch's
// raw line carries, verbatim, every member of the object the rule reads as the answer left it: anything else (a write
// the API server let through unreviewed, another webhook's change, a new view) is parsed and planned as before.
//
// The members are compared as the API server writes them (Go's encoding/json: struct fields in order, map keys
// sorted), which JSON.stringify of the parsed request reproduces for what Liqo writes; where it does not (Go escapes
// `<`, `>` and `&`), the line does not match and is planned: a miss costs the plan it would have cost anyway.

import type { JsonMember } from '../core/json.ts';

/** A top-level or metadata member of the stored object (`endpoints`) and its value's JSON text, undefined for absent. */
export type AnsweredMember = JsonMember;

interface Answer {
  readonly viewVersion: number;
  readonly members: readonly AnsweredMember[];
}

/** Answers kept waiting for their stored copy: each is matched within milliseconds, or replaced by the object's next answer. */
const DEFAULT_CAPACITY = 256;

/** The text between `"<field>":"` and the next quote, at its first place in the line (names and versions hold no quote). */
function firstString(line: string, field: string): string | undefined {
  const marker = `"${field}":"`;
  const start = line.indexOf(marker);
  if (start === -1) return undefined;
  const from = start + marker.length;
  const end = line.indexOf('"', from);
  return end === -1 ? undefined : line.slice(from, end);
}

/**
 * The event type a watch reader gets for a line passed over: as a bookmark, it moves the watch's resourceVersion and
 * says the server is alive, and hands no object over.
 */
export const PASSED_OVER = 'PASSED-OVER';

/** What a watch line passed over still tells its reader: the version the watch stands at. */
export interface PassedOver {
  readonly resourceVersion: string;
}

export interface AnsweredVersionsOptions {
  /** Whether a healing watch reads the answers now (the leader's; a replica that does not lead notes nothing). */
  readonly wanted?: () => boolean;
  readonly capacity?: number;
}

export class AnsweredVersions {
  private readonly answers = new Map<string, Answer>();
  private readonly capacity: number;

  constructor(private readonly options: AnsweredVersionsOptions = {}) {
    this.capacity = options.capacity ?? DEFAULT_CAPACITY;
  }

  /** Whether an answer is worth noting: its members cost the review a copy of the object's text. */
  wanted(): boolean {
    return this.options.wanted?.() ?? true;
  }

  /** The webhook answered for `plural` `namespace/name` on view `viewVersion`: what it will be stored as carries `members`. */
  note(plural: string, namespace: string, name: string, viewVersion: number, members: readonly AnsweredMember[]): void {
    const key = `${plural}/${namespace}/${name}`;
    this.answers.delete(key);
    this.answers.set(key, { viewVersion, members });
    if (this.answers.size > this.capacity) {
      const oldest = this.answers.keys().next();
      if (oldest.done !== true) this.answers.delete(oldest.value);
    }
  }

  /**
   * The watch line (`{"type":"ADDED"|"MODIFIED","object":{...}}` as the API server sent it) of the version answered
   * last for its object, stored as answered, with the view still at `viewVersion`: its resourceVersion, and the answer
   * is forgotten. Undefined for any other line, which is then parsed and planned.
   */
  passOver(plural: string, line: string, viewVersion: number): PassedOver | undefined {
    if (this.answers.size === 0) return undefined;
    if (!line.startsWith('{"type":"MODIFIED"') && !line.startsWith('{"type":"ADDED"')) return undefined;
    const name = firstString(line, 'name');
    const namespace = firstString(line, 'namespace');
    const resourceVersion = firstString(line, 'resourceVersion');
    if (name === undefined || namespace === undefined || resourceVersion === undefined) return undefined;
    const key = `${plural}/${namespace}/${name}`;
    const answer = this.answers.get(key);
    if (answer === undefined || answer.viewVersion !== viewVersion) return undefined;
    for (const { name: member, text } of answer.members) {
      const marker = `"${member}":`;
      const at = line.indexOf(marker);
      if (text === undefined) {
        if (at !== -1) return undefined;
        continue;
      }
      if (at === -1) return undefined;
      const from = at + marker.length;
      if (!line.startsWith(text, from)) return undefined;
      const after = line.charCodeAt(from + text.length);
      if (after !== 0x2c /* , */ && after !== 0x7d /* } */) return undefined;
    }
    this.answers.delete(key);
    return { resourceVersion };
  }
}
