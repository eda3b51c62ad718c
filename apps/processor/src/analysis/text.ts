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
const SENTENCE_END = new Set([...".!?;。！？；।॥؟۔…\n"]);

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
    const lead = raw.length - raw.trimStart().length;
    const body = raw.trim();
    if (body) out.push({ text: body, start: from + lead });
  };
  for (let i = 0; i < text.length; i++) {
    if (SENTENCE_END.has(text[i])) {
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

/**
 * The text with what it only quotes blanked out (same length, so offsets still point into the
 * original): quoted spans on one line ("…", “…”, „…“, «…», 「…」, 『…』, ‘…’, `…`), lines that
 * open with `>` (e-mail and Markdown quotes) and fenced code blocks. A quote left open at the end
 * of its line quotes nothing. One pass, linear.
 */
export function maskQuoted(text: string): string {
  const out: string[] = [];
  let lineStart = true;
  let inFence = false;
  let quoteOpen: string | null = null;
  let quoteAt = -1;
  let lineBuf: string[] = [];
  const blank = (from: number) => {
    for (let k = from; k < lineBuf.length; k++) if (lineBuf[k] !== "\n") lineBuf[k] = " ";
  };
  const flushLine = () => {
    out.push(lineBuf.join(""));
    lineBuf = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (lineStart) {
      lineStart = false;
      // A fence or a quote line: the whole line is blanked (and a fence toggles code mode).
      let j = i;
      while (j < text.length && (text[j] === " " || text[j] === "\t")) j++;
      if (text.startsWith("```", j) || text.startsWith("~~~", j)) {
        inFence = !inFence;
        const end = text.indexOf("\n", i);
        const stop = end === -1 ? text.length : end;
        for (let k = i; k < stop; k++) lineBuf.push(" ");
        i = stop - 1;
        continue;
      }
      if (inFence || text[j] === ">") {
        const end = text.indexOf("\n", i);
        const stop = end === -1 ? text.length : end;
        for (let k = i; k < stop; k++) lineBuf.push(" ");
        i = stop - 1;
        continue;
      }
    }
    if (ch === "\n") {
      quoteOpen = null;
      lineBuf.push(ch);
      flushLine();
      lineStart = true;
      continue;
    }
    lineBuf.push(ch);
    if (quoteOpen !== null) {
      if (ch === quoteOpen) {
        blank(quoteAt);
        quoteOpen = null;
      }
      continue;
    }
    const close = QUOTE_PAIRS[ch];
    // An apostrophe inside a word (can't, l’homme) opens nothing: ‘ only after a non-letter.
    if (close && !(ch === "‘" && i > 0 && WORD_CHAR.test(text[i - 1]))) {
      quoteOpen = close;
      quoteAt = lineBuf.length - 1;
    }
  }
  flushLine();
  return out.join("");
}
