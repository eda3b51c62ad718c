/**
 * The API's answers as the dashboard reads them: types only, taken from the platform's own
 * TypeBox response schemas (the ones that document and validate each route), so a changed
 * answer breaks the dashboard's typecheck instead of its pages. Nothing here reaches the bundle.
 */
import type { Static } from "@sinclair/typebox";
import type { ProblemAnalysis as ProblemAnalysisSchema } from "../../apps/platform/src/sessions/model.ts";
import type { SignInService } from "../../apps/platform/src/signin/service.ts";
import type {
  IssueBreakdown as IssueBreakdownSchema,
  IssuesPage as IssuesPageSchema,
} from "../../apps/platform/src/analysis/model.ts";
import type {
  AttemptList,
  RotatedSubscription as RotatedSubscriptionSchema,
  Subscription as SubscriptionSchema,
  SubscriptionList,
  SubscriptionWithSecret,
} from "../../apps/platform/src/webhooks/model.ts";

export type Subscription = Static<typeof SubscriptionSchema>;
export type Subscriptions = Static<typeof SubscriptionList>;
export type CreatedSubscription = Static<typeof SubscriptionWithSecret>;
export type RotatedSubscription = Static<typeof RotatedSubscriptionSchema>;
export type Attempts = Static<typeof AttemptList>;
export type Attempt = Attempts["data"][number];
export type IssuesPage = Static<typeof IssuesPageSchema>;
export type IssueBreakdown = Static<typeof IssueBreakdownSchema>;
export type ProblemAnalysis = Static<typeof ProblemAnalysisSchema>;
/** The sign-in routes answer what the sign-in service returns (they have no response schema). */
export type PlatformKeys = Awaited<ReturnType<SignInService["listPlatformKeys"]>>;
export type CreatedPlatformKey = Awaited<ReturnType<SignInService["createPlatformKey"]>>;
