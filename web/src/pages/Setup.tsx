import { auth, session } from "../api";
import { Form } from "./SignIn";

/**
 * First run (docs/dashboard.md): shown while the deployment has no organization. The setup token
 * is in the platform's log ("first run: ..."); it works once.
 */
export function SetupPage({ onSignedIn }: { onSignedIn: () => void }) {
  const submit = async (form: FormData) => {
    if (form.get("password") !== form.get("confirm")) throw new Error("The two passwords differ.");
    const r = await auth<{ token: string }>("/setup", {
      body: {
        token: String(form.get("token") ?? "").trim(),
        organization: form.get("organization"),
        email: form.get("email"),
        password: form.get("password"),
      },
    });
    session.set(r.token);
    history.replaceState(null, "", "/first-trace");
    onSignedIn();
  };
  return (
    <Form
      title="Set up Cellar"
      submit={submit}
      label="Create organization and owner"
      busyLabel="Creating…"
      intro={
        <p class="muted">
          This deployment has no organization yet. The platform printed a one-time setup token in its log when it
          started (the line that says <code>first run</code>). Enter it to create your organization and its owner.
        </p>
      }
    >
      <label class="field">
        <span>Setup token</span>
        <input name="token" autocomplete="off" required autoFocus />
      </label>
      <label class="field">
        <span>Organization name</span>
        <input name="organization" required maxLength={200} />
      </label>
      <label class="field">
        <span>Your email</span>
        <input name="email" type="email" autocomplete="username" required />
      </label>
      <label class="field">
        <span>Password</span>
        <input name="password" type="password" autocomplete="new-password" minLength={12} required />
      </label>
      <label class="field">
        <span>Repeat it</span>
        <input name="confirm" type="password" autocomplete="new-password" minLength={12} required />
      </label>
    </Form>
  );
}
