import { badRequest } from "@cellar/shared/errors";
import { JsonPieceError, type SplitJson, splitJsonInSteps } from "@cellar/shared/json-steps";
import { nextTurn, runInTurns } from "@cellar/shared/steps";
import { parseJsonObject } from "./body.ts";
import { ITEMS_PER_TURN } from "./publish.ts";

/**
 * A /raw/batch body parsed in slices (issue 41, flood fairness): JSON.parse of an admitted 2.2 MB
 * body is one piece of 10-19 ms on a loaded machine, and every other tenant's request waits
 * behind it. shared/json-steps.ts finds the `items` array's elements in one scan and parses each
 * on its own, ITEMS_PER_TURN items a turn, then the envelope with that array left empty.
 *
 * Same value and same errors as parseJsonObject(text): a text the scan cannot vouch for (not an
 * object, `items` twice or not an array) is parsed in one piece by parseJsonObject, so its answer
 * is the old one; a piece that does not parse means the text is not valid JSON, the old answer
 * too. Checked against the old code on generated bodies (batch-body.test.ts).
 */
export interface BatchJson {
  object: Record<string, unknown>;
  /** Object keys in the text (what body.ts's countKeyTokens counts), or null when not counted. */
  keyTokens: number | null;
}

export async function parseBatchJson(text: string, yieldTurn: () => Promise<void> = nextTurn): Promise<BatchJson> {
  let split: SplitJson | null;
  try {
    split = await runInTurns(splitJsonInSteps(text, BATCH_PATH), ITEMS_PER_TURN, yieldTurn);
  } catch (err) {
    if (err instanceof JsonPieceError) throw badRequest("body is not valid JSON");
    throw err;
  }
  return split
    ? { object: split.value, keyTokens: split.keyTokens }
    : { object: parseJsonObject(text), keyTokens: null };
}

/** Where a batch's items are: its `items` array. */
export const BATCH_PATH = ["items"];
