import { auth } from "../api";
import { Field } from "../components/form";
import { Form, NewPassword, samePasswords, signedIn } from "./SignIn";

/**
 * First run (docs/dashboard.md): shown while the deployment has no organization. The setup token
 * is in the platform's log ("first run: ..."); it works once.
 */
export function SetupPage({ onSignedIn }: { onSignedIn: () => void }) {
  const submit = async (form: FormData) => {
    samePasswords(form);
    const r = await auth<{ token: string }>("/setup", {
      body: {
        token: String(form.get("token") ?? "").trim(),
        organization: form.get("organization"),
        email: form.get("email"),
        password: form.get("password"),
      },
    });
    signedIn(r.token, onSignedIn, "/first-trace");
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
      <Field label="Setup token">
        <input name="token" autocomplete="off" required autoFocus />
      </Field>
      <Field label="Organization name">
        <input name="organization" required maxLength={200} />
      </Field>
      <Field label="Your email">
        <input name="email" type="email" autocomplete="username" required />
      </Field>
      <NewPassword />
    </Form>
  );
}
