import type { ComponentChildren } from "preact";
import { auth, session } from "../api";
import { Field, Outcome } from "../components/form";
import { useAction } from "../ui";

/** A sign-in page's form: its title, intro and fields, the submit's error, and a button busy while it runs. */
export function Form({
  title,
  intro,
  submit,
  children,
  busyLabel,
  label,
}: {
  title: string;
  intro?: ComponentChildren;
  submit: (form: FormData) => Promise<void>;
  children: ComponentChildren;
  busyLabel: string;
  label: string;
}) {
  const action = useAction();
  const onSubmit = (e: Event) => {
    e.preventDefault();
    action.run(() => submit(new FormData(e.target as HTMLFormElement)));
  };
  return (
    <main id="main" class="signin">
      <form onSubmit={onSubmit} aria-labelledby="signin-title">
        <h1 id="signin-title">{title}</h1>
        {intro}
        {children}
        <Outcome error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? busyLabel : label}
        </button>
      </form>
    </main>
  );
}

/** A new password and its repetition; `samePasswords` checks them before they are sent. */
export function NewPassword({ label = "Password", autoFocus }: { label?: string; autoFocus?: boolean }) {
  return (
    <>
      <Field label={label}>
        <input
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          autoFocus={autoFocus}
        />
      </Field>
      <Field label="Repeat it">
        <input name="confirm" type="password" autocomplete="new-password" minLength={12} required />
      </Field>
    </>
  );
}

export function samePasswords(form: FormData) {
  if (form.get("password") !== form.get("confirm")) throw new Error("The two passwords differ.");
}

/** Signed in: the session's token kept, and the address replaced by where the user goes next. */
export function signedIn(token: string, onSignedIn: () => void, next?: string) {
  session.set(token);
  if (next) history.replaceState(null, "", next);
  onSignedIn();
}

export function SignInPage({ expired, onSignedIn }: { expired: boolean; onSignedIn: () => void }) {
  const submit = async (form: FormData) => {
    const r = await auth<{ token: string }>("/sign-in", {
      body: { email: form.get("email"), password: form.get("password") },
    });
    signedIn(r.token, onSignedIn);
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
      <Field label="Email">
        <input name="email" type="email" autocomplete="username" required autoFocus />
      </Field>
      <Field label="Password">
        <input name="password" type="password" autocomplete="current-password" required />
      </Field>
    </Form>
  );
}

/** `/invite#<token>`: the token stays in the fragment, which browsers never send to a server. */
export function InvitePage({ onSignedIn }: { onSignedIn: () => void }) {
  const token = location.hash.slice(1);
  const submit = async (form: FormData) => {
    samePasswords(form);
    const r = await auth<{ token: string }>("/invitations/accept", { body: { token, password: form.get("password") } });
    signedIn(r.token, onSignedIn, "/sessions");
  };
  return (
    <Form
      title="Choose your password"
      submit={submit}
      label="Set password and sign in"
      busyLabel="Saving…"
      intro={<p class="muted">At least 12 characters. You will use it with your email to sign in.</p>}
    >
      <NewPassword label="New password" autoFocus />
    </Form>
  );
}
