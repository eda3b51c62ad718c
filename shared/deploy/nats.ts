import type { ConnectionOptions, NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connectNats, type NatsHandles, type Topology } from "../nats/topology.ts";

/** The config fields this module reads (a subset of Config, so tests can pass plain objects). */
export interface NatsClientSettings {
  NATS_URL: string;
  NATS_USER: string;
  NATS_PASSWORD: string;
  NATS_TLS_CA_FILE: string;
  NATS_TLS_CERT_FILE: string;
  NATS_TLS_KEY_FILE: string;
}

/**
 * Credentials, TLS and the reply-inbox prefix for one app's connection. Each user's inbox is
 * `_INBOX.<user>` (deploy/nats/users.conf lets a user subscribe to its own inboxes only), so one
 * app cannot read another's PubAcks or pull batches.
 */
export function natsClientOptions(s: NatsClientSettings): Partial<ConnectionOptions> {
  const opts: Partial<ConnectionOptions> = {};
  if (s.NATS_USER) {
    opts.user = s.NATS_USER;
    opts.pass = s.NATS_PASSWORD;
    opts.inboxPrefix = `_INBOX.${s.NATS_USER}`;
  }
  if (s.NATS_TLS_CA_FILE || s.NATS_TLS_CERT_FILE) {
    opts.tls = {
      ...(s.NATS_TLS_CA_FILE ? { caFile: s.NATS_TLS_CA_FILE } : {}),
      ...(s.NATS_TLS_CERT_FILE ? { certFile: s.NATS_TLS_CERT_FILE, keyFile: s.NATS_TLS_KEY_FILE } : {}),
    };
  }
  return opts;
}

/**
 * Credentials and TLS from the environment for tools outside the apps' config (admin CLI): the
 * operator runs them as the `admin` NATS user (NATS_USER=admin NATS_PASSWORD=...).
 */
export function natsSettingsFromEnv(
  url: string,
  env: Record<string, string | undefined> = process.env,
): NatsClientSettings {
  return {
    NATS_URL: url,
    NATS_USER: env.NATS_USER ?? "",
    NATS_PASSWORD: env.NATS_PASSWORD ?? "",
    NATS_TLS_CA_FILE: env.NATS_TLS_CA_FILE ?? "",
    NATS_TLS_CERT_FILE: env.NATS_TLS_CERT_FILE ?? "",
    NATS_TLS_KEY_FILE: env.NATS_TLS_KEY_FILE ?? "",
  };
}

/** Thrown when NATS refuses this app's connection or a permission it needs: stops the app. */
export class NatsAccessError extends Error {
  override name = "NatsAccessError";
}

/**
 * Connects with the app's credentials; an authentication or TLS failure becomes one line that
 * says which user was refused and which variables to check (no reconnect loop on bad auth).
 */
export async function connectNatsAs(
  s: NatsClientSettings,
  name: string,
  extra: Partial<ConnectionOptions> = {},
): Promise<NatsConnection> {
  try {
    return await connectNats(s.NATS_URL, name, { ...natsClientOptions(s), ...extra });
  } catch (err) {
    throw new NatsAccessError(describeConnectError(err, s));
  }
}

export function describeConnectError(err: unknown, s: NatsClientSettings): string {
  const text = String((err as Error)?.message ?? err);
  const who = s.NATS_USER ? `user "${s.NATS_USER}"` : "a connection without credentials";
  if (/authori[sz]ation|authentication/i.test(text)) {
    return `NATS at ${s.NATS_URL} refused ${who} (${text}): check NATS_USER and NATS_PASSWORD against the server's users (deploy/nats/users.conf)`;
  }
  if (/tls|certificate|secure|ssl/i.test(text)) {
    return `TLS to NATS at ${s.NATS_URL} failed (${text}): check NATS_TLS_CA_FILE${s.NATS_TLS_CERT_FILE ? ", NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE" : ""} and the server's tls block (deploy/nats/nats-tls.conf)`;
  }
  return `cannot connect to NATS at ${s.NATS_URL} as ${who}: ${text}`;
}

/**
 * Handles onto streams and consumers that the setup step already created, without creating or
 * changing anything (a least-privilege user may not). Makes no request: the app's own probes
 * (shared/ops/probes.ts) check that what it needs exists and is allowed.
 */
export async function bindTopology(nc: NatsConnection, topology: Topology): Promise<NatsHandles> {
  const js = jetstream(nc, { checkAPI: false });
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const kv = await new Kvm(js).open(topology.activityBucket);
  return { nc, js, jsm, kv, topology };
}

/** A JetStream API call refused for lack of permission, as nats.js reports it. */
export function isPermissionError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; cause?: { name?: string; message?: string } };
  return [e?.name, e?.message, e?.cause?.name, e?.cause?.message].some(
    (t) => typeof t === "string" && /permission/i.test(t),
  );
}
