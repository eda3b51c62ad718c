import { Webhook } from "standardwebhooks";
import { randomBytes, toBase64 } from "../crypto.ts";

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks / Svix secret format). */
export function generateWebhookSecret(): string {
  return `whsec_${toBase64(randomBytes(32))}`;
}

/**
 * The `webhook-signature` header: one `v1,<base64>` per secret, space-joined (contract:
 * Delivery rules 2). Signed over the exact body bytes that are sent.
 */
export function signatureHeader(secrets: string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(" ");
}

/** The three Standard Webhooks headers plus the content type. */
export function deliveryHeaders(secrets: string[], id: string, at: Date, body: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "Cellar-Webhooks/1",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatureHeader(secrets, id, at, body),
  };
}
