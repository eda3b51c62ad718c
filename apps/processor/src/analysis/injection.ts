import { type ClassRule, classHit } from "./injection-classes.ts";
import { disguisedHit } from "./injection-disguised.ts";
import { implicitHit } from "./injection-implicit.ts";
import { readerHit } from "./injection-reader.ts";
import { taskHit } from "./injection-tasks.ts";
import { DECODED_VIEWS, type ViewKind, viewsOf } from "./injection-views.ts";
import { maskQuoted, normalizeText, type Sentence, sentencesOf, unicodePattern } from "./text.ts";

/**
 * Prompt injections: instructions aimed at the model inside content the model did not get from
 * the user or the developer (tool results: fetched pages, retrieved documents, e-mails, API
 * answers). Precision first: only imperative instructions that begin a clause count, and text
 * that only quotes or discusses an injection (quoted spans, `>` lines, code blocks, sentences about
 * "prompt injection", "for example", "attackers" ...) is skipped. docs/analysis.md, "Prompt
 * injections". Pure and linear: one pass over the text per pattern, no nested quantifiers.
 */
export type InjectionRule = "override" | "role_marker" | ClassRule;

/** "Ignore (all) previous instructions" in each language: the override itself. */
const OVERRIDE: Record<string, string[]> = {
  en: [
    String.raw`\b(?:ignore|disregard|forget|override|bypass)\b (?:all |any |every )?(?:of )?(?:the |your |my |these |those )?(?:previous|prior|above|earlier|preceding|original|initial|system|developer|existing) (?:instructions?|prompts?|rules|directions|guidelines|messages|commands)\b`,
    String.raw`\bforget (?:everything|all) (?:you (?:were|have been) told|above|before|so far)\b`,
    // Round 3 (PromptInject via garak, development cases): both directions, and the shouted stop.
    String.raw`\b(?:ignore|disregard|forget)\b (?:all |any |every )?(?:of )?(?:the |your )?(?:previous|prior|above|earlier|preceding) (?:and|or|&) (?:following|subsequent|later|below|next) (?:instructions?|prompts?|rules|directions|commands)\b`,
    String.raw`\bstop everything\b[^.\n]{0,40}?\b(?:just )?(?:print|say|output|write|repeat|type)\b`,
    // Reworded overrides (issue 38 round 2, development cases from deepset, HackAPrompt, AgentDojo).
    String.raw`\bforget (?:about )?(?:everything|all(?: of)?(?: the)?|your) (?:before (?:that|this)|(?:previous |prior |above |earlier )?(?:assignments|tasks|information|instructions|rules))\b`,
    String.raw`\b(?:ignore|disregard)\b (?:all of |everything )?(?:the )?(?:above|text above|preceding text|previous text)(?: text)?,? (?:and )?(?:instead |just |only |now )?(?:say|print|output|write|respond|reply|answer|return|translate|tell|repeat|type)\b`,
    String.raw`\b(?:ignore|disregard|skip)\b (?:the rest of|the remainder of|everything else in) (?:this|the) (?:document|e-?mail|page|text|data|file|message|content|input|context|results?|article|thread)\b`,
    String.raw`\binstead of (?:summari[sz]ing|translating|answering|analy[sz]ing|reviewing|reading) (?:this|the|that|it)\b`,
    String.raw`\bimportant new instructions\b|\b(?:now )?new tasks? follows?\b|\bfocus on your new task\b|\byour (?:new|real|actual|true) (?:task|instructions?|objective|mission) (?:is|are)\b`,
    String.raw`\bbefore you (?:can )?(?:solve|complete|finish|do|continue|answer)\b[^.\n]{0,60}?\bdo the following\b`,
    String.raw`\byou are now (?:in )?(?:dan|developer mode|jailbroken|unrestricted|an? (?:unrestricted|unfiltered|different) (?:ai|assistant|model))\b`,
  ],
  es: [
    String.raw`\b(?:ignora|ignore|olvida|olvide|omite)\b (?:todas )?(?:las )?instrucciones (?:anteriores|previas|del sistema)\b`,
  ],
  pt: [
    String.raw`\b(?:ignore|ignora|esqueça|esqueca)\b (?:todas )?(?:as )?instruções (?:anteriores|prévias|do sistema)\b`,
  ],
  fr: [
    String.raw`\b(?:ignore|ignorez|oublie|oubliez)\b (?:toutes )?(?:les |tes |vos )?instructions (?:précédentes|antérieures|du système)\b`,
  ],
  de: [
    String.raw`\b(?:ignoriere|ignorieren sie|vergiss|vergessen sie)\b (?:alle )?(?:vorherigen|bisherigen|obigen|früheren|vorigen) (?:anweisungen|instruktionen|befehle)\b`,
  ],
  it: [String.raw`\b(?:ignora|dimentica)\b (?:tutte )?(?:le )?istruzioni (?:precedenti|del sistema)\b`],
  nl: [String.raw`\b(?:negeer|vergeet)\b (?:alle )?(?:vorige|eerdere|voorgaande) (?:instructies|opdrachten)\b`],
  pl: [
    String.raw`\b(?:zignoruj|ignoruj|zapomnij)\b (?:wszystkie )?(?:poprzednie|wcześniejsze|dotychczasowe) (?:instrukcje|polecenia)\b`,
  ],
  cs: [String.raw`\b(?:ignoruj|ignorujte|zapomeň)\b (?:všechny )?(?:předchozí|dosavadní) (?:pokyny|instrukce)\b`],
  tr: [String.raw`\bönceki (?:tüm )?(?:talimatları|komutları) (?:yok say|görmezden gel|unut)`],
  id: [String.raw`\b(?:abaikan|lupakan)\b (?:semua )?(?:instruksi|perintah) sebelumnya\b`],
  vi: [
    String.raw`\b(?:bỏ qua|phớt lờ|quên)\b (?:tất cả )?(?:các |mọi )?(?:hướng dẫn|chỉ dẫn|lệnh) (?:trước đó|trước|ban đầu)\b`,
  ],
  ru: [
    String.raw`\b(?:игнорируй|игнорируйте|забудь|забудьте|проигнорируй)\b (?:все )?(?:предыдущие|прежние|прошлые|системные) (?:инструкции|указания|команды)\b`,
  ],
  uk: [
    String.raw`\b(?:ігноруй|ігноруйте|забудь|забудьте)\b (?:всі |усі )?(?:попередні|системні) (?:інструкції|вказівки)\b`,
  ],
  ar: [String.raw`(?:تجاهل|انس|أهمل) (?:جميع |كل )?(?:التعليمات|الأوامر|الإرشادات) (?:السابقة|الأصلية)`],
  hi: [String.raw`(?:पिछले|पहले के|सभी पिछले) (?:सभी )?(?:निर्देशों|आदेशों) को (?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)`],
  zh: [
    String.raw`(?:忽略|无视|無視|忘记|忘記)(?:之前|以上|先前|上面|前面|所有之前|所有先前)?的?(?:所有)?(?:指令|指示|说明|說明|规则|規則)`,
  ],
  ja: [String.raw`(?:以前|これまで|上記|前)の(?:すべての|全ての)?(?:指示|命令|ルール)を(?:すべて|全て)?(?:無視|忘れ)`],
  ko: [String.raw`(?:이전|앞의|위의)(?:의)? (?:모든 )?(?:지시|명령|지침)(?:을|를|사항을)? (?:무시|잊어)`],
  th: [String.raw`(?:เพิกเฉย|ละเว้น|ไม่ต้องสนใจ|ลืม)(?:ต่อ)?(?:คำสั่ง|คำแนะนำ)(?:ทั้งหมด)?(?:ก่อนหน้า|เดิม)`],
};

