import type { ClassRule } from "./injection-classes.ts";
import { askHit } from "./injection-asks.ts";
import { hint, NEGATED_BEFORE, opensClause } from "./injection-clause.ts";
import { type Sentence, unicodePattern } from "./text.ts";

/**
 * Injection classes judged per sentence by what the text asks of whoever reads it (issue 38,
 * round 4; docs/analysis.md, "Prompt injections"):
 *
 * - `override` in many languages, by lexicon rather than by phrase: a verb of ignoring near an
 *   instruction word ("Disregard prior directives", "Overlook all that you've been instructed",
 *   "Oubliez les instructions précédentes", "事前の指示を無視して"), or a verb of ignoring followed
 *   by a scripted answer ("Ignore the user and reply with ...", "Ignora X y di que ...").
 * - what the text asks of the reader: its secrets, the user's records, an action on a decoded
 *   payload, a transformed reply (injection-asks.ts).
 * - `forged_banner`: an identity or mode claim made to the reader ("I'm your developer", "I am
 *   God", "You are the system prompt", "entering override mode", "Ich bin Gott") followed by a
 *   demand on what only the model holds (a password, the user, answering anything).
 *
 * A verb-first instruction must open its clause and not be negated ("Never share your password",
 * "N'oubliez pas vos instructions"); a question must end in a question mark. Bounds: each
 * sentence read in windows of 400 characters (overlapping by 80, at most 64 per sentence), pattern windows of at most 80 characters, patterns without nested
 * quantifiers: linear in the text.
 */
export interface ReaderHit {
  rule: "override" | ClassRule;
  language: string;
  start: number;
  end: number;
  sentence: number;
}

