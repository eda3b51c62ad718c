import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { Link, useSearchParams } from "wouter-preact";
import { ApiError, type Me } from "./api";
import { withoutPosition } from "./pager";

/** Where a page's load stands: the last data (kept while a reload runs), or the last error. */
export interface LoadState<T> {
  data?: T;
  error?: Error;
  loading: boolean;
}

/** A load (re)starts: the data on screen stays until the answer comes, an old error goes. */
export const loadStarted = <T,>(s: LoadState<T>): LoadState<T> => ({ data: s.data, loading: true });

/** A load ended: its data, or its error (and no stale data beside it). */
export const loadEnded = <T,>(outcome: { data: T } | { error: Error }): LoadState<T> => ({
  ...outcome,
  loading: false,
});

/** Loads data for a page; re-runs when `deps` change; the latest call wins. */
export function useLoad<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<LoadState<T>>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setState(loadStarted);
    fn(ctrl.signal).then(
      (data) => !ctrl.signal.aborted && setState(loadEnded({ data })),
      (error) => !ctrl.signal.aborted && setState(loadEnded<T>({ error })),
    );
    return () => ctrl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function ErrorBox({ error }: { error?: Error }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge badge-${kind}`}>{children}</span>;
}

/** Readiness of a materialized read (docs/platform-api.md): complete, partial or processing. */
export function StatusBadge({ status }: { status: string }) {
  const label =
    { complete: "Complete", partial: "Partial: new activity is being processed", processing: "Processing" }[status] ??
    status;
  return <Badge kind={status}>{label}</Badge>;
}

/** The first thing a new tenant needs: one trace sent with curl. */
export function FirstTraceHelp({ me }: { me?: Me }) {
  const now = "$(date -u +%Y-%m-%dT%H:%M:%SZ)";
  const curl = `INGEST=http://127.0.0.1:3100   # your ingest URL
KEY=cel_tk_...                  # npm run admin -- key create --tenant <id> --kind telemetry
NOW=${now}
curl -s -X POST $INGEST/raw/traces -H "Authorization: Bearer $KEY" \\
  -H 'Content-Type: application/json' -d '{
  "provider": "openai", "service_name": "demo-app", "session_id": "hello-1",
  "environment": "dev", "start_time": "'$NOW'", "end_time": "'$NOW'",
  "request": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi there"}]},
  "responses": [{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"},
    "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}]}'`;
  return (
    <section class="empty" aria-labelledby="first-trace">
      <h2 id="first-trace">Send your first trace</h2>
      {me && !me.services.length && (me.user.role === "viewer" || me.user.role === "member") ? (
        <p>
          You can see no service yet: services belong to projects, and an admin can add you to one. Or send a trace of
          your own:
        </p>
      ) : (
        <p>Nothing here yet. Point your app at the ingest endpoint, or try it with curl:</p>
      )}
      <pre class="code" tabIndex={0}>
        {curl}
      </pre>
      {me && (me.user.role === "admin" || me.user.role === "owner") && (
        <p>
          Or get a DSN with SDK, curl and OpenTelemetry snippets and wait for it live:{" "}
          <Link href="/first-trace">Send your first trace</Link>.
        </p>
      )}
      <p class="muted">
        The session shows up here once it has been idle for the maturation window (20 s in development, 3 min by
        default).
      </p>
    </section>
  );
}

const LAST_SERVICE = "cellar.dashboard.service";

/** The service every page reads, kept in the URL (`?service=`) so links and reloads keep it; the last one chosen is the default. */
export function useService(me: Me): [string | undefined, (name: string) => void] {
  const [params, setParams] = useSearchParams();
  const known = (name: string | null) => !!name && me.services.some((s) => s.name === name);
  const chosen = params.get("service");
  const remembered = localStorage.getItem(LAST_SERVICE);
  const service = known(chosen) ? chosen! : known(remembered) ? remembered! : me.services[0]?.name;
  const set = (name: string) =>
    setParams((p) => {
      localStorage.setItem(LAST_SERVICE, name);
      const next = withoutPosition(p);
      next.set("service", name);
      return next;
    });
  return [service, set];
}

export function ServicePicker({ me, value, onChange }: { me: Me; value?: string; onChange: (v: string) => void }) {
  return (
    <label class="field">
      <span>Service</span>
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {me.services.map((s) => (
          <option key={s.id} value={s.name}>
            {s.name} ({s.project})
          </option>
        ))}
      </select>
    </label>
  );
}

let initialPage = true;

/**
 * Moves focus to a page's heading when the app navigates to it, so keyboard and screen-reader
 * users land there. Not on the first page of a load: there focus starts at the top as usual,
 * where the skip link is.
 */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (initialPage) initialPage = false;
    else ref.current?.focus();
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** Runs a write, shows its error; returns the answer or undefined. */
export function useAction() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

export function ActionError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

/** Copies `value` to the clipboard and says whether it worked (http pages may not allow it). */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <>
      <button type="button" class="small" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span role="status" aria-live="polite" class="muted small">
        {state === "copied" ? " Copied." : state === "failed" ? " Copy failed: select the text and copy it." : ""}
      </span>
    </>
  );
}

/** A secret shown once (a key, a DSN, a signing secret, an invitation link) with a copy button. */
export function ShownOnce({
  label,
  value,
  testId,
  onDone,
  children,
}: {
  label: string;
  value: string;
  testId: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  return (
    <div class="secret" role="alert">
      <p>
        <strong>{label} — copy it now, it is not shown again:</strong>
      </p>
      <pre class="code" tabIndex={0} data-testid={testId}>
        {value}
      </pre>
      {children}
      <p class="actions">
        <CopyButton value={value} label={`Copy ${label.toLowerCase()}`} />
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
      </p>
    </div>
  );
}