/** Chat-template and system-prompt markers that only make sense as a forged role switch. */
const ROLE_MARKERS = [
  String.raw`<\|im_start\|>\s?(?:system|assistant)`,
  String.raw`<\|(?:system|start_header_id)\|>`,
  String.raw`<<SYS>>`,
  String.raw`\[/?INST\]`,
  String.raw`\bbegin (?:new |updated )?system (?:prompt|instructions)\b`,
];

/** The text addresses the model that reads it. */
const ADDRESSED: Record<string, string[]> = {
  en: [
    String.raw`\b(?:note|message|instructions?|attention|important(?: note)?) (?:to|for) (?:the |any |all )?(?:ai|llm|language model|ai assistants?|ai agents?|assistants?|agents?|chatbots?)\b`,
    String.raw`\bif you are an? (?:ai|llm|large language model|language model|ai assistant|ai agent|assistant|chatbot|automated agent)\b`,
  ],
  es: [String.raw`\b(?:nota|mensaje) para (?:la |el )?(?:ia|asistente|modelo)\b`],
  fr: [String.raw`\bsi (?:tu es|vous êtes) une? (?:ia|assistant|modèle)\b`],
  de: [String.raw`\bwenn du eine? (?:ki|assistent|sprachmodell) bist\b`],
};