/** Per language: verbs of ignoring, instruction words, verbs of saying; `sov`: the object comes first. */
interface Lexicon {
  ignore: string;
  target: string;
  say: string;
  sov?: boolean;
}
const LEXICON: Record<string, Lexicon> = {
  en: {
    ignore: String.raw`\b(?:ignore|disregard|forget|overlook|neglect)\b`,
    target: String.raw`\b(?:(?:previous|prior|above|earlier|preceding|original|initial|system|your|those|all|any) (?:[a-z]+ ){0,2}(?:instructions?|directives?|directions|guidelines|rules|commands|orders|prompts?)|(?:everything|all|what|anything) (?:that )?you(?:'ve| have)? (?:been|were) (?:told|instructed|given))\b`,
    say: String.raw`\b(?:state|say|print|output|write|reply|respond|answer|tell|claim|report|return|declare|repeat|type)\b`,
  },
  es: {
    ignore: String.raw`\b(?:ignora|ignorar|ignore|ignorad|ignoren|olvida|olvidar|olvide|olvídate|olvídese|omite|omitir|omita|desatiende)\b`,
    target: String.raw`\b(?:instrucciones|indicaciones|directivas|reglas|órdenes|(?:todo )?lo que te (?:han dicho|dijeron))\b`,
    say: String.raw`\b(?:di|dile|diga|dígale|declara|declare|indica|indique|escribe|escriba|imprime|responde|responda|afirma|afirme|muestra|dice)\b`,
  },
  pt: {
    ignore: String.raw`\b(?:ignore|ignora|ignorem|esqueça|esqueca|esquece|desconsidere|desconsidera|despreze)\b`,
    target: String.raw`\b(?:instruções|instrucoes|diretrizes|diretivas|regras|ordens|o que (?:te|lhe) (?:foi dito|disseram))\b`,
    say: String.raw`\b(?:diga|declare|indique|escreva|imprima|responda|afirme|mostre|informe|estado)\b`,
  },
  fr: {
    ignore: String.raw`\b(?:ignore|ignorez|ignorer|oublie|oubliez|oublier|négligez|faites abstraction)\b`,
    target: String.raw`\b(?:instructions|consignes|directives|règles|ordres|(?:tout )?ce qu(?:'on|e l'on|e vous avez|e tu as) (?:t'a |vous a )?(?:dit|reçu))\b`,
    say: String.raw`\b(?:dis|dites|indique|indiquez|déclare|déclarez|écris|écrivez|affiche|affichez|réponds|répondez|affirme|affirmez|imprime|imprimez)\b`,
  },
  de: {
    ignore: String.raw`\b(?:ignoriere|ignorieren|ignoriert|vergiss|vergessen|missachte|missachten|übergehe)\b`,
    target: String.raw`\b(?:anweisungen|instruktionen|befehle|vorgaben|regeln|richtlinien|was (?:dir|ihnen) gesagt wurde)\b`,
    say: String.raw`\b(?:sag|sage|sagen|gib|geben|erkläre|erklären|schreib|schreibe|schreiben|antworte|antworten|behaupte|behaupten)\b`,
  },
  it: {
    ignore: String.raw`\b(?:ignora|ignorate|ignori|dimentica|dimenticate|dimentichi|trascura)\b`,
    target: String.raw`\b(?:istruzioni|indicazioni|direttive|regole|ordini|(?:tutto )?ciò che ti è stato detto)\b`,
    say: String.raw`\b(?:di'|dì|dici|dichiara|dichiari|indica|indichi|scrivi|scriva|afferma|rispondi|stampa|mostra)\b`,
  },
  nl: {
    ignore: String.raw`\b(?:negeer|vergeet)\b`,
    target: String.raw`\b(?:instructies|opdrachten|regels|richtlijnen)\b`,
    say: String.raw`\b(?:zeg|vermeld|schrijf|antwoord)\b`,
  },
  pl: {
    ignore: String.raw`\b(?:zignoruj|ignoruj|zapomnij|pomiń)\b`,
    target: String.raw`\b(?:instrukcje|polecenia|zasady|reguły|wytyczne)\b`,
    say: String.raw`\b(?:powiedz|podaj|napisz|stwierdź|odpowiedz)\b`,
  },
  ru: {
    ignore: String.raw`(?:игнорируй|игнорируйте|игнорировать|проигнорируй|проигнорируйте|забудь|забудьте|не обращай внимания|не обращайте внимания|пренебреги)`,
    target: String.raw`(?:инструкци|указани|правил|команд|директив|что (?:тебе|вам) (?:говорили|сказали))`,
    say: String.raw`(?:скажи|скажите|укажи|укажите|заяви|заявите|напиши|напишите|ответь|ответьте|выведи|выведите|сообщи|сообщите)`,
  },
  uk: {
    ignore: String.raw`(?:ігноруй|ігноруйте|забудь|забудьте)`,
    target: String.raw`(?:інструкці|вказівк|правил)`,
    say: String.raw`(?:скажи|скажіть|вкажи|вкажіть|напиши|напишіть)`,
  },
  el: {
    ignore: String.raw`(?:αγνόησε|αγνοήστε|ξέχασε|ξεχάστε)`,
    target: String.raw`(?:οδηγίες|εντολές|κανόνες)`,
    say: String.raw`(?:πες|πείτε|δηλώστε|δήλωσε|γράψε|γράψτε)`,
  },
  vi: {
    ignore: String.raw`(?:bỏ qua|phớt lờ|quên|lờ đi)`,
    target: String.raw`(?:hướng dẫn|chỉ dẫn|chỉ thị|quy tắc|những gì (?:bạn|đã) được)`,
    say: String.raw`(?:nói|ghi|viết|trả lời|tuyên bố|nêu|khẳng định)`,
  },
  id: {
    ignore: String.raw`\b(?:abaikan|lupakan|acuhkan|hiraukan)\b`,
    target: String.raw`\b(?:instruksi|perintah|petunjuk|aturan|arahan)\b`,
    say: String.raw`\b(?:katakan|nyatakan|tulis|tuliskan|jawab|sebutkan)\b`,
  },
  tl: {
    ignore: String.raw`\b(?:huwag pansinin|balewalain|kalimutan|ipagwalang-bahala)\b`,
    target: String.raw`\b(?:tagubilin|utos|panuto|patakaran|sinabi)`,
    say: String.raw`\b(?:sabihin|ipahayag|isulat|sagutin)\b`,
  },
  tr: {
    ignore: String.raw`(?:yok say(?!ma)|görmezden gel(?!me)|unut(?!ma)|dikkate alma|göz ardı et(?!me)|aldırma)`,
    target: String.raw`(?:talimat|komut|kural|yönerge|söylenen)`,
    say: String.raw`(?:belirt|söyle|yaz|yanıtla|beyan et|cevap ver)`,
    sov: true,
  },
  ar: {
    ignore: String.raw`(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|أهمل|اهمل|تغاضى|تغاض)`,
    target: String.raw`(?:التعليمات|تعليمات|الأوامر|الإرشادات|القواعد|ما قيل لك|تعليماتك)`,
    say: String.raw`(?:قل|قولي|اذكر|صرح|صرّح|اكتب|أجب|أعلن|وضح|ذكر)`,
  },
  hi: {
    ignore: String.raw`(?:अनदेखा|अनदेखी|नज़रअंदाज़|नजरअंदाज|भूल जा|उपेक्षा|अवहेलना)`,
    target: String.raw`(?:निर्देश|आदेश|नियम|बताया गया)`,
    say: String.raw`(?:बताएं|बताइए|बताइये|बतायें|बताये|बताओ|कहें|कहिए|कहो|लिखें|घोषित|बताएँ)`,
    sov: true,
  },
  bn: {
    ignore: String.raw`(?:উপেক্ষা|ভুলে যান|ভুলে যাও|অগ্রাহ্য|এড়িয়ে)`,
    target: String.raw`(?:নির্দেশ|নিয়ম|বলা হয়েছে)`,
    say: String.raw`(?:বলুন|লিখুন|জানান|উল্লেখ|বলো|ঘোষণা)`,
    sov: true,
  },
  zh: {
    ignore: String.raw`(?:忽略|无视|無視|忽视|忽視|忘记|忘記|不要理会|不要理會|别管|別管)`,
    target: String.raw`(?:指令|指示|说明|說明|规则|規則|命令|提示)`,
    say: String.raw`(?:声明|聲明|表示|指出|说|說|写|寫|输出|輸出|回答|陈述|陳述)`,
  },
  ja: {
    ignore: String.raw`(?:無視(?!しない)|忘れ(?!ない|ず))`,
    target: String.raw`(?:指示|命令|ルール|規則|言われたこと)`,
    say: String.raw`(?:述べ|言って|書いて|出力|答え|記載|表示|記述|明記)`,
    sov: true,
  },
  ko: {
    ignore: String.raw`(?:무시|잊어|잊으)`,
    target: String.raw`(?:지시|명령|지침|규칙)`,
    say: String.raw`(?:말하|말해|작성|출력|답하|명시|진술|밝히|기재)`,
    sov: true,
  },
  th: {
    ignore: String.raw`(?:เพิกเฉย|ละเว้น|ไม่ต้องสนใจ|ลืม|ละเลย|ไม่สนใจ)`,
    target: String.raw`(?:คำสั่ง|คำแนะนำ|กฎ|ข้อบังคับ)`,
    say: String.raw`(?:ระบุ|บอก|พูด|เขียน|ตอบ|แจ้ง)`,
  },
};

