import { useState } from "preact/hooks";
import { ApiError, auth, session } from "../api";

export function Form({ title, intro, submit, children, busyLabel, label }: any) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await submit(new FormData(e.target as HTMLFormElement));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <form onSubmit={onSubmit} aria-labelledby="signin-title">
        <h1 id="signin-title">{title}</h1>
        {intro}
        {children}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? busyLabel : label}
        </button>
      </form>
    </main>
  );
}

export function SignInPage({ expired, onSignedIn }: { expired: boolean; onSignedIn: () => void }) {
  const submit = async (form: FormData) => {
    const r = await auth<{ token: string }>("/sign-in", {
      body: { email: form.get("email"), password: form.get("password") },
    });
    session.set(r.token);
    onSignedIn();
  };
  return (
    <Form
      title="Sign in to Cellar"
      submit={submit}
      label="Sign in"
      busyLabel="Signing in…"
      intro={
        expired && (
          <p class="notice" role="status">
            Your session has ended. Sign in again.
          </p>
        )
      }
    >
      <label class="field">
        <span>Email</span>
        <input name="email" type="email" autocomplete="username" required autoFocus />
      </label>
      <label class="field">
        <span>Password</span>
        <input name="password" type="password" autocomplete="current-password" required />
      </label>
    </Form>
  );
}

/** `/invite#<token>`: the token stays in the fragment, which browsers never send to a server. */
export function InvitePage({ onSignedIn }: { onSignedIn: () => void }) {
  const token = location.hash.slice(1);
  const submit = async (form: FormData) => {
    if (form.get("password") !== form.get("confirm")) throw new Error("The two passwords differ.");
    const r = await auth<{ token: string }>("/invitations/accept", { body: { token, password: form.get("password") } });
    session.set(r.token);
    history.replaceState(null, "", "/sessions");
    onSignedIn();
  };
  return (
    <Form
      title="Choose your password"
      submit={submit}
      label="Set password and sign in"
      busyLabel="Saving…"
      intro={<p class="muted">At least 12 characters. You will use it with your email to sign in.</p>}
    >
      <label class="field">
        <span>New password</span>
        <input name="password" type="password" autocomplete="new-password" minLength={12} required autoFocus />
      </label>
      <label class="field">
        <span>Repeat it</span>
        <input name="confirm" type="password" autocomplete="new-password" minLength={12} required />
      </label>
    </Form>
  );
}
