import { badRequest } from "@cellar/shared/errors";
import { runInTurns, type Steps } from "@cellar/shared/steps";
import { parseJsonObject } from "./body.ts";
import { ITEMS_PER_TURN } from "./publish.ts";

/**
 * A /raw/batch body parsed in slices (issue 41, flood fairness): JSON.parse of an admitted 2.2 MB
 * body is one piece of 10-19 ms on a loaded machine, and every other tenant's request waits
 * behind it. Here one scan finds the `items` array's elements and parses each on its own,
 * ITEMS_PER_TURN items a turn, then parses the envelope with that array left empty.
 *
 * Same value and same errors as parseJsonObject(text): a text the scan cannot vouch for (not an
 * object, no top-level `items` array, `items` twice) is parsed in one piece by parseJsonObject,
 * so its answer is the old one; any other failure means the text is not valid JSON (on valid
 * JSON the scan is exact, so each piece parses), the old answer too. Checked against the old
 * code on generated bodies (batch-body.test.ts).
 */
export interface BatchJson {
  object: Record<string, unknown>;
  /** Object keys in the text (what body.ts's countKeyTokens counts), or null when not counted. */
  keyTokens: number | null;
}

export async function parseBatchJson(text: string): Promise<BatchJson> {
  const split = await runInTurns(splitBatchJsonInSteps(text), ITEMS_PER_TURN);
  return split ?? { object: parseJsonObject(text), keyTokens: null };
}

/** Text scanned between two steps outside an item (a step is about one item of an SDK's batch). */
const CHARS_PER_STEP = 4096;
const notJson = () => badRequest("body is not valid JSON");

function parsePiece(piece: string): unknown {
  try {
    return JSON.parse(piece);
  } catch {
    throw notJson();
  }
}

function skipBlanks(text: string, at: number): number {
  let c = text.charCodeAt(at);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++at);
  return at;
}

/**
 * The steps: one per item (and per CHARS_PER_STEP of other text). Null when the text is not an
 * object with one top-level `items` array (the caller parses it whole); throws "body is not valid
 * JSON" when a piece does not parse.
 */
export function* splitBatchJsonInSteps(text: string): Steps<BatchJson | null> {
  const first = skipBlanks(text, 0);
  if (text.charCodeAt(first) !== 123) return null;
  const items: unknown[] = [];
  let keyTokens = 0;
  let depth = 0;
  let arrayStart = -1; // the `[` of items
  let arrayEnd = -1; // its `]`
  let itemStart = -1; // the current item's first character (inside the array)
  let stepFrom = first;
  // Outside strings only structure, numbers, literals and blanks: looked at one character at a
  // time; a string is skipped whole with indexOf (a regex over the structure was 3-4x slower).
  for (let at = first; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === 34) {
      // A string: its closing quote is the next one not escaped (an odd run of backslashes).
      let close = text.indexOf('"', at + 1);
      for (;;) {
        if (close < 0) throw notJson();
        let b = close - 1;
        while (text.charCodeAt(b) === 92) b--;
        if ((close - 1 - b) % 2 === 0) break;
        close = text.indexOf('"', close + 1);
      }
      const next = skipBlanks(text, close + 1);
      if (text.charCodeAt(next) === 58) {
        keyTokens++;
        if (depth === 1 && parsePiece(text.slice(at, close + 1)) === "items") {
          if (arrayStart >= 0) return null; // items twice: the old path names the duplicate
          const value = skipBlanks(text, next + 1);
          if (text.charCodeAt(value) !== 91) return null; // not an array: the old path's 400
          arrayStart = value;
        }
      }
      at = close;
    } else if (c === 123 || c === 91) {
      depth++;
      if (at === arrayStart) itemStart = at + 1;
    } else if (c === 125 || c === 93) {
      depth--;
      if (depth === 1 && itemStart >= 0 && arrayEnd < 0) {
        // The array's end: a `}` here would make `{"items":[1}}` look whole once the array is cut out.
        if (c !== 93) throw notJson();
        const piece = text.slice(itemStart, at);
        // `[]` (blanks only) holds no item; `[1,]` ends with an empty piece, which does not parse.
        if (items.length > 0 || skipBlanks(piece, 0) < piece.length) items.push(parsePiece(piece));
        arrayEnd = at;
        stepFrom = at;
        yield;
      } else if (depth < 0) throw notJson();
    } else if (c === 44) {
      if (depth === 2 && itemStart >= 0 && arrayEnd < 0) {
        // A comma between two items.
        items.push(parsePiece(text.slice(itemStart, at)));
        itemStart = at + 1;
        stepFrom = at;
        yield;
      }
    } else continue;
    if (at - stepFrom > CHARS_PER_STEP) {
      stepFrom = at;
      yield;
    }
  }
  if (arrayStart < 0) return null; // no items: the old path's 400
  if (arrayEnd < 0) throw notJson();
  const object = parsePiece(`${text.slice(0, arrayStart)}[]${text.slice(arrayEnd + 1)}`) as Record<string, unknown>;
  // Valid JSON starting with `{` is an object, and the scan found its `items`: checked all the same.
  const empty = object?.items;
  if (!Array.isArray(empty) || empty.length !== 0) return null;
  object.items = items;
  return { object, keyTokens };
}
