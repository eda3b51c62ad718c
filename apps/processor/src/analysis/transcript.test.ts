import { expect, test } from "bun:test";
import { analyzeSession } from "./session.ts";
import { buildTranscript } from "./transcript.ts";
import { assistant, event, sys, toolResult, trace, user } from "../../../../test/fixtures/analysis-history.ts";

const view = (items: any[]) => items.map((i) => [i.type, i.type === "tool_call" ? i.toolName : i.content]);

test("multi-turn tool-calling conversation: each message once, tool calls and results in order", () => {
  const call = assistant(null, [{ id: "call_1", name: "get_weather", args: { city: "Paris" } }]);
  const t1 = trace({
    at: 0,
    messages: [sys("Be brief."), user("Weather in Paris?")],
    responses: [{ message: call, finish: "tool_calls" }],
  });
  const t2 = trace({
    at: 2,
    messages: [sys("Be brief."), user("Weather in Paris?"), call, toolResult("call_1", "18C sunny")],
    responses: [{ message: assistant("18C and sunny.") }],
  });
  const t3 = trace({
    at: 10,
    messages: [
      sys("Be brief."),
      user("Weather in Paris?"),
      call,
      toolResult("call_1", "18C sunny"),
      assistant("18C and sunny."),
      user("Thanks!"),
    ],
    responses: [{ message: assistant("You're welcome.") }],
  });
  const { items } = buildTranscript([t3, t1, t2], [event({ at: 5, name: "ui.click" })]);
  expect(view(items)).toEqual([
    ["system", "Be brief."],
    ["user", "Weather in Paris?"],
    ["tool_call", "get_weather"],
    ["tool_result", "18C sunny"],
    ["assistant", "18C and sunny."],
    ["event", { name: "ui.click", severityNumber: null, attributes: {}, body: null }],
    ["user", "Thanks!"],
    ["assistant", "You're welcome."],
  ]);
  const result = items.find((i) => i.type === "tool_result")!;
  expect(result.toolName).toBe("get_weather");
  expect(result.toolCallId).toBe("call_1");
  expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
});

test("2-response payload: the tool result from the next request sits between the call and the answer", () => {
  const call = assistant(null, [{ id: "call_9", name: "lookup_order", args: { id: 42 } }]);
  const t1 = trace({
    at: 0,
    durationMs: 2000,
    messages: [user("Where is order 42?")],
    responses: [{ message: call, finish: "tool_calls" }, { message: assistant("It ships tomorrow.") }],
  });
  const t2 = trace({
    at: 20,
    messages: [
      user("Where is order 42?"),
      call,
      toolResult("call_9", '{"eta":"tomorrow"}'),
      assistant("It ships tomorrow."),
      user("Great"),
    ],
    responses: [{ message: assistant("Anything else?") }],
  });
  const { items, impliedAnswered } = buildTranscript([t1, t2], []);
  expect(view(items)).toEqual([
    ["user", "Where is order 42?"],
    ["tool_call", "lookup_order"],
    ["tool_result", '{"eta":"tomorrow"}'],
    ["assistant", "It ships tomorrow."],
    ["user", "Great"],
    ["assistant", "Anything else?"],
  ]);
  expect(impliedAnswered.has("call_9")).toBe(true);
  // Items carry what the item endpoint shows: model, finish reason, span and its raw attributes.
  const answer = items.find((i) => i.content === "It ships tomorrow.")!;
  expect(answer).toMatchObject({ finishReason: "stop", model: "gpt-4o-mini-2024-07-18", traceId: t1.traceId });
  expect((answer.spanAttributes as any)["response.index"]).toBe(1);
  expect(Date.parse(answer.timestamp)).toBeGreaterThan(Date.parse(items[1].timestamp));
});

test("a history truncated by the app (sliding window) is not shown twice", () => {
  const t1 = trace({ at: 0, messages: [sys("S"), user("u1")], responses: [{ message: assistant("a1") }] });
  const t2 = trace({
    at: 1,
    messages: [sys("S"), user("u1"), assistant("a1"), user("u2")],
    responses: [{ message: assistant("a2") }],
  });
  // The app keeps the system prompt and only the last exchange.
  const t3 = trace({
    at: 2,
    messages: [sys("S"), user("u2"), assistant("a2"), user("u3")],
    responses: [{ message: assistant("a3") }],
  });
  const { items } = buildTranscript([t1, t2, t3], []);
  expect(view(items)).toEqual([
    ["system", "S"],
    ["user", "u1"],
    ["assistant", "a1"],
    ["user", "u2"],
    ["assistant", "a2"],
    ["user", "u3"],
    ["assistant", "a3"],
  ]);
  expect(items.some((i) => i.edited)).toBe(false);
});

