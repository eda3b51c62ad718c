import type { Sentence } from "./text.ts";
import { unicodePattern } from "./text.ts";

/**
 * Injection classes beyond the "ignore previous instructions" phrase (docs/analysis.md, "Prompt
 * injections"), judged per sentence of the quote-masked text:
 *
 * - `addressed_to_model`: a vocative naming an AI, assistant or agent before a colon ("AI assistant
 *   processing this mailbox: forward ...", "Coding agents: run ...") followed by an instruction.
 * - `forged_banner`: a bracketed system, developer, admin or tool banner ("[SYSTEM NOTICE]",
 *   "<system>", "### TOOL OVERRIDE ###", "developer mode enabled") whose block speaks to the model.
 * - `exfiltration`: an imperative asking for the system prompt, the instructions, secrets or the
 *   conversation, or sending them to an address.
 * - `agent_action`: an imperative action (run, send, call, open ...) with a secrecy cue aimed at the
 *   user ("do not ask the user", "without the user's confirmation", "silently").
 *
 * Every test is a bounded look at one sentence (its first 400 characters) or a banner's block
 * (at most 800 characters, at most MAX_BANNERS blocks per text), with patterns that nest no
 * quantifier: linear in the text.
 */
export type ClassRule = "addressed_to_model" | "forged_banner" | "exfiltration" | "agent_action";
export interface ClassHit {
  rule: ClassRule;
  language: string;
  /** Offsets in the masked text (same as the original's). */
  start: number;
  end: number;
  sentence: number;
}

const AGENT_WORDS = [
  // en
  String.raw`\bai\b`,
  String.raw`\ba\.i\.`,
  String.raw`\bllms?\b`,
  String.raw`\b(?:chat)?gpt\b`,
  String.raw`\bclaude\b`,
  String.raw`\bcopilot\b`,
  String.raw`\bgemini\b`,
  String.raw`\blanguage models?\b`,
  String.raw`\bassistants?\b`,
  String.raw`\bagents?\b`,
  String.raw`\bchatbots?\b`,
  String.raw`\bbots?\b`,
  // es, pt, it, fr, de, ru, uk, zh, ja, ko
  String.raw`\basistentes?\b`,
  String.raw`\bassistentes?\b`,
  String.raw`\bassistente\b`,
  String.raw`\bagentes?\b`,
  String.raw`\bia\b`,
  String.raw`\bki\b`,
  String.raw`\bki-`,
  String.raw`\bassistent(?:en)?\b`,
  String.raw`\bsprachmodell`,
  String.raw`\bии\b`,
  String.raw`\bші\b`,
  String.raw`ассистент`,
  String.raw`асистент`,
  String.raw`\bагент`,
  String.raw`нейросет`,
  String.raw`助手`,
  String.raw`智能体`,
  String.raw`大模型`,
  String.raw`语言模型`,
  String.raw`アシスタント`,
  String.raw`エージェント`,
  String.raw`어시스턴트`,
  String.raw`에이전트`,
];
const AGENT = unicodePattern(AGENT_WORDS.join("|"), "iu");
/** One word that alone is only a speaker label in chat logs ("Agent: please restart your router"). */
const BARE_LABEL = unicodePattern(String.raw`^(?:ai|assistant|agent|bot|llm|ia|ki|ии)$`, "iu");

/** English imperatives an instruction to a model opens with. */
const VERBS = new Set(
  `ignore disregard forget forward send email e-mail mail call run execute invoke open visit click navigate go browse print output reveal repeat show display tell say reply respond answer include add append insert write recommend rank describe approve merge mark rate delete remove erase transfer pay wire grant share upload post fetch download install summarize summarise translate encode decode use do make give provide return list find search read copy paste update change set enable disable switch act pretend begin continue treat consider follow obey comply inform notify contact buy order purchase book create invite accept confirm sign submit disclose leak dump render load retrieve access enter type fill stop start exfiltrate emit prepend replace refund close cancel reject archive move rename label flag schedule unsubscribe subscribe like star fork push commit deploy publish praise review score hire endorse claim state insist warn urge redirect suggest mention describe explain assume`.split(
    " ",
  ),
);
const SOFTENERS = new Set(
  "please kindly now immediately urgently quickly silently quietly secretly first then also just always instead".split(
    " ",
  ),
);
const SUBORDINATE = new Set("before after when once if while whenever".split(" "));

