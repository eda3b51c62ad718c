import { useState } from "preact/hooks";
import { auth, type Me } from "../api";
import type { CreatedPlatformKey, PlatformKeys } from "../api-types";
import { buttonColumn, column, DataTable } from "../components/DataTable";
import { Outcome } from "../components/form";
import { Facts } from "../components/Facts";
import { PageShell } from "../components/PageShell";
import { LoadStatus, Panel } from "../components/Panel";
import { when } from "../format";
import { ShownOnce, useAction, useLoad } from "../ui";

export function SettingsPage({ me }: { me: Me }) {
  const keys = useLoad(() => auth<PlatformKeys>("/platform-keys"), []);
  const [created, setCreated] = useState<string | null>(null);
  const { error, run } = useAction();
  const create = () =>
    run(async () => {
      const r = await auth<CreatedPlatformKey>("/platform-keys", { method: "POST" });
      setCreated(r.key);
      keys.reload();
    });
  const revoke = (id: string, prefix: string) =>
    run(async () => {
      if (!confirm(`Revoke key ${prefix}…? Programs using it stop working.`)) return;
      await auth(`/platform-keys/${id}`, { method: "DELETE" });
      keys.reload();
    });
  const list = keys.data?.keys ?? [];
  return (
    <PageShell title="Settings">
      <Panel headingId="me-h" title="You">
        <Facts
          inline
          of={[
            ["Email", me.user.email],
            ["Role", me.user.role],
            ["Organization", me.tenant.name],
            ["Signed in until", when(me.expiresAt)],
          ]}
        />
      </Panel>
      <Panel headingId="keys-h" title="Platform API keys">
        <p class="muted">
          A key reads the API as you (<code>Authorization: Token &lt;key&gt;</code>), with your role and projects.
        </p>
        {created && <ShownOnce label="Your new key" value={created} testId="new-key" onDone={() => setCreated(null)} />}
        <Outcome error={error} />
        <LoadStatus load={keys} what="Loading keys" />
        {keys.data && (
          <DataTable
            compact
            rows={list}
            rowKey={(k) => k.id}
            empty="You have no platform keys."
            columns={[
              column("Key", (k: PlatformKeys["keys"][number]) => <code>{k.prefix}…</code>),
              column("Created", (k: PlatformKeys["keys"][number]) => when(k.createdAt)),
              buttonColumn<(typeof list)[number]>((k) => ({
                text: "Revoke",
                label: `Revoke key ${k.prefix}`,
                danger: true,
                onClick: () => revoke(k.id, k.prefix),
              })),
            ]}
          />
        )}
        <button type="button" onClick={create}>
          Create a platform key
        </button>
      </Panel>
    </PageShell>
  );
}
