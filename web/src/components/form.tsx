import type { ComponentChildren } from "preact";
import type { Me } from "../api";

/** A labelled form field: the label's text above its control (`.field`). */
export function Field({
  label,
  children,
  hint,
}: {
  label: ComponentChildren;
  children: ComponentChildren;
  hint?: string;
}) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the field's children, inside the label
    <label class="field">
      <span>{label}</span>
      {children}
      {hint && <small class="muted">{hint}</small>}
    </label>
  );
}

/** The services the user can see, as a select of their ids (forms that create per service). */
export function ServiceSelect({ me, name = "service", value }: { me: Me; name?: string; value?: string }) {
  return (
    <select name={name} required value={value}>
      {me.services.map((s) => (
        <option key={s.id} value={s.id}>
          {s.name}
        </option>
      ))}
    </select>
  );
}

/** The outcome of a write, announced: an error (alert) or a notice (status); nothing when null. */
export function Outcome({ error, notice }: { error?: string | null; notice?: string | null }) {
  return (
    <>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
    </>
  );
}

/** The options of a select from [value, text] pairs (a select's choices declared as a list). */
export function Options({ of }: { of: ReadonlyArray<readonly [string, string, ...unknown[]]> }) {
  return (
    <>
      {of.map(([value, text]) => (
        <option key={value} value={value}>
          {text}
        </option>
      ))}
    </>
  );
}
