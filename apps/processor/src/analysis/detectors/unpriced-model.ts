import type { DetectorFactory } from "../detector-hooks.ts";
import { UnpricedModels } from "../unpriced.ts";

/** `unpriced_model`: a call the price book cannot price, once per model per session. */
export const create: DetectorFactory<"unpriced_model"> = () => {
  const unpriced = new UnpricedModels();
  return { call: (c) => unpriced.call(c) };
};
