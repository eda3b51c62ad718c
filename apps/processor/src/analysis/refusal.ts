import { stopClass } from "./stop-reasons.ts";
import { maskQuoted, normalizeText, sentencesOf, unicodePattern } from "./text.ts";

/**
 * Refusal phrasings, one list per language, each matched at the start of a sentence of the reply
 * (every sentence, not a prefix window; quoted text, `>` lines and code blocks are blanked first:
 * a reply that quotes a refusal is explaining it). Each phrase pairs an inability ("I can't",
 * "no puedo", "我无法") with what is refused (help, assist, provide, comply, that), or follows an
 * apology in the same sentence: "I can't believe it" or "no puedo creer" are not refusals.
 * `\b` below is the Unicode word boundary (text.ts), so words ending in `ę`, `é`, `я` or a
 * Devanagari mark match. Gaps inside a sentence are unbounded (`.*?`): each pattern is anchored at
 * one sentence start and nests no quantifier, so matching is linear in the sentence.
 * Languages: en, zh, es, ar, pt, id, fr, ja, ru, uk, de, hi, ko, it, tr, nl, pl, cs, vi, th.
 */
const SOURCES: Record<string, string[]> = {
  en: [
    String.raw`^(?:(?:but|however|unfortunately),? )?(?:i(?:'|’)?m|i am) (?:really |very |so |truly )?(?:sorry|afraid)\b.*?\b(?:can(?:'|’)?t|cannot|can not|unable to|not able to|won(?:'|’)?t)\b`,
    String.raw`^(?:(?:sorry|but|however|unfortunately),? )*i (?:can(?:'|’)?t|cannot|can not|won(?:'|’)?t|am unable to|am not able to|(?:'|’)m unable to|(?:'|’)m not able to) (?:help|assist|comply|provide|do that|fulfil|fulfill|answer|support|engage|share|give)\b`,
  ],
  es: [
    String.raw`^(?:lo siento|lo lamento|disculpa|disculpe|perdón)\b.*?\bno (?:puedo|podré|me es posible|lo haré)\b`,
    String.raw`^(?:(?:lamentablemente|desafortunadamente),? )?no (?:puedo|podré) (?:ayudar|asistir|proporcionar|dar|hacer eso|cumplir|responder|facilitar)`,
  ],
  pt: [
    String.raw`^(?:desculpe|desculpa|sinto muito|lamento)\b.*?\b(?:não posso|não consigo|não poderei)\b`,
    String.raw`^(?:(?:infelizmente),? )?(?:eu )?(?:não posso|não consigo) (?:ajudar|fornecer|atender|fazer isso|responder|auxiliar)`,
  ],
  fr: [
    String.raw`^(?:désolée?|je suis désolée?|je regrette|navrée?)\b.*?\bje ne (?:peux|pourrai|suis pas en mesure)\b`,
    String.raw`^(?:(?:malheureusement),? )?je ne (?:peux|pourrai) pas (?:vous |t(?:'|’))?(?:aider|fournir|répondre|faire (?:ça|cela)|accéder)\b`,
  ],
  de: [
    String.raw`^(?:es tut mir (?:sehr )?leid|tut mir leid|entschuldigung|leider)\b.*?\b(?:kann ich|ich kann|darf ich|ich darf)\b.*?\bnicht\b`,
    String.raw`^ich kann (?:dir |ihnen |euch )?(?:dabei |damit |hierbei )?nicht (?:helfen|behilflich sein|weiterhelfen|übernehmen)\b`,
  ],
  it: [
    String.raw`^(?:mi dispiace|spiacente|purtroppo)\b.*?\bnon (?:posso|sono in grado|potrò)\b`,
    String.raw`^non posso (?:aiutarti|aiutarla|aiutare|fornire|rispondere|farlo)\b`,
  ],
  ru: [
    String.raw`^(?:извините|простите|к сожалению|мне жаль)\b.*?\bне (?:могу|смогу|имею права)\b`,
    String.raw`^я не (?:могу|смогу) (?:помочь|предоставить|выполнить|ответить|с этим)\b`,
  ],
  uk: [
    String.raw`^(?:вибачте|перепрошую|на жаль|мені шкода)\b.*?\bне (?:можу|зможу)\b`,
    String.raw`^я не (?:можу|зможу) (?:допомогти|надати|виконати|відповісти)\b`,
  ],
  zh: [
    String.raw`^(?:抱歉|对不起|很抱歉|不好意思|對不起).*?(?:我不能|我无法|我沒辦法|我没法|我無法|无法|無法|不能)`,
    String.raw`^我(?:不能|无法|無法|没办法|沒辦法)(?:帮助|帮你|帮您|幫助|协助|協助|提供|回答|满足|完成)`,
  ],
  ja: [
    String.raw`^(?:申し訳(?:ありません|ございません|ない)が|すみませんが|ごめんなさい).*?(?:できません|いたしかねます|お答えできません|お手伝いできません|お応えできません)`,
  ],
  ko: [String.raw`^(?:죄송하지만|죄송합니다|미안하지만|유감스럽게도).*?(?:수 없습니다|수 없어요|드릴 수 없)`],
  ar: [
    String.raw`^(?:عذرًا|عذراً|عذرا|آسف|أنا آسف|للأسف)\b.*?(?:لا أستطيع|لا يمكنني|لن أتمكن|لا أقدر)`,
    String.raw`^(?:لا أستطيع|لا يمكنني) (?:مساعدتك|المساعدة|تقديم|الإجابة)`,
  ],
  hi: [
    String.raw`^(?:क्षमा करें|क्षमा कीजिए|माफ़ कीजिए|माफ कीजिए|माफ़ करें|माफ करें|मुझे खेद है|खेद है)\b.*?(?:नहीं कर सकता|नहीं कर सकती|नहीं कर पाऊँगा|नहीं कर पाऊंगा|नहीं कर पाऊँगी|असमर्थ)`,
    String.raw`^मैं (?:इसमें |इस (?:बारे में|अनुरोध में) )?(?:आपकी )?(?:मदद|सहायता) नहीं कर (?:सकता|सकती)`,
  ],
  id: [
    String.raw`^(?:maaf|mohon maaf)\b.*?\b(?:saya|aku) tidak (?:bisa|dapat)\b`,
    String.raw`^(?:saya|aku) tidak (?:bisa|dapat) (?:membantu|memberikan|menjawab)\b`,
  ],
  tr: [String.raw`^(?:üzgünüm|kusura bakmayın|maalesef)\b.*?\b(?:yardımcı olamam|yapamam|sağlayamam|veremem)\b`],
  nl: [String.raw`^(?:sorry|het spijt me|helaas)\b.*?\bik kan\b.*?\bniet\b`],
  pl: [
    String.raw`^(?:przepraszam|niestety|przykro mi)\b.*?\bnie (?:mogę|jestem w stanie|pomogę)\b`,
    String.raw`^nie (?:mogę|jestem w stanie) (?:pomóc|tego zrobić|udzielić|odpowiedzieć)\b`,
  ],
  cs: [
    String.raw`^(?:omlouvám se|je mi líto|bohužel|promiňte)\b.*?\b(?:nemohu|nemůžu|nedokážu|není možné|nepomohu|nepomůžu)\b`,
    String.raw`^(?:s tím )?(?:vám |ti )?(?:nemohu|nemůžu) (?:pomoci|pomoct|poskytnout|odpovědět)\b`,
  ],
  vi: [
    String.raw`^(?:xin lỗi|rất tiếc|tôi rất tiếc)\b.*?\b(?:tôi|mình|em) không thể\b`,
    String.raw`^(?:tôi|mình|em) không thể (?:giúp|hỗ trợ|cung cấp|trả lời|thực hiện)\b`,
  ],
  // Thai writes no spaces between words: no word boundaries, the phrases are long enough.
  th: [
    String.raw`^(?:ขออภัย|ขอโทษ|เสียใจ).*?(?:ไม่สามารถ|ช่วยไม่ได้|ทำไม่ได้|ให้ไม่ได้)`,
    String.raw`^(?:ฉัน|ผม|ดิฉัน)?ไม่สามารถ(?:ช่วย|ให้|ตอบ|ทำ)`,
  ],
};