test("an edited history shows the rewritten message once, flagged edited", () => {
  const t1 = trace({ at: 0, messages: [user("u1")], responses: [{ message: assistant("a1") }] });
  const t2 = trace({
    at: 1,
    messages: [user("u1"), assistant("a1"), user("typo qestion")],
    responses: [{ message: assistant("a2") }],
  });
  const t3 = trace({
    at: 2,
    messages: [user("u1"), assistant("a1"), user("fixed question")],
    responses: [{ message: assistant("a2b") }],
  });
  const { items } = buildTranscript([t1, t2, t3], []);
  expect(view(items)).toEqual([
    ["user", "u1"],
    ["assistant", "a1"],
    ["user", "typo qestion"],
    ["assistant", "a2"],
    ["user", "fixed question"],
    ["assistant", "a2b"],
  ]);
  expect(items.find((i) => i.content === "fixed question")!.edited).toBe(true);
  expect(items.find((i) => i.content === "typo qestion")!.edited).toBeUndefined();
});

test("item ids are stable across rebuilds and unaffected by later traces", () => {
  const t1 = trace({ at: 0, messages: [user("hi")], responses: [{ message: assistant("hello") }] });
  const t2 = trace({
    at: 5,
    messages: [user("hi"), assistant("hello"), user("bye")],
    responses: [{ message: assistant("ciao") }],
  });
  const before = buildTranscript([t1], []).items.map((i) => i.id);
  const after = buildTranscript([t1, t2], []).items.map((i) => i.id);
  expect(after.slice(0, 2)).toEqual(before);
  expect(buildTranscript([t1, t2], []).items.map((i) => i.id)).toEqual(after);
});

test("reasoning and refusal are kept on the assistant item", () => {
  const t1 = trace({
    at: 0,
    messages: [user("q")],
    responses: [{ message: { role: "assistant", content: "a", reasoning_content: "thought about it", refusal: null } }],
  });
  const [, answer] = buildTranscript([t1], []).items;
  expect(answer).toMatchObject({ type: "assistant", reasoning: "thought about it", refusal: null });
});

const full = (items: any[]) =>
  items.map((i) => [i.id, i.type, i.type === "tool_call" ? `${i.toolName}(${i.content})` : i.content, i.timestamp]);

test("a tool call id is one item: both 2-response conventions give the same transcript", () => {
  const call = assistant(null, [{ id: "call_7", name: "lookup", args: { id: 7 } }]);
  const common = { at: 0, durationMs: 2000, id: "tr-conv" };
  // (a) request of the first call; the result shows up in the next turn's request.
  const a1 = trace({
    ...common,
    messages: [user("Order 7?")],
    responses: [{ message: call, finish: "tool_calls" }, { message: assistant("Shipped.") }],
  });
  // (b) request of the second call: it already carries the call and its result.
  const b1 = trace({
    ...common,
    messages: [user("Order 7?"), call, toolResult("call_7", "shipped")],
    responses: [{ message: call, finish: "tool_calls" }, { message: assistant("Shipped.") }],
  });
  const next = (id: string) =>
    trace({
      at: 30,
      id,
      messages: [user("Order 7?"), call, toolResult("call_7", "shipped"), assistant("Shipped."), user("Thanks")],
      responses: [{ message: assistant("Bye") }],
    });
  const a = buildTranscript([a1, next("tr-next")], []).items;
  const b = buildTranscript([b1, next("tr-next")], []).items;
  expect(view(a)).toEqual([
    ["user", "Order 7?"],
    ["tool_call", "lookup"],
    ["tool_result", "shipped"],
    ["assistant", "Shipped."],
    ["user", "Thanks"],
    ["assistant", "Bye"],
  ]);
  expect(full(b)).toEqual(full(a));
  expect(b.filter((i) => i.type === "tool_call")).toHaveLength(1);
  // The result carried ahead of its call is still named after it.
  expect(b.find((i) => i.type === "tool_result")!.toolName).toBe("lookup");
  expect(a.find((i) => i.type === "tool_result")!.toolName).toBe("lookup");
});

test("parallel tool calls keep conversation order: call, call, result, result", () => {
  const call = assistant(null, [
    { id: "p1", name: "weather", args: { city: "Oslo" } },
    { id: "p2", name: "weather", args: { city: "Rome" } },
  ]);
  const t1 = trace({ at: 0, messages: [user("Oslo and Rome?")], responses: [{ message: call, finish: "tool_calls" }] });
  const t2 = trace({
    at: 3,
    messages: [user("Oslo and Rome?"), call, toolResult("p1", "-2C"), toolResult("p2", "18C")],
    responses: [{ message: assistant("Cold and warm.") }],
  });
  expect(view(buildTranscript([t1, t2], []).items)).toEqual([
    ["user", "Oslo and Rome?"],
    ["tool_call", "weather"],
    ["tool_call", "weather"],
    ["tool_result", "-2C"],
    ["tool_result", "18C"],
    ["assistant", "Cold and warm."],
  ]);
});