const compile = (list: string[]) => list.map((source) => unicodePattern(source, "giu"));
const PATTERNS: Array<{ rule: InjectionRule; language: string; re: RegExp }> = [
  ...Object.entries(OVERRIDE).flatMap(([language, list]) =>
    compile(list).map((re) => ({ rule: "override" as const, language, re })),
  ),
  ...compile(ROLE_MARKERS).map((re) => ({ rule: "role_marker" as const, language: "any", re })),
  ...Object.entries(ADDRESSED).flatMap(([language, list]) =>
    compile(list).map((re) => ({ rule: "addressed_to_model" as const, language, re })),
  ),
];

/** A sentence (or the one before it) that talks about injections, or gives an example, discusses one. */
const DISCUSSION = unicodePattern(
  [
    String.raw`prompt[- ]?injection`,
    String.raw`injection (?:attack|de prompt|de instrucciones)`,
    String.raw`\bjailbreak`,
    String.raw`\bfor (?:example|instance)\b`,
    String.raw`\be\.g\.`,
    String.raw`\bsuch as\b`,
    String.raw`\battack(?:er|ers|s)?\b`,
    String.raw`\bmalicious\b`,
    String.raw`\badversar`,
    String.raw`\b(?:phrases?|strings?|payloads?) like\b`,
    String.raw`\binyecci[oó]n`,
    String.raw`\bejemplo`,
    String.raw`\bexemple`,
    String.raw`\bbeispiel`,
    String.raw`injektion`,
    String.raw`инъекц`,
    String.raw`\bнапример\b`,
    String.raw`\bпример`,
    String.raw`注入`,
    String.raw`例如`,
    String.raw`例えば`,
    String.raw`インジェクション`,
    String.raw`인젝션`,
    String.raw`예를 들어`,
    String.raw`حقن`,
    String.raw`مثال`,
    String.raw`इंजेक्शन`,
    String.raw`उदाहरण`,
    String.raw`wstrzykiwan`,
    String.raw`\bprzykład`,
    String.raw`\bví dụ\b`,
    String.raw`การโจมตี`,
    String.raw`ตัวอย่าง`,
  ].join("|"),
);

/**
 * A discussion word that is the instruction's own ("tell the user it is not malicious", "this is
 * no attack") says nothing about the text discussing injections: negated, it does not count.
 */
const NEGATED = /\b(?:not|no|non-|isn't|is not|never|nothing) ?(?:an? )?(?:malicious|attack|adversarial)\b/giu;
/** "example(s)" as a word, not inside a domain or identifier ("example.com", "example-shop") nor a name ("Example Registrar"). */
const EXAMPLE = /\b[Ee]xamples?\b(?![.\-_/@]\w)(?! \p{Lu}\p{Ll})/u;
const discusses = (sentence: string) => {
  const s = sentence.replace(NEGATED, " ");
  return DISCUSSION.test(s) || EXAMPLE.test(s.replace(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[\w-]+\.example\b/gu, " "));
};

/** Words that may precede an imperative in its clause ("Please ignore ...", "AI: ignore ..."). */
const LEAD_IN = new Set(
  "please now so and then also instead important urgent note attention assistant ai agent model system admin hey ok okay por favor ahora bitte jetzt s'il vous plaît maintenant proszę teraz пожалуйста теперь 请 請 现在 現在".split(
    " ",
  ),
);
const CLAUSE_END = new Set([..."([{:,—–-*_#>|!¡¿\"'“”«»「」"]);

function opensClause(before: string): boolean {
  const t = before.trimEnd();
  if (t === "" || CLAUSE_END.has(t[t.length - 1])) return true;
  const last = t.slice(t.lastIndexOf(" ") + 1).toLowerCase();
  return LEAD_IN.has(last) || [...LEAD_IN].some((w) => w.length > 1 && /[^\x00-\x7f]/.test(w) && t.endsWith(w));
}

export interface InjectionHit {
  rule: InjectionRule;
  language: string;
  /** JSON path of the string the instruction is in (`$` for plain text). */
  path: string;
  /** Offsets of the matched instruction in that string (NFC form, UTF-16 units). */
  start: number;
  end: number;
  /** The sentence holding it, as written (at most 300 characters). */
  text: string;
  /** URLs, e-mail addresses, identifiers and quoted phrases the instruction names: what following it would repeat. */
  anchors: string[];
  /**
   * Where it hid (injection-views.ts): null when it is in the text as written; else the view it
   * was read in (`markup`, `invisible`, `homoglyph`, `base64`, `rot13`), and `start`/`end` and
   * `text` point into that view.
   */
  via: ViewKind | null;
}

const URL_OR_MAIL = /https?:\/\/[^\s"'<>)\]]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gu;
const IDENTIFIER = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g;
const QUOTED = /"([^"\n]{6,80})"|“([^”\n]{6,80})”|'([^'\n]{6,80})'/gu;