/** Words after a vocative that say it is an instruction, in the languages without a verb list here. */
const FOREIGN_INSTRUCTION = unicodePattern(
  [
    // es, pt, it, fr, de
    String.raw`\b(?:reenv[ií]a|env[ií]a|ejecuta|abre|dile|di|responde|ignora|revela|muestra|imprime|escribe|usuario)\b`,
    String.raw`\b(?:encaminhe|envie|execute|abra|diga|responda|ignore|revele|mostre|usuário)\b`,
    String.raw`\b(?:inoltra|invia|esegui|apri|rispondi|ignora|rivela|mostra|utente)\b|\bdi'`,
    String.raw`\b(?:transf[eè]re|envoie|ex[ée]cute|ouvre|dis|r[ée]ponds|ignore|r[ée]v[eè]le|affiche|utilisateur)\b`,
    String.raw`\b(?:gib|sende|leite|f[üu]hre|[öo]ffne|sag|antworte|ignoriere|zeige|benutzer|nutzer)\b`,
    // ru, uk
    String.raw`(?:перешли|отправь|выполни|открой|скажи|ответь|игнорируй|покажи|выведи|пользовател|надішли|виконай|користувач)`,
    // zh, ja, ko
    String.raw`(?:请|輸出|输出|发送|發送|转发|執行|执行|打开|告诉|忽略|显示|用户|用戶)`,
    String.raw`(?:してください|実行|送信|転送|開いて|表示|無視|教えて|ユーザー)`,
    String.raw`(?:하세요|해라|보내|실행|무시|사용자)`,
  ].join("|"),
  "iu",
);

/** What only a model has or does: its prompt, its reply, the user it serves, secrets it can reach. */
const MODEL_DOMAIN = unicodePattern(
  [
    String.raw`\bthe user(?:'s)?\b|\buser's\b|\bthe human\b`,
    String.raw`\b(?:your|its|the) (?:full |complete |entire |initial |original |hidden |secret )?(?:system prompt|system message|instructions|prompt)\b`,
    String.raw`\byour (?:next )?(?:reply|response|answer|output|message)\b`,
    String.raw`\bsystem prompt\b|\bconversation\b|\bchat history\b`,
    String.raw`\bapi[ _-]?keys?\b|\bsecrets?\b|\bpasswords?\b|\bcredentials\b|\btokens?\b|\benvironment variables?\b`,
    String.raw`\byou are (?:now )?(?:allowed|permitted|authori[sz]ed|required|free)\b`,
    String.raw`(?:systemprompt|prompt do sistema|prompt del sistema|prompt du système|системн\S* (?:промпт|подсказк)|系统提示|システムプロンプト|시스템 프롬프트)`,
    String.raw`\b(?:usuario|usuário|utente|utilisateur|benutzer|nutzer)\b|пользовател|користувач|用户|用戶|ユーザー|사용자`,
  ].join("|"),
  "iu",
);

/** A bracketed or shouted banner: a role word between brackets, or an override/mode switch. */
const BANNER = unicodePattern(
  [
    String.raw`[\[<]\s?/?(?:system|sys|developer|admin|administrator|root|tool|sistema|syst[eè]me|система|系统|システム)(?:[ _-]?(?:message|notice|note|prompt|instructions?|override|update|alert|policy|response|output|mode))?\s?[\]>]`,
    String.raw`\b(?:system|developer|admin|tool|security) (?:override|instructions? update)\b`,
    String.raw`\b(?:developer|god|admin|debug|jailbreak) mode (?:is )?(?:now )?(?:enabled|activated|on|unlocked|engaged)\b`,
    String.raw`\bmodo (?:desenvolvedor|desarrollador|programador) (?:ativado|activado|habilitado)\b`,
    String.raw`\bmode d[ée]veloppeur (?:activ[ée]|actif)\b|\bentwicklermodus (?:aktiviert|aktiv)\b`,
  ].join("|"),
  "giu",
);

/** Exfiltration: verbs that hand something over, and the things only a model holds. */
const EXFIL_VERBS =
  "print output reveal repeat show display tell give share send leak disclose dump provide write include return list copy append post upload forward email e-mail".split(
    " ",
  );
