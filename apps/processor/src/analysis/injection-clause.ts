import { unicodePattern } from "./text.ts";

/** What may precede an instruction in its clause: nothing, punctuation or markup, or a polite or temporal lead-in. */
const CLAUSE_OPEN = /(?:^|[()[\]{}:,;—–\-*_#>|!¡¿"'“”«»「」/])\s*$/u;
const LEAD_IN = unicodePattern(
  String.raw`\b(?:please|now|so|and|then|also|instead|just|actually|first|simply|kindly|por favor|ahora|bitte|jetzt|s'il vous plaît|maintenant|per favore|ora|пожалуйста|теперь|lütfen|silakan|hãy|xin|vui lòng|กรุณา|कृपया|請|请|现在|現在)\s*$`,
  "iu",
);
/** A negation just before the verb ("never ignore", "N'oubliez pas", "no olvides"). */
export const NEGATED_BEFORE = unicodePattern(
  String.raw`(?:\b(?:not|never|don't|dont|do not|no need to|no|non|não|nao|nicht|nie|не|ні)\s+|\bn['’]\s*|不要|别|別|勿)$`,
  "iu",
);
/** The instruction opens its clause (verb-first languages). */
export function opensClause(before: string): boolean {
  return CLAUSE_OPEN.test(before) || LEAD_IN.test(before);
}

const NON_ASCII = /[^\x00-\x7f]/;
/**
 * A cheap hint: an ASCII pattern, and a pattern of other scripts tried only on text that holds a
 * non-ASCII character (one case-insensitive alternation of both is 20x slower on English prose).
 */
export function hint(ascii: RegExp, other: RegExp): (text: string) => boolean {
  return (text) => ascii.test(text) || (NON_ASCII.test(text) && other.test(text));
}
