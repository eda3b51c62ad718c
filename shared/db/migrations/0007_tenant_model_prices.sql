-- Per-tenant model prices (docs/otlp.md, "Prices"): negotiated prices and custom models.
CREATE TABLE "tenant_model_prices" (
	"tenant_id" uuid NOT NULL,
	"model" text NOT NULL,
	"from_date" date NOT NULL,
	"provider" text NOT NULL,
	"input" double precision NOT NULL,
	"cached_input" double precision,
	"cache_write" double precision,
	"output" double precision NOT NULL,
	"context_window" integer,
	"source" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tenant_model_prices_tenant_id_model_from_date_pk" PRIMARY KEY("tenant_id","model","from_date")
);--> statement-breakpoint
ALTER TABLE "tenant_model_prices" ADD CONSTRAINT "tenant_model_prices_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;