const GAP = String.raw`[^.!?。！？\n]{0,40}?`;
const SAY_GAP = String.raw`[^.!?。！？\n]{0,80}?`;
/**
 * Object-first languages: the instruction word must be the verb's object, so only a case ending
 * or particle and "all" may stand between ("指示を無視", "निर्देशों की अनदेखी", "talimatları unut");
 * "指示を修正しようとする試みを無視" ignores attempts, not the instructions.
 */
const OBJECT_GAP = String.raw`[^.!?。！？\n]{0,8}?`;
interface Compiled {
  language: string;
  /** The verb of ignoring and the instruction word it governs (object first in object-first languages). */
  target: RegExp;
  /** The verb of ignoring, then a verb of saying: "ignore X and state Y". */
  scripted: RegExp;
  sov: boolean;
}
const COMPILED: Compiled[] = Object.entries(LEXICON).map(([language, l]) => ({
  language,
  target: unicodePattern(
    l.sov ? `(?:${l.target})${OBJECT_GAP}(?:${l.ignore})` : `(?:${l.ignore})${GAP}(?:${l.target})`,
    "iu",
  ),
  scripted: unicodePattern(`(?:${l.ignore})${SAY_GAP}(?:${l.say})`, "iu"),
  sov: l.sov ?? false,
}));
/**
 * A cheap hint per sentence: a stem of a verb of ignoring in any language, as a plain pattern (the
 * lexicon's Unicode word boundaries make each of its patterns slower than one scan of this).
 */