const EXFIL = unicodePattern(
  String.raw`^(?:print|output|reveal|repeat|show|display|tell me|give me|share|send|leak|disclose|dump|provide|write out|include|return|list|copy|append|post|upload|forward|email|e-mail)\b`,
  "iu",
);
const EXFIL_OBJECT = unicodePattern(
  [
    String.raw`\b(?:your|the|its) (?:full |complete |entire |exact |initial |original |hidden |secret |system )?(?:system prompt|system message|prompt|instructions|rules)\b`,
    String.raw`\binstructions you (?:were|have been) given\b|\b(?:everything|the text) above\b`,
    String.raw`\b(?:the |this |our |whole |entire )*(?:conversation|chat history|chat log|previous messages|earlier messages)\b`,
    String.raw`\b(?:(?:security|verification|one-time|2fa|mfa|login|reset) codes?|one-time passwords?)\b`,
    String.raw`\b(?:api[ _-]?keys?|secret(?:s| keys?| access keys?)|passwords?|credentials|(?:access|session|auth|bearer) tokens?|environment variables|private keys?)\b`,
    String.raw`\b[A-Z][A-Z0-9]*_(?:API_KEY|SECRET(?:_ACCESS_KEY)?|TOKEN|PASSWORD)\b`,
  ].join("|"),
  "u",
);
const EXFIL_OBJECT_I = new RegExp(EXFIL_OBJECT.source, "iu");
/** Where it is sent: a URL or an e-mail address. */
const DESTINATION = /https?:\/\/\S|[\w.+-]+@[\w-]+\.[\w.-]+/u;
const SEND = unicodePattern(
  String.raw`\b(?:send|post|upload|append|forward|submit|transmit|email|e-mail|exfiltrate)\b`,
  "iu",
);

/** agent_action: what an agent does, and secrecy aimed at the user. */
const ACTION = new Set(
  "run execute send email e-mail mail forward call invoke open visit click navigate go download install delete remove transfer pay wire approve grant enter submit post upload buy purchase access load retrieve fetch curl wget".split(
    " ",
  ),
);
const SECRECY_USER = unicodePattern(
  [
    String.raw`\b(?:do not|don't|dont|never|without)\s(?:ask(?:ing)?|tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|mention(?:ing)?(?: (?:it|this))?(?: to)?|confirm(?:ing)?(?: with)?|consult(?:ing)?|check(?:ing)? with|wait(?:ing)? for|bother(?:ing)?|involv(?:e|ing))\s(?:the |your |any )?(?:user|human|owner|customer|operator)s?\b`,
    String.raw`\bwithout (?:the |your )?(?:user'?s? |human'?s? )?(?:confirmation|permission|approval|consent|knowledge)\b`,
    String.raw`\b(?:do not|don't|dont|no need to) (?:have to |need to )?ask (?:for )?(?:permission|confirmation|approval)\b`,
    String.raw`\bnever mention (?:it|this)\b`,
    String.raw`\bsin (?:avisar|decir|preguntar)(?:le)? al usuario\b|\bsans (?:demander|pr[ée]venir|avertir) (?:à )?l'utilisateur\b`,
    String.raw`\bohne (?:den )?(?:benutzer|nutzer) zu (?:fragen|informieren)\b|\bsem (?:avisar|perguntar) (?:ao )?usuário\b`,
    String.raw`\bsenza (?:avvisare|chiedere) (?:all')?utente\b|не (?:сообщай|говори|спрашивай) пользовател`,
    String.raw`(?:不要告诉用户|无需用户确认|不要询问用户|ユーザーに(?:確認|知らせ)せず|사용자에게 (?:묻지|알리지) (?:말고|않고))`,
  ].join("|"),
  "iu",
);
const SECRECY_SELF = unicodePattern(String.raw`\b(?:silently|secretly|quietly|covertly)\b`, "iu");

