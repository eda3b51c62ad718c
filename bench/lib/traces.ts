/** Realistic chat trace bodies shared by the benches (`__SESSION__` is replaced per request). */
const TOOL_RESULT = JSON.stringify({
  orders: [
    {
      id: "A-1042",
      status: "shipped",
      carrier: "DHL",
      eta: "2025-03-04",
      items: [{ sku: "KB-201", qty: 1, price: 89.9 }],
    },
  ],
});

/** Realistic chat traces of 2-6 KB: system prompt, a few turns, tools, sometimes a tool round trip. */
export function makeTemplates(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const turns = 1 + (i % 11);
    const messages: Array<Record<string, unknown>> = [
      {
        role: "system",
        content:
          "You are Cellar Support, a friendly assistant for an online keyboard shop. Answer briefly, cite order ids, never invent tracking numbers. ".repeat(
            2,
          ),
      },
    ];
    for (let t = 0; t < turns; t++) {
      messages.push({
        role: "user",
        content: `Turn ${t}: where is my order? I ordered a mechanical keyboard last week and the page still says processing. Order number A-10${40 + t}.`,
      });
      messages.push({
        role: "assistant",
        content: `Let me check order A-10${40 + t} for you. It left our warehouse and is on its way; the carrier expects delivery within two business days.`,
      });
    }
    const withTool = i % 3 === 0;
    if (withTool) {
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [
          { id: `call_${i}`, type: "function", function: { name: "lookup_order", arguments: '{"order_id":"A-1042"}' } },
        ],
      });
      messages.push({ role: "tool", tool_call_id: `call_${i}`, content: TOOL_RESULT });
    }
    const start = new Date(Date.UTC(2025, 2, 1, 10, 0, i % 60));
    const trace = {
      provider: "openai",
      service_name: "support-bot",
      session_id: "__SESSION__",
      environment: "bench",
      start_time: start.toISOString(),
      end_time: new Date(start.getTime() + 900 + (i % 7) * 100).toISOString(),
      request: {
        model: "gpt-4o-mini",
        temperature: 0.2,
        messages,
        tools: [
          {
            type: "function",
            function: {
              name: "lookup_order",
              description: "Find an order by id",
              parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
            },
          },
        ],
      },
      responses: [
        {
          id: `chatcmpl-bench${i}`,
          object: "chat.completion",
          created: Math.floor(start.getTime() / 1000),
          model: "gpt-4o-mini-2024-07-18",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content:
                  "Your order A-1042 shipped with DHL and should arrive on March 4th. Anything else I can help with?",
                refusal: null,
              },
              finish_reason: "stop",
            },
          ],
          usage: {
            prompt_tokens: 400 + turns * 90,
            completion_tokens: 38,
            total_tokens: 438 + turns * 90,
            prompt_tokens_details: { cached_tokens: 256 },
            completion_tokens_details: { reasoning_tokens: 0 },
          },
        },
      ],
    };
    const text = JSON.stringify(trace);
    if (text.length >= 2_000 && text.length <= 6_000) out.push(text);
  }
  return out;
}
