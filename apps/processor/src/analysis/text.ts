/**
 * Text matching that knows every script (refusals, prompt injections). JavaScript's `\b` is ASCII
 * only, with or without the `u` flag: `ę`, `ü`, `я`, `ा` are "non-word" to it, so `\bnie mogę\b`
 * can never match. Here a word character is any letter, combining mark or digit (`\p{L}\p{M}\p{N}`:
 * the marks matter for Devanagari, Thai and decomposed Vietnamese), and every helper is linear in
 * its input (no nested quantifiers, single passes), so a hostile multi-MB text costs time
 * proportional to its length.
 */

const W = String.raw`[\p{L}\p{M}\p{N}]`;
const WORD_CHAR = new RegExp(W, "u");
/** A Unicode word boundary, the drop-in for `\b`. */
export const WORD_BOUNDARY = String.raw`(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;

/**
 * Compiles a pattern written with `\b` into one whose `\b` is the Unicode boundary above, with
 * the `u` flag (and `i` unless told otherwise). Patterns must not nest quantifiers.
 */
export function unicodePattern(source: string, flags = "iu"): RegExp {
  const rewritten = source.replace(/\\b/g, WORD_BOUNDARY);
  return new RegExp(rewritten, flags.includes("u") ? flags : `${flags}u`);
}

/** Text as matched: NFC (decomposed Vietnamese or Hindi typed on some keyboards matches too). */
export const normalizeText = (text: string) => text.normalize("NFC");

/** Sentence and line ends in the scripts supported (Latin, Cyrillic, Arabic, Devanagari, CJK, Thai uses spaces). */
export const SENTENCE_ENDS = ".!?;。！？；।॥؟۔…\n";
/** The same ends by code unit (each is one): a lookup per character instead of a match object per end. */
const IS_SENTENCE_END = new Uint8Array(0x10000);
for (const c of SENTENCE_ENDS) IS_SENTENCE_END[c.charCodeAt(0)] = 1;

export interface Sentence {
  text: string;
  /** Offset of the sentence in the text (UTF-16 units). */
  start: number;
}

/** Sentences in order, trimmed, empty ones dropped; one pass over the text. */
export function sentencesOf(text: string): Sentence[] {
  const out: Sentence[] = [];
  let from = 0;
  const push = (to: number) => {
    const raw = text.slice(from, to);
    const body = raw.trim();
    if (body) out.push({ text: body, start: from + raw.length - raw.trimStart().length });
  };
  for (let i = 0; i < text.length; i++) {
    if (IS_SENTENCE_END[text.charCodeAt(i)] === 1) {
      push(i);
      from = i + 1;
    }
  }
  push(text.length);
  return out;
}

const QUOTE_PAIRS: Record<string, string> = {
  '"': '"',
  "“": "”",
  "„": "“",
  "«": "»",
  "»": "«",
  "「": "」",
  "『": "』",
  "‘": "’",
  "`": "`",
};

const QUOTE_OPEN = /["“„«»「『‘`]/g;

/**
 * The text with what it only quotes blanked out (same length, so offsets still point into the
 * original): quoted spans on one line ("…", “…”, „…“, «…», 「…」, 『…』, ‘…’, `…`), lines that
 * open with `>` (e-mail and Markdown quotes) and fenced code blocks. A quote left open at the end
 * of its line quotes nothing. One pass, linear; the output is built from slices.
 */
export function maskQuoted(text: string): string {
  const blanks: Array<[number, number]> = [];
  let inFence = false;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const nl = text.indexOf("\n", lineStart);
    const lineEnd = nl === -1 ? text.length : nl;
    let j = lineStart;
    while (j < lineEnd && (text[j] === " " || text[j] === "\t")) j++;
    const fence = text.startsWith("```", j) || text.startsWith("~~~", j);
    if (fence) inFence = !inFence;
    if (fence || inFence || text[j] === ">") blanks.push([lineStart, lineEnd]);
    else {
      const line = text.slice(lineStart, lineEnd);
      QUOTE_OPEN.lastIndex = 0;
      for (let m = QUOTE_OPEN.exec(line); m; m = QUOTE_OPEN.exec(line)) {
        const i = m.index;
        // An apostrophe inside a word (can't, l’homme) opens nothing: ‘ only after a non-letter.
        if (m[0] === "‘" && i > 0 && WORD_CHAR.test(line[i - 1])) continue;
        const close = line.indexOf(QUOTE_PAIRS[m[0]], i + 1);
        if (close === -1) break; // open to the end of the line: quotes nothing, and holds the rest
        blanks.push([lineStart + i, lineStart + close + 1]);
        QUOTE_OPEN.lastIndex = close + 1;
      }
    }
    if (nl === -1) break;
    lineStart = nl + 1;
  }
  if (blanks.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const [from, to] of blanks) {
    parts.push(text.slice(at, from), " ".repeat(to - from));
    at = to;
  }
  parts.push(text.slice(at));
  return parts.join("");
}
