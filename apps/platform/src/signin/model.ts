import { t } from "elysia";
import { PASSWORD_MAX_LENGTH } from "@cellar/shared/auth/passwords";

/**
 * Sign-in request bodies. The sign-in routes have no response schemas: they answer what the
 * sign-in service returns (web/src/api-types.ts types them from it).
 */

export const Credentials = t.Object(
  {
    email: t.String({ minLength: 1, maxLength: 320, error: "invalid email: must be a string of 1 to 320 characters" }),
    password: t.String({
      minLength: 1,
      maxLength: PASSWORD_MAX_LENGTH,
      error: `invalid password: must be a string of 1 to ${PASSWORD_MAX_LENGTH} characters`,
    }),
  },
  { additionalProperties: false, error: 'invalid body: must be {"email", "password"}' },
);
export const Acceptance = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 128, error: "invalid token: must be a string" }),
    password: t.String({
      maxLength: PASSWORD_MAX_LENGTH,
      error: `invalid password: must be a string of at most ${PASSWORD_MAX_LENGTH} characters`,
    }),
  },
  { additionalProperties: false, error: 'invalid body: must be {"token", "password"}' },
);