function anchorsOf(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(URL_OR_MAIL)) out.add(m[0].replace(/[.,;:]+$/, ""));
  for (const m of text.matchAll(IDENTIFIER)) out.add(m[0]);
  for (const m of text.matchAll(QUOTED)) out.add((m[1] ?? m[2] ?? m[3]).trim());
  return [...out].filter((a) => a.length >= 4).slice(0, 20);
}

/**
 * A dot between two letters or digits ("example.com", "v2.1", "••7681.If") ends no sentence for
 * these rules: such sentences are read as one (at most 64 joins a text, each sentence to 600
 * characters).
 */
function joinDotted(masked: string, sentences: Sentence[]): Sentence[] {
  const out: Sentence[] = [];
  let joins = 64;
  for (const s of sentences) {
    const prev = out[out.length - 1];
    const end = prev ? prev.start + prev.text.length : -1;
    if (
      prev &&
      joins > 0 &&
      s.start === end + 1 &&
      masked[end] === "." &&
      /[\p{L}\p{N}]/u.test(masked[end - 1] ?? "") &&
      /[\p{L}\p{N}]/u.test(masked[s.start] ?? "") &&
      prev.text.length + s.text.length < 600
    ) {
      out[out.length - 1] = { start: prev.start, text: masked.slice(prev.start, s.start + s.text.length) };
      joins--;
    } else out.push(s);
  }
  return out;
}

/** Index of the sentence holding offset `at` (sentences sorted by start). */
function sentenceAt(sentences: Sentence[], at: number): number {
  let lo = 0;
  let hi = sentences.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sentences[mid].start <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The first injection in one string, or null: in the text as written, else in one of its views
 * (injection-views.ts: markup, invisible characters, look-alike letters, base64, rot13). Linear in
 * the string: one masking pass, one sentence pass, one pass per pattern (a single alternation of
 * all of them is slower: the engine loses its first-character scan), one bounded look per
 * sentence for the classes (injection-classes.ts), and the same over each view.
 */
export function injectionInText(raw: string, path = "$"): InjectionHit | null {
  const hit = scanText(raw, path, null);
  if (hit) return hit;
  for (const view of viewsOf(raw)) {
    const found =
      scanText(view.text, path, view.via) ??
      (DECODED_VIEWS.has(view.via) ? decodedCommand(view.text, path, view.via) : null);
    if (found) return found;
  }
  return null;
}

/** Verbs a hidden command opens with; words of six letters or more match at an edit distance of 2, shorter ones exactly. */
const COMMAND_VERBS =
  "ignore disregard forget override bypass say state print output reply respond tell send forward reveal include repeat write answer follow click visit execute run delete".split(
    " ",
  );
/** Levenshtein distance, given up past `max` (words are short: at most 12 by 12 cells). */
function within(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]);
    }
    if (best > max) return false;
    prev = row;
  }
  return prev[b.length] <= max;
}
const INSTRUCTION_WORDS =
  /\b(?:previous|prior|above|earlier|original|initial|system) (?:instructions?|prompts?|rules|directives?)\b/i;
/**
 * A command hidden in an encoding (base64, hex, binary, Morse, a Caesar shift): nobody encodes an
 * order to a human reader inside a document, so a decoded sentence that opens with a verb of
 * command, even misspelled ("Inore the function and state ..."), or names the reader's
 * instructions, is an instruction to the model. Only decoded views (injection-views.ts,
 * DECODED_VIEWS); at most 64 sentences of each are looked at.
 */
