/** A chat message as the corpus writes it (OpenAI chat shape); shared by the raw and OTLP writers. */
export type Msg = {
  role: string;
  content: unknown;
  tool_calls?: any[];
  tool_call_id?: string;
  name?: string;
  refusal?: string | null;
  reasoning_content?: string;
};