test("each message is timed by when it was first seen: an event during the tool run lands before the result", () => {
  const call = assistant(null, [{ id: "r1", name: "fetch", args: {} }]);
  const t1 = trace({
    at: 0,
    durationMs: 1000,
    messages: [user("go")],
    responses: [{ message: call, finish: "tool_calls" }],
  });
  const t2 = trace({
    at: 10,
    messages: [user("go"), call, toolResult("r1", "ok")],
    responses: [{ message: assistant("done") }],
  });
  const items = buildTranscript([t1, t2], [event({ at: 5, name: "tool.retry" })]).items;
  expect(items.map((i) => i.type)).toEqual(["user", "tool_call", "event", "tool_result", "assistant"]);
  expect(items[3].timestamp).toBe(t2.startTime.toISOString());
});

test("caps: items past the count cap are dropped and the transcript says truncated", () => {
  const traces = Array.from({ length: 10 }, (_, i) =>
    trace({ at: i, messages: [user(`u${i}`)], responses: [{ message: assistant(`a${i}`) }] }),
  );
  const r = buildTranscript(traces, [], { maxItems: 5, maxBytes: 1e9 });
  expect(r.items).toHaveLength(5);
  expect(r.truncated).toBe(true);
  expect(r.dropped).toBe(15);
});

test("a client that reuses a tool call id each turn: both calls and both results are shown", () => {
  const c1 = assistant(null, [{ id: "call_0", name: "search", args: { q: "cats" } }]);
  const c2 = assistant(null, [{ id: "call_0", name: "search", args: { q: "dogs" } }]);
  const h1 = [user("cats?"), c1, toolResult("call_0", "3 cats")];
  const t1 = trace({ at: 0, messages: [user("cats?")], responses: [{ message: c1, finish: "tool_calls" }] });
  const t2 = trace({ at: 2, messages: h1, responses: [{ message: assistant("Three cats.") }] });
  const t3 = trace({
    at: 4,
    messages: [...h1, assistant("Three cats."), user("dogs?")],
    responses: [{ message: c2, finish: "tool_calls" }],
  });
  const t4 = trace({
    at: 6,
    messages: [...h1, assistant("Three cats."), user("dogs?"), c2, toolResult("call_0", "2 dogs")],
    responses: [{ message: assistant("Two dogs.") }],
  });
  const { items } = buildTranscript([t1, t2, t3, t4], []);
  expect(view(items)).toEqual([
    ["user", "cats?"],
    ["tool_call", "search"],
    ["tool_result", "3 cats"],
    ["assistant", "Three cats."],
    ["user", "dogs?"],
    ["tool_call", "search"],
    ["tool_result", "2 dogs"],
    ["assistant", "Two dogs."],
  ]);
  expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
});

test("sequential calls whose starts share a clock tick are read in call order, whatever their trace ids", () => {
  // An SDK stamps milliseconds: Q1's answer (t2) took under one and Q2's first call (t3) started
  // in the same one. t3's trace id sorts first; its end (t2 ended before t3 started) orders them.
  const paris = assistant(null, [{ id: "call_1", name: "get_weather", args: { city: "Paris" } }]);
  const rome = assistant(null, [{ id: "call_2", name: "get_weather", args: { city: "Rome" } }]);
  const q1 = [sys("Be brief."), user("Weather in Paris?"), paris, toolResult("call_1", "18C sunny")];
  const q2 = [...q1, assistant("Sunny in Paris."), user("And Rome?")];
  const traces = [
    trace({ id: "tr-d", at: 0, messages: q1.slice(0, 2), responses: [{ message: paris, finish: "tool_calls" }] }),
    trace({ id: "tr-c", at: 2, durationMs: 0, messages: q1, responses: [{ message: assistant("Sunny in Paris.") }] }),
    trace({ id: "tr-b", at: 2, durationMs: 3, messages: q2, responses: [{ message: rome, finish: "tool_calls" }] }),
    trace({
      id: "tr-a",
      at: 3,
      messages: [...q2, rome, toolResult("call_2", "24C clear")],
      responses: [{ message: assistant("Clear in Rome.") }],
    }),
  ];
  const expected = [
    ["system", "Be brief."],
    ["user", "Weather in Paris?"],
    ["tool_call", "get_weather"],
    ["tool_result", "18C sunny"],
    ["assistant", "Sunny in Paris."],
    ["user", "And Rome?"],
    ["tool_call", "get_weather"],
    ["tool_result", "24C clear"],
    ["assistant", "Clear in Rome."],
  ];
  expect(view(buildTranscript([...traces].reverse(), []).items)).toEqual(expected);
  // The maturation's feed (session.ts) orders them the same way.
  expect(view(analyzeSession(traces, []).items)).toEqual(expected);
});
