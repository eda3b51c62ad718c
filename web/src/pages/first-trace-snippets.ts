/**
 * The "Send your first trace" page's snippets, with the DSN filled in: commands that work today
 * (the SDKs are not published yet: docs/sdks.md, Package names). test/sdk-packages.test.ts runs
 * the TypeScript and Python snippets against the installed packages.
 */
export function snippets(dsn: string, service: string, endpoint: string) {
  const typescript = `// cellar-sdk is not on the npm registry yet: build it in a checkout of Cellar
// (npm ci && npm run release), then in your app:
//   npm install /path/to/cellar/dist/release/cellar-sdk-*.tgz openai
import OpenAI from "openai";
import { Cellar } from "cellar-sdk";
import { observeOpenAI } from "cellar-sdk/openai";

const cellar = new Cellar({ dsn: "${dsn}" });
const openai = observeOpenAI(new OpenAI(), cellar, { sessionId: "hello-1" });
await openai.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Hi there" }],
});
await cellar.flush();`;
  const python = `# cellar-sdk is not on the Python index yet: install it from a checkout of Cellar
#   pip install /path/to/cellar/sdks/python openai
import cellar_sdk as cellar
from openai import OpenAI

cellar.init("${dsn}")
client = cellar.wrap_openai(OpenAI())
with cellar.session("hello-1"):
    client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Hi there"}],
    )
cellar.flush()`;
  const now = "$(date -u +%Y-%m-%dT%H:%M:%SZ)";
  const curl = `NOW=${now}
curl -s -X POST ${endpoint}/raw/traces \\
  -H "Authorization: Bearer ${dsn}" \\
  -H 'Content-Type: application/json' -d '{
  "provider": "openai", "service_name": "${service}", "session_id": "hello-1",
  "environment": "dev", "start_time": "'$NOW'", "end_time": "'$NOW'",
  "request": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi there"}]},
  "responses": [{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}]}'`;
  const otlp = `# OpenTelemetry (GenAI semantic conventions; docs/otlp.md)
OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}
OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer ${dsn}"
OTEL_SERVICE_NAME=${service}`;
  return { typescript, python, curl, otlp };
}