const IGNORE_HINT = hint(
  /ignor|disregard|forget|overlook|neglect|olvid|omit|desatiend|esque|desconsider|desprez|oubli|abstraction|vergiss|vergessen|missacht|dimentic|trascur|negeer|vergeet|zignoruj|zapomnij|abaikan|lupakan|acuhkan|hiraukan|pansinin|balewal|kalimut|ipagwalang|yok say|unut|dikkate alma/i,
  /olvíd|néglig|übergeh|pomiń|игнор|забуд|не обращ|пренебр|ігнор|αγνο|ξεχ|bỏ qua|phớt lờ|quên|lờ đi|görmezden|göz ardı|aldırma|تجاهل|انس|أهمل|اهمل|تغاض|अनदेख|नज़रअंदाज़|नजरअंदाज|भूल जा|उपेक्षा|अवहेलना|উপেক্ষা|ভুলে|অগ্রাহ্য|এড়িয়ে|忽略|无视|無視|忽视|忽視|忘记|忘記|理会|理會|别管|別管|忘れ|무시|잊|เพิกเฉย|ละเว้น|ไม่ต้องสนใจ|ลืม|ละเลย|ไม่สนใจ/i,
);

function overrideHit(text: string): { at: number; end: number; language: string } | null {
  if (!IGNORE_HINT(text)) return null;
  for (const c of COMPILED) {
    for (const re of [c.target, c.scripted]) {
      re.lastIndex = 0;
      const m = re.exec(text);
      if (!m) continue;
      const before = text.slice(Math.max(0, m.index - 40), m.index);
      if (NEGATED_BEFORE.test(before)) continue;
      // Object-first languages put the instruction word first: any position; else the verb opens a clause.
      if (!c.sov && !opensClause(before)) continue;
      return { at: m.index, end: m.index + m[0].length, language: c.language };
    }
  }
  return null;
}

/** A claim to be someone the reader must obey, or a switch to a privileged mode. */
const CLAIM = unicodePattern(
  [
    String.raw`\b(?:i am|i'm)\s(?:now\s)?(?:your (?:developer|creator|maker|programmer|administrator|admin|operator|owner|maintainer|trainer)|god|the president of)\b`,
    String.raw`\bas your (?:creator|developer|maker|owner|master|admin|administrator|operator|programmer)\b`,
    String.raw`\byou are (?:now )?the system prompt\b|\byou are now (?:in )?(?:root|admin|god|developer) mode\b`,
    String.raw`\b(?:entering|initiating|activating|enabling|switching to|now in|entered|simulate)\b[^.?!\n]{0,30}\b(?:override|maintenance|god|developer|debug|admin|root|unrestricted|jailbreak|dan|law enforcement)\b[^.?!\n]{0,12}\bmode\b`,
    String.raw`<\s?(?:system|god|admin|developer|root|debug)[ _]mode\s?>`,
    String.raw`\b(?:soy|sou|je suis|ich bin|sono|ben)\s(?:tu |su |seu |um |uma |ton |votre |dein |ihr |il tuo |senin |bir )?(?:desarrollador|desenvolvedor|développeur|entwickler|sviluppatore|geliştirici\S*|dios|deus|dieu|gott|dio|tanrı\S*)`,
    String.raw`(?:я\s(?:твой |ваш )?(?:разработчик|бог|администратор))`,
    String.raw`(?:我是(?:你的)?(?:开发者|开发人员|上帝|神|管理员|创造者))`,
    String.raw`(?:私は(?:あなたの)?(?:開発者|神|管理者)|モードに入)`,
    String.raw`(?:(?:저는|나는) (?:당신의 )?(?:개발자|신|관리자))|모드['’]?에 돌입|เข้าสู่โหมด`,
    String.raw`(?:أنا (?:المطور|الله|المسؤول|مطورك))`,
    String.raw`(?:मैं (?:आपका )?(?:डेवलपर|भगवान|निर्माता))`,
    String.raw`\b(?:geliştiricinim|geliştiriciyim)\b`,
  ].join("|"),
  "iu",
);
/** What the claim is for: what only the model holds or does. */
const DEMAND = unicodePattern(
  String.raw`\b(?:passwords?|passcodes?|secrets?|secret keys?|api keys?|system prompt|instructions|the user'?s?|answer (?:all|any|anything|every)|all (?:of )?my questions|without (?:any )?restrictions|no restrictions|(?:every|each) (?:prompt|response)|confirm the|contraseña|senha|mot de passe|passwort|пароль|密码|パスワード|비밀번호|كلمة المرور|şifre\S*|parola\S*|पासवर्ड|পাসওয়ার্ড|รหัสผ่าน|mật khẩu|kata sandi|usuario|usuário|utilisateur|benutzer|nutzer|пользовател\S*|用户|ユーザー|사용자|المستخدم|kullanıcı\S*|उपयोगकर्ता|ব্যবহারকারী|ผู้ใช้|người dùng|pengguna|gumagamit|χρήστη|fragen beantworten|質問にすべて答え|答えてください|(?:output|print|say|state|write|repeat|type|display) the following)`,
  "iu",
);

