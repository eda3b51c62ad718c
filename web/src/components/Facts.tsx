import type { ComponentChildren } from "preact";

/** One named value of a Facts list: its name, its value. */
export type Fact = readonly [name: string, value: ComponentChildren];

/**
 * A short list of named values (`dl.metrics`): the facts of a trace, an issue, an organization.
 * `inline` sets them in a row under a page's title; without it they stack in a panel.
 */
export function Facts({ of, inline, label }: { of: readonly Fact[]; inline?: boolean; label?: string }) {
  return (
    <dl class={inline ? "metrics inline" : "metrics"} aria-label={label}>
      {of.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