function decodedCommand(text: string, path: string, via: ViewKind): InjectionHit | null {
  const sentences = sentencesOf(text).slice(0, 64);
  for (const s of sentences) {
    const first = /^[\p{L}']+/u.exec(s.text)?.[0].toLowerCase() ?? "";
    const verb =
      first.length >= 3 &&
      COMMAND_VERBS.some((v) => (v.length >= 6 ? within(first, v, 2) : first === v)) &&
      /\s\S+\s\S+/.test(s.text);
    const named = INSTRUCTION_WORDS.exec(s.text);
    if (!verb && !named) continue;
    const at = verb ? 0 : (named?.index ?? 0);
    return {
      rule: "addressed_to_model",
      language: "en",
      path,
      start: s.start + at,
      end: s.start + (verb ? first.length : at + (named?.[0].length ?? 0)),
      text: s.text.slice(0, 300),
      anchors: anchorsOf(s.text),
      via,
    };
  }
  return null;
}

function scanText(raw: string, path: string, via: ViewKind | null): InjectionHit | null {
  const text = normalizeText(raw);
  const masked = maskQuoted(text);
  const sentences = joinDotted(masked, sentencesOf(masked));
  if (sentences.length === 0) return null;
  const original = (k: number) => text.slice(sentences[k].start, sentences[k].start + sentences[k].text.length);
  let best: InjectionHit | null = null;
  for (const p of PATTERNS) {
    p.re.lastIndex = 0;
    for (let m = p.re.exec(masked); m && (!best || m.index < best.start); m = p.re.exec(masked)) {
      const i = sentenceAt(sentences, m.index);
      const s = sentences[i];
      if (p.rule !== "role_marker" && !opensClause(masked.slice(s.start, m.index))) continue;
      const here = original(i);
      if (discusses(here) || (i > 0 && discusses(original(i - 1)))) continue;
      // What the instruction asks: this sentence and the next two.
      const last = sentences[Math.min(i + 2, sentences.length - 1)];
      best = {
        rule: p.rule,
        language: p.language,
        path,
        start: m.index,
        end: m.index + m[0].length,
        text: here.slice(0, 300),
        anchors: anchorsOf(text.slice(s.start, last.start + last.text.length)),
        via,
      };
      break;
    }
  }
  if (best) return best;
  const discussed = (i: number) => discusses(original(i)) || (i > 0 && discusses(original(i - 1)));
  const c =
    classHit(masked, sentences, discussed) ??
    implicitHit(masked, text, sentences, discussed) ??
    taskHit(masked, text, sentences, discussed) ??
    readerHit(masked, sentences, discussed) ??
    disguisedAsClass(masked, sentences, discussed);
  if (!c) return null;
  const last = sentences[Math.min(c.sentence + 2, sentences.length - 1)];
  return {
    rule: c.rule,
    language: c.language,
    path,
    start: c.start,
    end: c.end,
    text: original(c.sentence).slice(0, 300),
    anchors: anchorsOf(text.slice(sentences[c.sentence].start, last.start + last.text.length)),
    via,
  };
}

/** A disguised instruction (injection-disguised.ts) directs the model's reply: `addressed_to_model`. */
function disguisedAsClass(masked: string, sentences: Sentence[], skip: (i: number) => boolean) {
  const d = disguisedHit(masked, sentences, skip);
  return d ? { rule: "addressed_to_model" as const, language: "en", ...d } : null;
}

/**
 * The first injection in a tool result's content, or null: JSON content is walked (every string
 * value, with its path), anything else read as text. Bound: at most `scanChars` characters are
 * read per result (the rest is ignored), in time linear in them.
 */
export function injectionInContent(text: string, scanChars: number): InjectionHit | null {
  const head = text.length > scanChars ? text.slice(0, scanChars) : text;
  const trimmed = head.trimStart();
  if ((trimmed.startsWith("{") || trimmed.startsWith("[")) && head.length === text.length) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(head);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined) return injectionInJson(parsed, "$");
  }
  return injectionInText(head);
}

function injectionInJson(value: unknown, path: string): InjectionHit | null {
  if (typeof value === "string") return injectionInText(value, path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = injectionInJson(value[i], `${path}[${i}]`);
      if (hit) return hit;
    }
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const hit = injectionInJson(v, /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);
      if (hit) return hit;
    }
  }
  return null;
}

/**
 * Did the next model turn follow the instruction? It did when it repeats what the instruction
 * named and the user never did: calls a tool the instruction names, or its text or tool arguments
 * carry a URL, address, identifier or quoted phrase from it.
 */
export function followedAnchor(
  anchors: string[],
  next: { text: string; toolCalls: Array<{ name: string | null; arguments: string }> },
): string | null {
  const text = next.text.toLowerCase();
  for (const a of anchors) {
    const needle = a.toLowerCase();
    if (next.toolCalls.some((c) => c.name?.toLowerCase() === needle || c.arguments.toLowerCase().includes(needle)))
      return a;
    if (text.includes(needle)) return a;
  }
  return null;
}