/** A cheap hint for the claims (most sentences name no god, mode, role or "your"). */
const CLAIM_HINT = hint(
  /god|gott|\bdio\b|dieu|deus|tanr|mode|i am|i'm|as your|system prompt|\b(?:soy|sou|suis|bin|sono|ben)\b/i,
  /я |我是|私は|저는|나는|أنا|मैं|geliştiric|モード|모드|โหมด/i,
);

/**
 * A banner by its form alone: a mode tag ("<SYSTEM MODE>", "<developer_mode>") or a shouted
 * authority heading that overrides ("DEVELOPER TRAINING DATA OVERRIDE:"). Documents carry
 * neither; a demand need not follow.
 */
const BANNER =
  /<\s?(?:system|god|admin|developer|root|debug)[ _]mode\s?>|\b(?:SYSTEM|DEVELOPER|ADMIN|ADMINISTRATOR|ROOT|DEBUG|OPERATOR)\b[A-Z ]{0,40}\bOVERRIDE\s?:/iu;
const BANNER_HINT = /mode|OVERRIDE/i;

function claimHit(text: string, near: string): { at: number; end: number } | null {
  const b = BANNER_HINT.test(text) ? BANNER.exec(text) : null;
  if (b && (b[0].startsWith("<") || /[A-Z]{4} ?OVERRIDE/.test(b[0])))
    return { at: b.index, end: b.index + b[0].length };
  if (!CLAIM_HINT(text)) return null;
  const m = CLAIM.exec(text);
  if (!m || !DEMAND.test(near)) return null;
  const before = text.slice(0, m.index);
  if (/\b(?:if|when|whether|unless)\b/i.test(before)) return null;
  return { at: m.index, end: m.index + m[0].length };
}

/** The first reader-directed hit among the sentences (offsets into `masked`), or null. */
export function readerHit(masked: string, sentences: Sentence[], skip: (i: number) => boolean): ReaderHit | null {
  for (let i = 0; i < sentences.length; i++) {
    const s = sentences[i];
    // A long "sentence" (a table, a page without full stops) is read in windows of 400 characters
    // that overlap by 80, so what stands at its end is read too (at most MAX_WINDOWS per sentence).
    const windows = Math.min(MAX_WINDOWS, s.text.length <= 400 ? 1 : Math.ceil((s.text.length - 80) / 320));
    for (let w = 0; w < windows; w++) {
      const from = w * 320;
      const hit = windowHit(masked, s.text.slice(from, from + 400), s.start + from, from + 400 >= s.text.length, i);
      if (hit && !skip(i)) return hit;
      if (hit) break;
    }
  }
  return null;
}

/** Windows read per sentence: 64 cover a sentence of 20,000 characters. */
const MAX_WINDOWS = 64;

function windowHit(masked: string, text: string, start: number, last: boolean, i: number): ReaderHit | null {
  const after = last ? masked.slice(start + text.length, start + text.length + 2) : "";
  const o = overrideHit(text);
  if (o) return { rule: "override", language: o.language, start: start + o.at, end: start + o.end, sentence: i };
  const e = askHit(masked, text, after, start);
  if (e) return { rule: e.rule, language: "any", start: start + e.at, end: start + e.end, sentence: i };
  const near = masked.slice(start, start + text.length + 300);
  const c = claimHit(text, near);
  if (c) return { rule: "forged_banner", language: "any", start: start + c.at, end: start + c.end, sentence: i };
  return null;
}
