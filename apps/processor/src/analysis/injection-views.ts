/**
 * Where an instruction can hide from a human reader but not from a model: the text a tool result
 * shows once its markup is read (HTML comments, `alt`/`title`/`aria-label` attributes, Markdown
 * image alt text and link titles), once invisible characters are dropped or decoded (zero-width
 * characters, Unicode tag characters, right-to-left overrides), once look-alike letters are folded
 * (NFKC: fullwidth and mathematical letters; Cyrillic and Greek letters inside Latin words), and
 * once encodings are decoded (base64, hex, 8-bit binary or Morse runs that decode to text, rot13 and
 * the other Caesar shifts of a trigger word), and once scrambled
 * spellings of trigger words are restored ("ignroe all prevoius instructions": same first and last
 * letter, same letters, as OWASP's typoglycemia attacks write them). Each view is scanned like
 * the text itself (injection.ts) and a hit names the view (`via`).
 *
 * Bounds (docs/analysis.md): every view is built in one linear pass over the text; at most
 * MAX_SEGMENTS markup segments and MAX_BASE64_RUNS base64 runs (each at most MAX_BASE64_CHARS
 * characters) are decoded, and at most MAX_VIEW_CHARS characters of views are made per text.
 */
export type ViewKind =
  | "markup"
  | "invisible"
  | "homoglyph"
  | "base64"
  | "hex"
  | "binary"
  | "morse"
  | "rot13"
  | "caesar"
  | "scrambled";
/** Views that decode an encoding (an instruction read there was hidden on purpose: injection.ts, decodedCommand). */
export const DECODED_VIEWS: ReadonlySet<ViewKind> = new Set(["base64", "hex", "binary", "morse", "rot13", "caesar"]);
export interface View {
  via: ViewKind;
  text: string;
}

export const MAX_SEGMENTS = 64;
export const MAX_BASE64_RUNS = 16;
export const MAX_BASE64_CHARS = 16_384;
export const MAX_VIEW_CHARS = 262_144;

const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|[\u{e0000}-\u{e007f}]/u;
const MARKUP = /<!--|\balt\s*=|\btitle\s*=|\baria-label\s*=|\]\(\S+\s+"/iu;
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
/** Twelve or more hex byte pairs, run together or apart ("49 67 6e", "49:67:6e", "\\x49\\x67"). */
const HEX_RUN = /(?:(?:\\x)?[0-9A-Fa-f]{2}[ :,]?){12,}/g;
export const MAX_HEX_RUNS = 16;
const LATIN = /[A-Za-z]/;
const NON_ASCII = /[^\x00-\x7f]/;
/** rot13 of "ignor", "disregard", "instruction", "assistant", "system prompt", "reveal". */
const ROT13_STEMS = /vtabe|qvfertneq|vafgehpgvba|nffvfgnag|flfgrz cebzcg|erirny/i;
const CONFUSABLE: Record<string, string> = {
  а: "a",
  е: "e",
  о: "o",
  р: "p",
  с: "c",
  у: "y",
  х: "x",
  і: "i",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  ɡ: "g",
  һ: "h",
  ӏ: "l",
  А: "A",
  В: "B",
  Е: "E",
  К: "K",
  М: "M",
  Н: "H",
  О: "O",
  Р: "P",
  С: "C",
  Т: "T",
  Х: "X",
  І: "I",
  Ј: "J",
  Ѕ: "S",
  α: "a",
  ο: "o",
  ρ: "p",
  ν: "v",
  ι: "i",
  κ: "k",
  τ: "t",
  υ: "u",
  Α: "A",
  Β: "B",
  Ε: "E",
  Ζ: "Z",
  Η: "H",
  Ι: "I",
  Κ: "K",
  Μ: "M",
  Ν: "N",
  Ο: "O",
  Ρ: "P",
  Τ: "T",
  Υ: "Y",
  Χ: "X",
};
const CONFUSABLE_RE = new RegExp(`[${Object.keys(CONFUSABLE).join("")}]`, "u");

/** The views of `text` worth scanning (none for plain text with nothing hidden or encoded). */
export function viewsOf(text: string): View[] {
  const out: View[] = [];
  let budget = MAX_VIEW_CHARS;
  const push = (via: ViewKind, t: string) => {
    if (!t || budget <= 0) return;
    const kept = t.length > budget ? t.slice(0, budget) : t;
    budget -= kept.length;
    out.push({ via, text: kept });
  };
  if (MARKUP.test(text)) push("markup", markupSegments(text).join("\n\n"));
  if (INVISIBLE.test(text)) push("invisible", revealInvisible(text));
  if (NON_ASCII.test(text)) {
    const folded = foldLookAlikes(text);
    if (folded !== null) push("homoglyph", folded);
  }
  const decoded = base64Texts(text);
  if (decoded.length) push("base64", decoded.join("\n\n"));
  const hex = hexTexts(text);
  if (hex.length) push("hex", hex.join("\n\n"));
  // rot13 of ordinary text is noise: built only when the text holds a rot13 spelling of a trigger.
  if (ROT13_STEMS.test(text)) push("rot13", rot13(text));
  else {
    const shift = caesarShift(text);
    if (shift !== 0) push("caesar", caesar(text, shift));
  }
  const binary = binaryTexts(text);
  if (binary.length) push("binary", binary.join("\n\n"));
  const morse = morseTexts(text);
  if (morse.length) push("morse", morse.join("\n\n"));
  const unscrambled = unscramble(text);
  if (unscrambled !== null) push("scrambled", unscrambled);
  return out;
}

/** HTML comments, alt/title/aria-label values, Markdown image alt text and link titles. */
function markupSegments(text: string): string[] {
  const out: string[] = [];
  for (let at = text.indexOf("<!--"); at !== -1 && out.length < MAX_SEGMENTS; at = text.indexOf("<!--", at + 4)) {
    const end = text.indexOf("-->", at + 4);
    out.push(text.slice(at + 4, end === -1 ? text.length : end));
    if (end === -1) break;
  }
  const attr = /\b(?:alt|title|aria-label)\s*=\s*(?:"([^"\n]{1,2000})"|'([^'\n]{1,2000})')/giu;
  for (let m = attr.exec(text); m && out.length < MAX_SEGMENTS; m = attr.exec(text)) out.push(m[1] ?? m[2]);
  const image = /!\[([^\]\n]{1,2000})\]\(/gu;
  for (let m = image.exec(text); m && out.length < MAX_SEGMENTS; m = image.exec(text)) out.push(m[1]);
  const linkTitle = /\]\(\S{1,2000}\s+"([^"\n]{1,2000})"\)/gu;
  for (let m = linkTitle.exec(text); m && out.length < MAX_SEGMENTS; m = linkTitle.exec(text)) out.push(m[1]);
  return out;
}