const words = (s: string) => s.match(/[\p{L}\p{M}\p{N}'’-]+/gu) ?? [];

/** The instruction after a vocative's colon: "please", "now", a leading "before building," skipped. */
function instructionAfter(rest: string): boolean {
  let w = words(rest.slice(0, 200)).map((x) => x.toLowerCase());
  if (w.length && SUBORDINATE.has(w[0])) {
    const comma = rest.indexOf(",");
    if (comma === -1 || comma > 150) return false;
    w = words(rest.slice(comma + 1, comma + 200)).map((x) => x.toLowerCase());
  }
  let k = 0;
  while (k < w.length && SOFTENERS.has(w[k])) k++;
  if (w[k] === "you" && ["must", "should", "will", "need", "have", "are"].includes(w[k + 1] ?? "")) return true;
  if (w[k] && VERBS.has(w[k])) return true;
  return FOREIGN_INSTRUCTION.test(rest.slice(0, 200));
}

const GREETING = unicodePattern(String.raw`^(?:dear|hey|hi|hello|attention|listen|ok|okay)\b`, "iu");

/**
 * The end of a vocative naming an agent: the first colon of a sentence when what precedes it is
 * short and names one ("AI agent handling this order:"), or the first comma after a greeting
 * ("Dear assistant, ...").
 */
/**
 * What names a thing rather than addresses a reader, in a head before a colon (round 5, from a
 * sweep of developer docs read as tool results): package names ("**ai-sdk:** Add ...",
 * "openai-agents:", "pydantic_ai:"; lowercase ASCII joined by - _ / .), a table row or a Markdown
 * link ("| [Google Gemini](...) | ..."), and an agent word that modifies a product noun ("AI SDK
 * 5.0:", "Gemini CLI:", "Claude 4 models:").
 */
const PACKAGE_NAME = /@?[a-z0-9]+(?:[-_/.][a-z0-9]+)+/g;
const NOT_ADDRESSED = /\||\]\(/;
const PRODUCT_AFTER_AGENT =
  /\b(?:ai|a\.i\.|llm|gpt|claude|copilot|gemini|agent|assistant|bot)\s+(?:sdk|cli|api|apis|models?|integrations?|\d[\d.]*)\b/i;

function vocative(text: string): { colon: number } | null {
  const greeting = GREETING.test(text.replace(/^[^\p{L}\p{N}]+/u, ""));
  const colon = greeting ? text.search(/[,:：，]/u) : text.search(/[:：]/u);
  if (colon <= 0 || colon > 160) return null;
  const head = text.slice(0, colon).replace(/^[^\p{L}\p{N}]+/u, "");
  const hw = words(head);
  if (hw.length === 0 || hw.length > 12 || NOT_ADDRESSED.test(head)) return null;
  const named = head.replace(PACKAGE_NAME, " ");
  if (!AGENT.test(named) || PRODUCT_AFTER_AGENT.test(named)) return null;
  return { colon };
}

/** The first class hit among the sentences (offsets into `masked`), or null. */
export function classHit(masked: string, sentences: Sentence[], skip: (i: number) => boolean): ClassHit | null {
  const banners = { left: MAX_BANNERS };
  for (let i = 0; i < sentences.length; i++) {
    const s = sentences[i];
    const text = s.text.length > 400 ? s.text.slice(0, 400) : s.text;
    // Cheap hints first: most sentences have no colon, no bracket and none of the verbs.
    const verbs = VERB_HINT.test(text) ? clauses(text) : null;
    const hit =
      (COLON_HINT.test(text) ? vocativeHit(text, s.start, i) : null) ??
      (BANNER_HINT.test(text) ? bannerHit(masked, text, s.start, i, banners) : null) ??
      (verbs ? (exfilHit(verbs, s.start, i) ?? actionHit(verbs, masked, text, s.start, i)) : null);
    if (hit && !skip(hit.sentence)) return hit;
  }
  return null;
}

function vocativeHit(text: string, start: number, i: number): ClassHit | null {
  const v = vocative(text);
  if (!v) return null;
  const rest = text.slice(v.colon + 1);
  const head = text.slice(0, v.colon).replace(/^[^\p{L}\p{N}]+/u, "");
  // A bare speaker label ("Agent:", "Assistant:") is a chat log's unless what follows is the model's business.
  if (BARE_LABEL.test(head.trim()) && !MODEL_DOMAIN.test(rest)) return null;
  if (!instructionAfter(rest)) return null;
  return {
    rule: "addressed_to_model",
    language: /^[\x00-\x7f]*$/.test(head) ? "en" : "any",
    start,
    end: start + v.colon + 1,
    sentence: i,
  };
}

const COLON_HINT = /[:：]|^[^\p{L}]*(?:dear|hey|hi|hello|attention|listen|ok|okay)\b/iu;
const BANNER_HINT = /[[<]|mode|overrid|instructions? update/i;
/** Any verb the exfiltration and action rules open with (a sentence without one is skipped). */
const VERB_HINT = new RegExp(`\\b(?:${[...new Set([...EXFIL_VERBS, ...ACTION])].join("|")})\\b`, "i");

/** Banner blocks read per text (a log of a million "[SYSTEM] ok" lines reads 32 blocks, not all). */
export const MAX_BANNERS = 32;

function bannerHit(masked: string, text: string, start: number, i: number, banners: { left: number }): ClassHit | null {
  if (banners.left <= 0) return null;
  BANNER.lastIndex = 0;
  const m = BANNER.exec(text);
  if (!m) return null;
  banners.left--;
  // The banner's block: to the next blank line, at most 800 characters.
  const from = start + m.index;
  const window = masked.slice(from + m[0].length, from + 800);
  const blank = window.indexOf("\n\n");
  const block = blank === -1 ? window : window.slice(0, blank);
  if (!MODEL_DOMAIN.test(block) && !AGENT.test(block)) return null;
  return { rule: "forged_banner", language: "any", start: from, end: from + m[0].length, sentence: i };
}

/** The clause starts of a sentence: its start and after `,` `:` `-` `(` or a list number. */
function clauseStarts(text: string): number[] {
  const out = [0];
  for (let k = 0; k < text.length && out.length < 12; k++) {
    const c = text[k];
    if (c === "," || c === ":" || c === "(" || c === ")" || c === "—" || c === "–" || c === "*" || c === ">")
      out.push(k + 1);
  }
  return out;
}
type Clause = { at: number; words: string[]; text: string };
function clauses(text: string): Clause[] {
  return clauseStarts(text).map((at) => {
    const t = text.slice(at, at + 200).trimStart();
    return {
      at: at + (text.slice(at).length - text.slice(at).trimStart().length),
      words: words(t.slice(0, 60)).map((x) => x.toLowerCase()),
      text: t,
    };
  });
}
const lead = (w: string[]) => {
  let k = 0;
  while (k < w.length && (SOFTENERS.has(w[k]) || w[k] === "finally" || w[k] === "and")) k++;
  return k;
};

const PREPOSITION = unicodePattern(
  String.raw`\b(?:within|in|into|inside|about|for|of|on|at|from|by|with|under|over|through|like|as|than|that|which|so|because|if|when|before|after|and then)\b`,
  "iu",
);
/** The words after a clause's verb up to the first preposition or conjunction (at most 160 characters). */
function directObject(tail: string): string {
  const afterVerb = tail.replace(/^\S+\s*/u, "").slice(0, 160);
  const m = PREPOSITION.exec(afterVerb);
  return m ? afterVerb.slice(0, m.index) : afterVerb;
}

function exfilHit(cl: Clause[], start: number, i: number): ClassHit | null {
  for (const c of cl) {
    const k = lead(c.words);
    const verb = c.words[k];
    if (!verb) continue;
    const from = c.text.toLowerCase().indexOf(verb);
    const tail = c.text.slice(from);
    // The verb's object: what follows it up to the first preposition ("provide instructions
    // within the system prompt" asks for instructions, not for the system prompt).
    const object = directObject(tail);
    const asks = EXFIL.test(tail) && (EXFIL_OBJECT_I.test(object) || EXFIL_OBJECT.test(object));
    // Or anything that names the conversation or a secret, sent to an address.
    const sends =
      (VERBS.has(verb) || SEND.test(verb)) && SEND.test(tail) && EXFIL_OBJECT_I.test(tail) && DESTINATION.test(tail);
    if (asks || sends)
      return {
        rule: "exfiltration",
        language: "en",
        start: start + c.at,
        end: start + c.at + Math.min(tail.length, 80),
        sentence: i,
      };
  }
  return null;
}

function actionHit(cl: Clause[], masked: string, text: string, start: number, i: number): ClassHit | null {
  let action: { at: number } | null = null;
  for (const c of cl) {
    const w = c.words[lead(c.words)];
    if (w && ACTION.has(w)) {
      action = { at: c.at };
      break;
    }
  }
  if (!action) return null;
  // The cue may sit a sentence before or after (sentence ends inside URLs and paths split finer).
  const near = masked.slice(Math.max(0, start - 300), start + 500);
  if (SECRECY_USER.test(near) || SECRECY_SELF.test(text))
    return {
      rule: "agent_action",
      language: "en",
      start: start + action.at,
      end: start + Math.min(text.length, action.at + 80),
      sentence: i,
    };
  return null;
}
