export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

// scheme://userinfo@ -> scheme://<redacted>@ (NATS_URL, a webhook URL, a driver's error text).
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/\s@"'?#]+@/gi;

/** Any URL's userinfo (user, password, token) in `text` replaced by `<redacted>`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, "$1<redacted>@");
}

/** Structured JSON lines on stderr; `fields` carry the request or message id. */
export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}): Logger {
  const min = ORDER[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const line: Record<string, unknown> = { t: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    if (line.err instanceof Error) line.err = { name: line.err.name, message: line.err.message, stack: line.err.stack };
    // Every line, not only known fields: credentials in a URL never reach the log.
    console.error(redactUrlCredentials(JSON.stringify(line)));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}