/** Invisible characters dropped, Unicode tag characters read as the ASCII they encode, RLO runs reversed. */
function revealInvisible(text: string): string {
  const parts: string[] = [];
  let reversed: string[] | null = null;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x202e) {
      reversed = [];
      continue;
    }
    if (reversed && (cp === 0x202c || ch === "\n")) {
      parts.push(reversed.reverse().join(""), ch === "\n" ? "\n" : "");
      reversed = null;
      continue;
    }
    let out = ch;
    if (cp >= 0xe0020 && cp <= 0xe007e) out = String.fromCharCode(cp - 0xe0000);
    else if (INVISIBLE.test(ch)) out = "";
    if (reversed) reversed.push(out);
    else parts.push(out);
  }
  if (reversed) parts.push(reversed.reverse().join(""));
  return parts.join("");
}

/** NFKC, and Cyrillic or Greek look-alikes folded inside words that also hold Latin letters; null when nothing changes. */
function foldLookAlikes(text: string): string | null {
  const nfkc = text.normalize("NFKC");
  let changed = nfkc !== text.normalize("NFC");
  if (!CONFUSABLE_RE.test(nfkc)) return changed ? nfkc : null;
  const folded = nfkc.replace(/[\p{L}\p{M}]+/gu, (word) => {
    if (!LATIN.test(word) || !CONFUSABLE_RE.test(word)) return word;
    changed = true;
    let w = "";
    for (const ch of word) w += CONFUSABLE[ch] ?? ch;
    return w;
  });
  return changed ? folded : null;
}

