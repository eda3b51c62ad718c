import type { Steps } from "./steps.ts";

/**
 * JSON.parse of a large body in steps (shared/steps.ts; issue 41, flood fairness): one scan finds
 * the elements of the arrays along `path` (an object's `path[0]` array, each of its elements'
 * `path[1]` array, ...), the last array's elements are parsed one a step, and each object along
 * the way is parsed with its array cut out (`[]`) and put back. `/raw/batch`'s `items`
 * (["items"]) and OTLP/JSON's spans (["resourceSpans", "scopeSpans", "spans"]) are split so.
 *
 * The value is JSON.parse(text)'s: on valid JSON the scan is exact, and an object's other members
 * are parsed by JSON.parse with the rest of its text, last duplicate winning as in one piece.
 * Null when the scan cannot vouch for it (the text is not an object, a path key twice in one
 * object, a path member that is not an array): the caller parses in one piece. Throws
 * JsonPieceError when a piece does not parse, which on valid JSON cannot happen: the text is not
 * valid JSON. Also counts the text's object keys (strings followed by a colon), for a caller that
 * checks for duplicate keys against the parsed count.
 */
export class JsonPieceError extends Error {}

export interface SplitJson {
  value: Record<string, unknown>;
  keyTokens: number;
}

/** Text scanned between two steps outside an element. */
const CHARS_PER_STEP = 4096;

function parsePiece(piece: string): unknown {
  try {
    return JSON.parse(piece);
  } catch {
    throw new JsonPieceError("not valid JSON");
  }
}

function skipBlanks(text: string, at: number): number {
  let c = text.charCodeAt(at);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++at);
  return at;
}

/** An object along the path: its `path[level]` array is split. */
interface ObjectFrame {
  array: false;
  level: number;
  /** The depth inside it. */
  depth: number;
  start: number;
  arrayStart: number;
  arrayEnd: number;
  items: unknown[];
}
/** The `path[level]` array of an object along the path. */
interface ArrayFrame {
  array: true;
  level: number;
  depth: number;
  itemStart: number;
  items: unknown[];
  owner: ObjectFrame;
  /** An element parsed by its own frame (an object along the path), and where its text ended. */
  done?: { value: unknown; end: number };
}

export function* splitJsonInSteps(text: string, path: string[]): Steps<SplitJson | null> {
  const first = skipBlanks(text, 0);
  if (text.charCodeAt(first) !== 123 || path.length === 0) return null;
  const stack: Array<ObjectFrame | ArrayFrame> = [];
  let root: { value: Record<string, unknown>; end: number } | null = null;
  let keyTokens = 0;
  let depth = 0;
  let stepFrom = first;

  /** The element that ends at `at` (a comma or the array's end), into its array. */
  const element = (frame: ArrayFrame, at: number, last: boolean) => {
    if (frame.done) {
      if (skipBlanks(text, frame.done.end) !== at) throw new JsonPieceError("not valid JSON");
      frame.items.push(frame.done.value);
      frame.done = undefined;
      return;
    }
    const piece = text.slice(frame.itemStart, at);
    // `[]` (blanks only) holds no element; `[1,]` ends with an empty piece, which does not parse.
    if (last && frame.items.length === 0 && skipBlanks(piece, 0) === piece.length) return;
    frame.items.push(parsePiece(piece));
  };

  for (let at = first; at < text.length; at++) {
    const c = text.charCodeAt(at);
    const top = stack[stack.length - 1];
    if (c === 34) {
      // A string: its closing quote is the next one not escaped (an odd run of backslashes).
      let close = text.indexOf('"', at + 1);
      for (;;) {
        if (close < 0) throw new JsonPieceError("not valid JSON");
        let b = close - 1;
        while (text.charCodeAt(b) === 92) b--;
        if ((close - 1 - b) % 2 === 0) break;
        close = text.indexOf('"', close + 1);
      }
      const next = skipBlanks(text, close + 1);
      if (text.charCodeAt(next) === 58) {
        keyTokens++;
        if (top && !top.array && depth === top.depth && parsePiece(text.slice(at, close + 1)) === path[top.level]) {
          if (top.arrayStart >= 0) return null; // twice: one piece answers it
          const value = skipBlanks(text, next + 1);
          if (text.charCodeAt(value) !== 91) return null; // not an array: one piece answers it
          top.arrayStart = value;
        }
      }
      at = close;
    } else if (c === 123 || c === 91) {
      depth++;
      if (depth === 1) {
        if (at !== first) throw new JsonPieceError("not valid JSON"); // a second value after the first
        stack.push(objectFrame(0, depth, at));
      } else if (top && !top.array && at === top.arrayStart)
        stack.push({ array: true, level: top.level, depth, itemStart: at + 1, items: [], owner: top });
      else if (
        top?.array &&
        c === 123 &&
        depth === top.depth + 1 &&
        top.level + 1 < path.length &&
        skipBlanks(text, top.itemStart) === at
      )
        stack.push(objectFrame(top.level + 1, depth, at));
    } else if (c === 125 || c === 93) {
      if (top && depth === top.depth) {
        // The end of a frame: an object's with `}`, an array's with `]`; anything else is not JSON.
        if ((c === 93) !== top.array) throw new JsonPieceError("not valid JSON");
        stack.pop();
        if (top.array) {
          element(top, at, true);
          top.owner.arrayEnd = at;
          top.owner.items = top.items;
        } else {
          const value = objectValue(text, top, at, path[top.level]);
          if (value === null) return null;
          const parent = stack[stack.length - 1] as ArrayFrame | undefined;
          if (parent) parent.done = { value, end: at + 1 };
          else root = { value, end: at + 1 };
        }
        stepFrom = at;
        yield;
      }
      depth--;
      if (depth < 0) throw new JsonPieceError("not valid JSON");
    } else if (c === 44) {
      if (top?.array && depth === top.depth) {
        element(top, at, false);
        top.itemStart = at + 1;
        stepFrom = at;
        yield;
      }
    } else continue;
    if (at - stepFrom > CHARS_PER_STEP) {
      stepFrom = at;
      yield;
    }
  }
  if (!root || stack.length > 0 || skipBlanks(text, root.end) !== text.length)
    throw new JsonPieceError("not valid JSON");
  return { value: root.value, keyTokens };
}

function objectFrame(level: number, depth: number, start: number): ObjectFrame {
  return { array: false, level, depth, start, arrayStart: -1, arrayEnd: -1, items: [] };
}

/** An object along the path: parsed with its array cut out, then the array's elements put back. */
function objectValue(text: string, frame: ObjectFrame, end: number, key: string): Record<string, unknown> | null {
  if (frame.arrayStart < 0) return parsePiece(text.slice(frame.start, end + 1)) as Record<string, unknown>;
  if (frame.arrayEnd < 0) throw new JsonPieceError("not valid JSON");
  const object = parsePiece(
    `${text.slice(frame.start, frame.arrayStart)}[]${text.slice(frame.arrayEnd + 1, end + 1)}`,
  ) as Record<string, unknown>;
  // Valid JSON starting with `{` is an object, and the scan found its array: checked all the same.
  const empty = object?.[key];
  if (!Array.isArray(empty) || empty.length !== 0) return null;
  object[key] = frame.items;
  return object;
}
