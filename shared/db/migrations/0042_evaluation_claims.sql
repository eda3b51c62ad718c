-- One judge call per judgement (docs/evaluations.md "One judge call per judgement"): two
-- dispatcher processes judging two copies of a maturation (a republish in another batch) each
-- called the model; the evaluation was recorded once, but the provider billed both calls. A
-- claim keyed as the evaluation is taken before the call, and marked judged ('infinity') in the
-- record's transaction. Keys end with tenant_id (docs/scaling.md); the evaluator's deletion
-- cascades.
CREATE TABLE "evaluation_claims" (
	"evaluator_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"evaluator_version" integer NOT NULL,
	"target" text NOT NULL,
	"entity_id" text NOT NULL,
	"transcript_hash" text NOT NULL,
	"claimed_until" timestamp with time zone NOT NULL,
	"claimed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "evaluation_claims_pkey" PRIMARY KEY("evaluator_id","evaluator_version","target","entity_id","transcript_hash","tenant_id"),
	CONSTRAINT "evaluation_claims_evaluator_fkey" FOREIGN KEY ("evaluator_id","tenant_id") REFERENCES "public"."evaluators"("id","tenant_id") ON DELETE cascade ON UPDATE no action
);