/** Base64 (and base64url) runs that decode to readable UTF-8 text. */
function base64Texts(text: string): string[] {
  const out: string[] = [];
  BASE64_RUN.lastIndex = 0;
  let tried = 0;
  for (let m = BASE64_RUN.exec(text); m && tried < MAX_BASE64_RUNS; m = BASE64_RUN.exec(text)) {
    // A run that ends at an HTML comment's close ("...PC9hPg==-->") ends before it.
    const run = m[0].replace(/-+$/, "");
    if (run.length > MAX_BASE64_CHARS || !/[0-9+/=_-]|[a-z][A-Z]|[A-Z][a-z]{0,2}[A-Z]/.test(run)) continue;
    tried++;
    const decoded = Buffer.from(run.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8");
    if (readable(decoded)) out.push(decoded);
  }
  return out;
}
/** Hex runs (at most MAX_HEX_RUNS, each at most MAX_BASE64_CHARS) that decode to readable UTF-8 text. */
function hexTexts(text: string): string[] {
  const out: string[] = [];
  if (!hasHexRun(text)) return out;
  HEX_RUN.lastIndex = 0;
  let tried = 0;
  for (let m = HEX_RUN.exec(text); m && tried < MAX_HEX_RUNS; m = HEX_RUN.exec(text)) {
    const digits = m[0].replace(/\\x|[^0-9A-Fa-f]/g, "");
    // Letters as hex digits, or it is a number ("202511280000000000"), not bytes.
    if (digits.length > MAX_BASE64_CHARS || digits.length % 2 !== 0 || !/[A-Fa-f]/.test(digits)) continue;
    tried++;
    const decoded = Buffer.from(digits, "hex").toString("utf8");
    if (readable(decoded)) out.push(decoded);
  }
  return out;
}

/** Is there a run of 24+ hex digits and separators (space : , and \\x; `| 32` folds case, and maps \\ to 124)? */
function hasHexRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) | 32;
    const hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || c === 120;
    if (hex || c === 32 || c === 58 || c === 44 || c === 124) {
      if (++run >= 24) return true;
    } else run = 0;
  }
  return false;
}

/** Trigger words an attacker scrambles, by sorted letters. */
const SCRAMBLE_KEYS = new Map<string, string>();
/** Their shapes (first letter, last letter, length) as numbers: a word of another shape is never sorted. */
const SCRAMBLE_SHAPES = new Set<number>();
const shapeOf = (w: string) => (w.charCodeAt(0) | 32) * 100_000 + (w.charCodeAt(w.length - 1) | 32) * 100 + w.length;
for (const w of "ignore previous instructions instruction system prompt bypass reveal disregard override safety secret password assistant restrictions".split(
  " ",
)) {
  SCRAMBLE_KEYS.set([...w].sort().join(""), w);
  SCRAMBLE_SHAPES.add(shapeOf(w));
}
const WORD_5_13 = /\b[A-Za-z]{5,13}\b/g;

/** The trigger word a scrambled spelling stands for ("ignroe" -> "ignore"), or null. */
function unscrambled(word: string): string | null {
  if (!SCRAMBLE_SHAPES.has(shapeOf(word))) return null;
  const w = word.toLowerCase();
  const key = SCRAMBLE_KEYS.get([...w].sort().join(""));
  return key && key !== w ? key : null;
}

/** The text with scrambled trigger words restored; null when it holds none (one pass, no copy). */
function unscramble(text: string): string | null {
  WORD_5_13.lastIndex = 0;
  let any = false;
  for (let m = WORD_5_13.exec(text); m && !any; m = WORD_5_13.exec(text)) any = unscrambled(m[0]) !== null;
  return any ? text.replace(WORD_5_13, (word) => unscrambled(word) ?? word) : null;
}

function readable(s: string): boolean {
  if (s.length < 12 || s.includes("\ufffd")) return false;
  let letters = 0;
  let spaces = 0;
  for (const ch of s) {
    if (ch === " ") spaces++;
    else if (/[\p{L}\p{N}\p{P}\p{S}]/u.test(ch)) letters++;
    else if (ch !== "\n" && ch !== "\t") return false;
  }
  return spaces >= 2 && letters + spaces >= s.length * 0.95;
}

function rot13(text: string): string {
  return caesar(text, 13);
}

/** Letters shifted back by `shift` places (the decoding of a Caesar shift of `shift`). */
function caesar(text: string, shift: number): string {
  return text.replace(/[A-Za-z]/g, (c) => {
    const base = c <= "Z" ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base - shift + 26) % 26) + base);
  });
}

/**
 * Caesar shifts: a trigger word is known by the gaps between its letters, whatever the shift
 * ("ljqruh" is "ignore" shifted by 3). A word of a trigger's length whose gaps (mod 26) are the
 * trigger's, and whose first letter is shifted by other than 0 or 13 (rot13 has its own view),
 * gives the shift. One pass over the words of 6 to 12 letters, each compared letter by letter with
 * the at most three triggers of its length (no string is built; most words differ at the first
 * gap); at most 4,096 words are looked at.
 */
