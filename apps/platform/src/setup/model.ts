import { t } from "elysia";
import { PASSWORD_MAX_LENGTH } from "@cellar/shared/auth/passwords";

/** The first-run setup's request body. */

export const SetupBody = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 128, error: "invalid token: must be a string" }),
    organization: t.String({
      minLength: 1,
      maxLength: 200,
      pattern: "\\S",
      error: "invalid organization: must be 1 to 200 characters",
    }),
    email: t.String({ minLength: 3, maxLength: 320, error: "invalid email: must be an email address" }),
    password: t.String({
      maxLength: PASSWORD_MAX_LENGTH,
      error: `invalid password: must be a string of at most ${PASSWORD_MAX_LENGTH} characters`,
    }),
  },
  { additionalProperties: false, error: 'invalid body: must be {"token", "organization", "email", "password"}' },
);