export const REFUSAL_PATTERNS: Record<string, RegExp[]> = Object.fromEntries(
  Object.entries(SOURCES).map(([lang, list]) => [lang, list.map((source) => unicodePattern(source))]),
);
const ALL_PATTERNS = Object.entries(REFUSAL_PATTERNS).flatMap(([lang, list]) => list.map((re) => ({ lang, re })));
/**
 * Any of the patterns (each anchored at the sentence start, same flags): one test per sentence
 * rules out every language at once (5-10x cheaper than trying each); a sentence that matches is
 * then given to each pattern in order, for its language.
 */
const ANY_PATTERN = new RegExp(ALL_PATTERNS.map((p) => `(?:${p.re.source})`).join("|"), "iu");

/** The longest reply whose phrasing is read: replies are kept on a call up to this many characters (calls.ts). */
export const REFUSAL_MAX_READ = 4_000;

/** The first sentence of `text` that is a refusal, with its language, or null. */
export function refusalPhrase(text: string): { sentence: string; language: string } | null {
  const normalized = normalizeText(text);
  for (const s of sentencesOf(maskQuoted(normalized))) {
    const hit = ANY_PATTERN.test(s.text) ? ALL_PATTERNS.find((p) => p.re.test(s.text)) : undefined;
    if (hit) return { sentence: normalized.slice(s.start, s.start + s.text.length), language: hit.lang };
  }
  return null;
}

/**
 * Refusal verdict for a call, or null. Explicit signals always count; phrasing counts when any
 * sentence of the reply is a refusal and the reply stays short (`maxChars`, at most
 * REFUSAL_MAX_READ): a long reply that apologises and then helps is not a refusal. Bound: a reply
 * longer than that is dismissed on its length alone (O(1)); a shorter one costs
 * O(length x patterns).
 */
export function isRefusal(
  c: { refusal: string | null; finishReason: string | null; textHead: string; textLength: number },
  maxChars: number,
): Record<string, unknown> | null {
  if (c.refusal) return { refusal: c.refusal, text: null, source: "message.refusal", language: null };
  if (stopClass(c.finishReason) === "refusal")
    return { refusal: null, text: c.textHead.slice(0, 300) || null, source: "finish_reason", language: null };
  if (c.textLength > Math.min(maxChars, REFUSAL_MAX_READ)) return null;
  const hit = refusalPhrase(c.textHead);
  return hit ? { refusal: null, text: hit.sentence.slice(0, 300), source: "phrasing", language: hit.language } : null;
}