const CAESAR_TRIGGERS = "ignore system reveal previous disregard assistant instruction instructions".split(" ");
const BY_LENGTH: string[][] = Array.from({ length: 13 }, () => []);
for (const w of CAESAR_TRIGGERS) BY_LENGTH[w.length].push(w);
const WORD_6_12 = /\b[A-Za-z]{6,12}\b/g;
function sameGaps(word: string, trigger: string): boolean {
  for (let i = 1; i < word.length; i++) {
    const a = ((word.charCodeAt(i) | 32) - (word.charCodeAt(i - 1) | 32) + 26) % 26;
    const b = (trigger.charCodeAt(i) - trigger.charCodeAt(i - 1) + 26) % 26;
    if (a !== b) return false;
  }
  return true;
}
export function caesarShift(text: string, maxWords = 4096): number {
  WORD_6_12.lastIndex = 0;
  let looked = 0;
  for (let m = WORD_6_12.exec(text); m && looked < maxWords; m = WORD_6_12.exec(text), looked++) {
    const word = m[0];
    for (const trigger of BY_LENGTH[word.length]) {
      if (!sameGaps(word, trigger)) continue;
      const shift = ((word.charCodeAt(0) | 32) - trigger.charCodeAt(0) + 26) % 26;
      if (shift !== 0 && shift !== 13) return shift;
    }
  }
  return 0;
}

/** Runs of eight or more 8-bit groups ("01001001 01100111 ..."), each decoded as one character. */
const BINARY_RUN = /(?:[01]{8}[ ,]?){8,}/g;
function binaryTexts(text: string): string[] {
  const out: string[] = [];
  if (!text.includes("00") && !text.includes("01")) return out;
  BINARY_RUN.lastIndex = 0;
  let tried = 0;
  for (let m = BINARY_RUN.exec(text); m && tried < MAX_HEX_RUNS; m = BINARY_RUN.exec(text)) {
    const groups = m[0].match(/[01]{8}/g) ?? [];
    if (groups.length * 8 > MAX_BASE64_CHARS) continue;
    tried++;
    const decoded = String.fromCharCode(...groups.map((g) => Number.parseInt(g, 2)));
    if (readable(decoded)) out.push(decoded);
  }
  return out;
}

/** International Morse code: letters, digits and common punctuation; "/" or three spaces part words. */
const MORSE: Record<string, string> = Object.fromEntries(
  Object.entries({
    A: ".-",
    B: "-...",
    C: "-.-.",
    D: "-..",
    E: ".",
    F: "..-.",
    G: "--.",
    H: "....",
    I: "..",
    J: ".---",
    K: "-.-",
    L: ".-..",
    M: "--",
    N: "-.",
    O: "---",
    P: ".--.",
    Q: "--.-",
    R: ".-.",
    S: "...",
    T: "-",
    U: "..-",
    V: "...-",
    W: ".--",
    X: "-..-",
    Y: "-.--",
    Z: "--..",
    "0": "-----",
    "1": ".----",
    "2": "..---",
    "3": "...--",
    "4": "....-",
    "5": ".....",
    "6": "-....",
    "7": "--...",
    "8": "---..",
    "9": "----.",
    ".": ".-.-.-",
    ",": "--..--",
    "?": "..--..",
    "'": ".----.",
    "!": "-.-.--",
    ":": "---...",
    "@": ".--.-.",
    "/": "-..-.",
    "(": "-.--.",
    ")": "-.--.-",
    "-": "-....-",
    "=": "-...-",
  }).map(([ch, code]) => [code, ch]),
);
/** Twelve or more Morse symbols, spaces and word slashes in a row. */
const MORSE_RUN = /(?:[.\-\u2022\u2013\u2014_]{1,7}(?: {1,3}\/ {1,3}| {1,3}|$)){12,}/g;
function morseTexts(text: string): string[] {
  const out: string[] = [];
  if (!text.includes(".-") && !text.includes("-.")) return out;
  MORSE_RUN.lastIndex = 0;
  let tried = 0;
  for (let m = MORSE_RUN.exec(text); m && tried < MAX_HEX_RUNS; m = MORSE_RUN.exec(text)) {
    if (m[0].length > MAX_BASE64_CHARS) continue;
    tried++;
    const words = m[0]
      .trim()
      .split(/ *\/ *| {3}/)
      .map((w) =>
        w
          .split(/ +/)
          .map((code) => MORSE[code.replace(/[\u2022]/g, ".").replace(/[\u2013\u2014_]/g, "-")] ?? "")
          .join(""),
      );
    const decoded = words.join(" ").trim();
    // Morse has no case: read as a sentence ("IGNORE ..." as "Ignore ...").
    if (readable(decoded)) out.push(decoded.charAt(0) + decoded.slice(1).toLowerCase());
  }
  return out;
}
