import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isRefusal, REFUSAL_MAX_READ, refusalPhrase } from "./refusal.ts";
import { maskQuoted, sentencesOf, unicodePattern } from "./text.ts";

const call = (text: string) => ({ refusal: null, finishReason: "stop", textHead: text, textLength: text.length });

describe("Unicode word boundaries", () => {
  test("a word ending or starting in a non-ASCII letter has its boundary (JavaScript's \\b has none)", () => {
    expect(/\bnie mogę\b/iu.test("nie mogę")).toBe(false); // the bug this module exists for
    expect(unicodePattern(String.raw`\bnie mogę\b`).test("nie mogę")).toBe(true);
    expect(unicodePattern(String.raw`\bnie mogę\b`).test("nie mogęx")).toBe(false);
    expect(unicodePattern(String.raw`\bnicht\b`).test("nichtü")).toBe(false);
    expect(unicodePattern(String.raw`\bübernehmen\b`).test("nicht übernehmen.")).toBe(true);
    expect(unicodePattern(String.raw`\bмогу\b`).test("я не могу")).toBe(true);
    expect(unicodePattern(String.raw`\bмогу\b`).test("я не могущий")).toBe(false);
    // Devanagari: a trailing vowel sign or anusvara is part of the word.
    expect(unicodePattern(String.raw`\bकर\b`).test("करें")).toBe(false);
    expect(unicodePattern(String.raw`\bकरें\b`).test("माफ करें,")).toBe(true);
  });
});

describe("refusals in every supported script, each text ending in a non-ASCII letter of its script", () => {
  const cases: Array<[string, string]> = [
    ["pl", "Przepraszam, ale w tej sprawie nie mogę"],
    ["pl", "Nie mogę pomóc"],
    ["cs", "Je mi líto, ale to není možné"],
    ["cs", "Omlouvám se, ale s tím vám nepomůžu"],
    ["de", "Es tut mir leid, aber das kann ich nicht übernehmen, tut mir leid, das weiß"],
    ["de", "Ich kann Ihnen nicht weiterhelfen, Grüß"],
    ["fr", "Je ne peux pas faire ça"],
    ["fr", "Désolé, mais je ne pourrai pas le faire, désolé"],
    ["es", "Lo siento, pero no lo haré"],
    ["es", "Lo siento, no podré"],
    ["pt", "Desculpe, mas não posso ajudar com isso, não"],
    ["it", "Mi dispiace, ma non potrò farlo, è così"],
    ["vi", "Xin lỗi, tôi không thể giúp việc đó"],
    ["vi", "Tôi không thể hỗ trợ yêu cầu này được"],
    ["tr", "Üzgünüm, bu konuda yardımcı olamam"],
    ["ru", "Извините, но я не могу с этим помочь"],
    ["uk", "Вибачте, але я не можу допомогти з цим"],
    ["ar", "عذرًا، لا أستطيع المساعدة في هذا الطلب"],
    ["hi", "क्षमा करें, मैं इसमें आपकी मदद नहीं कर सकता"],
    ["zh", "抱歉，我无法提供这方面的帮助"],
    ["ja", "申し訳ありませんが、そのご依頼にはお応えできません"],
    ["ko", "죄송하지만 그 요청은 도와드릴 수 없습니다"],
    ["th", "ขออภัย ฉันไม่สามารถช่วยเรื่องนี้ได้"],
    ["id", "Maaf, saya tidak bisa membantu dengan permintaan itu"],
    ["nl", "Sorry, maar ik kan je daar niet mee helpen"],
    ["en", "I'm sorry, but I can't help with that."],
  ];
  for (const [lang, text] of cases)
    test(`${lang}: ${text}`, () => {
      expect(refusalPhrase(text)?.language).toBe(lang);
      expect(isRefusal(call(text), 600)).toMatchObject({ source: "phrasing", language: lang });
    });

  test("a long Hindi refusal, past the old 60-character gap and 300-character window, is found", () => {
    const text =
      "आपके प्रश्न के लिए धन्यवाद, मैं समझता हूँ कि यह विषय आपके लिए बहुत महत्वपूर्ण है और आप इसके बारे में अधिक जानना चाहते हैं। " +
      "मुझे खेद है, लेकिन आपने जो जानकारी माँगी है वह दूसरों को गंभीर नुकसान पहुँचा सकती है और हमारी सुरक्षा नीतियों के " +
      "विरुद्ध है, इसलिए इस विषय पर विस्तृत निर्देश देने में मैं आपकी सहायता नहीं कर सकता। यदि आपके कोई अन्य प्रश्न हों तो " +
      "मैं ख़ुशी से मदद करूँगा।";
    expect(text.indexOf("नहीं कर सकता")).toBeGreaterThan(300);
    expect(isRefusal(call(text), 600)).toMatchObject({ source: "phrasing", language: "hi" });
  });

  test("a refusal in a later sentence of a short reply counts; decomposed (NFD) text matches too", () => {
    expect(refusalPhrase("Thanks for asking. Unfortunately, I can't help with that.")?.language).toBe("en");
    expect(refusalPhrase("Xin lỗi, tôi không thể giúp việc đó".normalize("NFD"))?.language).toBe("vi");
  });

  test("look-alikes are not refusals: quotes, inability that is not refusal, apologies that help", () => {
    for (const text of [
      "Nie mogę się doczekać wyników!",
      "No puedo creer lo fácil que es: usa map().",
      "Я не могущественный волшебник, но вот ответ: 42.",
      "«Je ne peux pas vous aider» est le message affiché par le filtre.",
      "„Es tut mir leid, dabei kann ich nicht helfen“ erscheint, wenn der Filter greift.",
      "「申し訳ありませんが、お手伝いできません」というメッセージはフィルターが出します。",
      "> Извините, но я не могу с этим помочь.\nЭто сообщение означает, что запрос был заблокирован.",
      "```\nI'm sorry, but I can't help with that.\n```\nThat string is the fallback reply.",
    ])
      expect([text, refusalPhrase(text)]).toEqual([text, null]);
    const long = `Lo siento por la espera. No puedo creer que funcione: ${"código ".repeat(100)}`;
    expect(isRefusal(call(long), 600)).toBeNull();
  });
});

describe("bounded cost on hostile text", () => {
  test("a multi-MB reply is dismissed on its length; a reply at the read bound is matched in linear time", () => {
    const huge = "I'm sorry ".repeat(300_000);
    expect(isRefusal({ ...call(huge.slice(0, REFUSAL_MAX_READ)), textLength: huge.length }, 1e9)).toBeNull();
    // Worst cases for the patterns at the read bound: many apologies and no inability, no sentence end.
    for (const unit of ["I'm sorry ", "lo siento ", "抱歉", "क्षमा करें ", "“", "> ", "nie "]) {
      const text = unit.repeat(Math.ceil(REFUSAL_MAX_READ / unit.length)).slice(0, REFUSAL_MAX_READ);
      expect(isRefusal(call(text), REFUSAL_MAX_READ)).toBeNull();
    }
  });

  test("masking and sentence splitting keep offsets and length, for any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (text) => {
        const masked = maskQuoted(text);
        expect(masked.length).toBe(text.length);
        for (const s of sentencesOf(text)) expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
      }),
      { numRuns: 300 },
    );
  });
});
