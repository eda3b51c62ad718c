import { toBase64, randomBytes } from "@cellar/shared/crypto";
import { connectNatsAs } from "@cellar/shared/deploy/nats";
import { createTopology, ensureTopology } from "@cellar/shared/nats/topology";

export const NATS_USERS = ["admin", "ingest", "processor", "dispatcher", "platform"] as const;

/**
 * Passwords for the deployed config's users (deploy/nats/users.conf), generated once and kept
 * in dev's state file: the server's environment and each app's NATS_USER / NATS_PASSWORD.
 */
export function devNatsUsers(state: { natsPasswords?: Record<string, string> }) {
  state.natsPasswords ??= Object.fromEntries(
    NATS_USERS.map((u) => [u, toBase64(randomBytes(18)).replace(/[+/=]/g, "x")]),
  );
  const passwords = state.natsPasswords;
  return {
    serverEnv: Object.fromEntries(NATS_USERS.map((u) => [`NATS_${u.toUpperCase()}_PASSWORD`, passwords[u]])),
    appEnv: (user: string) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] }),
  };
}

/** Streams, consumers and the activity bucket, created as `admin` (apps may not create them). */
export async function setUpNatsAsAdmin(
  url: string,
  creds: { NATS_USER: string; NATS_PASSWORD: string },
  replicas = 1,
): Promise<void> {
  const nc = await connectNatsAs(
    { NATS_URL: url, ...creds, NATS_TLS_CA_FILE: "", NATS_TLS_CERT_FILE: "", NATS_TLS_KEY_FILE: "" },
    "cellar-dev-setup",
  );
  try {
    await ensureTopology(nc, createTopology(), { replicas });
  } finally {
    await nc.drain();
  }
}
