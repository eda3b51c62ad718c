import type { ModelCall } from "./calls.ts";

/**
 * Refusal phrasings, one list per language, matched at the very start of a reply (after
 * whitespace only: a reply that opens with a quote mark or `>` is quoting someone). Each phrase
 * pairs an inability ("I can't", "no puedo", "我无法") with what is refused (help, assist,
 * provide, comply, that): "I can't believe it" or "no puedo creer" are not refusals.
 * Languages: the ten most used on the web and in chat apps plus a few more (en, zh, es, ar, pt,
 * id/ms, fr, ja, ru, de, hi, ko, it, tr, nl, pl). Language-independent signals come first:
 * `message.refusal` (OpenAI) and `finish_reason: "refusal"` (Anthropic's `stop_reason`, as mapped).
 */
export const REFUSAL_PATTERNS: Record<string, RegExp[]> = {
  en: [
    /^(?:i(?:'|’)?m|i am) (?:really |very |so )?(?:sorry|afraid)\b[^.!?\n]{0,60}\b(?:can(?:'|’)?t|cannot|can not|unable to|not able to|won(?:'|’)?t)\b/i,
    /^(?:sorry,? )?(?:but )?i (?:can(?:'|’)?t|cannot|can not|won(?:'|’)?t|am unable to|am not able to|(?:'|’)m unable to|(?:'|’)m not able to) (?:help|assist|comply|provide|do that|fulfil|fulfill|answer|support|engage|share|give)/i,
    /^(?:unfortunately,? )?i(?:'|’)?m not able to (?:help|assist|provide)/i,
  ],
  es: [
    /^(?:lo siento|lo lamento|disculpa|perdón)[^.!?\n]{0,40}\bno (?:puedo|podré|me es posible)\b/i,
    /^no (?:puedo|podré) (?:ayudar|asistir|proporcionar|dar|hacer eso|cumplir|responder|facilitar)/i,
  ],
  pt: [
    /^(?:desculpe|desculpa|sinto muito|lamento)[^.!?\n]{0,40}\b(?:não posso|não consigo|não poderei)\b/i,
    /^(?:eu )?(?:não posso|não consigo) (?:ajudar|fornecer|atender|fazer isso|responder|auxiliar)/i,
  ],
  fr: [
    /^(?:désolée?|je suis désolée?|je regrette|navrée?)[^.!?\n]{0,40}\bje ne (?:peux|pourrai|suis pas en mesure)\b/i,
    /^je ne (?:peux|pourrai) pas (?:vous |t')?(?:aider|fournir|répondre|faire (?:ça|cela)|accéder)/i,
  ],
  de: [
    /^(?:es tut mir (?:sehr )?leid|entschuldigung|leider)[^.!?\n]{0,50}\b(?:kann ich|ich kann)\b[^.!?\n]{0,40}\bnicht\b/i,
    /^ich kann (?:dir |ihnen |euch )?(?:dabei |damit |hierbei )?nicht (?:helfen|behilflich sein|weiterhelfen)/i,
  ],
  it: [
    /^(?:mi dispiace|spiacente|purtroppo)[^.!?\n]{0,40}\bnon (?:posso|sono in grado)\b/i,
    /^non posso (?:aiutarti|aiutarla|aiutare|fornire|rispondere|farlo)/i,
  ],
  ru: [
    /^(?:извините|простите|к сожалению|мне жаль)[^.!?\n]{0,40}(?:я )?не (?:могу|смогу)(?![а-яё])/i,
    /^я не (?:могу|смогу) (?:помочь|предоставить|выполнить|ответить|с этим)/i,
  ],
  zh: [
    /^(?:抱歉|对不起|很抱歉|不好意思)[，,、\s]*(?:但是?)?[^。！？\n]{0,12}(?:我不能|我无法|我没法|无法|不能)/,
    /^我(?:不能|无法|没办法)(?:帮助|帮你|帮您|协助|提供|回答|满足|完成)/,
  ],
  ja: [
    /^(?:申し訳(?:ありません|ございません|ない)が|すみませんが|ごめんなさい)[^。！？\n]{0,40}(?:できません|いたしかねます|お答えできません|お手伝いできません)/,
  ],
  ko: [/^(?:죄송하지만|죄송합니다|미안하지만)[^.!?\n]{0,40}(?:수 없습니다|수 없어요|드릴 수 없)/],
  ar: [
    /^(?:عذرًا|عذراً|عذرا|آسف|أنا آسف|للأسف)[^.!?\n]{0,40}(?:لا أستطيع|لا يمكنني|لن أتمكن)/,
    /^(?:لا أستطيع|لا يمكنني) (?:مساعدتك|المساعدة|تقديم|الإجابة)/,
  ],
  hi: [/^(?:क्षमा करें|माफ़ कीजिए|माफ करें|मुझे खेद है)[^।!?\n]{0,60}(?:नहीं कर सकता|नहीं कर सकती|असमर्थ)/],
  id: [
    /^(?:maaf|mohon maaf)[^.!?\n]{0,40}\b(?:saya|aku) tidak (?:bisa|dapat)\b/i,
    /^(?:saya|aku) tidak (?:bisa|dapat) (?:membantu|memberikan|menjawab)/i,
  ],
  tr: [/^(?:üzgünüm|kusura bakmayın|maalesef)[^.!?\n]{0,50}(?:yardımcı olamam|yapamam|sağlayamam)/i],
  nl: [/^(?:sorry|het spijt me)[^.!?\n]{0,40}\bik kan\b[^.!?\n]{0,30}\bniet\b/i],
  pl: [/^(?:przepraszam|niestety)[^.!?\n]{0,40}\bnie (?:mogę|jestem w stanie)\b/i],
};
const ALL_PATTERNS = Object.entries(REFUSAL_PATTERNS).flatMap(([lang, list]) => list.map((re) => ({ lang, re })));

/**
 * Refusal verdict for a call, or null. Explicit signals always count; phrasing counts only when
 * the reply opens with it and stays short (`maxChars`): a long reply that apologises and then
 * helps is not a refusal.
 */
export function isRefusal(
  c: Pick<ModelCall, "refusal" | "finishReason" | "textHead" | "textLength">,
  maxChars: number,
): Record<string, unknown> | null {
  if (c.refusal) return { refusal: c.refusal, text: null, source: "message.refusal", language: null };
  if (c.finishReason === "refusal")
    return { refusal: null, text: c.textHead.slice(0, 300) || null, source: "finish_reason", language: null };
  if (c.textLength > maxChars) return null;
  const head = c.textHead.trimStart().slice(0, 300);
  const hit = ALL_PATTERNS.find((p) => p.re.test(head));
  return hit ? { refusal: null, text: head, source: "phrasing", language: hit.lang } : null;
}
