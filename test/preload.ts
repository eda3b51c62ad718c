import { setDefaultTimeout } from "bun:test";
// `bun test` run directly (without `npm test`) still gets real servers: start them here.
import { ensureTestInfra } from "./helpers/infra";

// bunfig's `timeout` covers tests but not hooks, which stay at 5 s: a beforeAll that starts a
// stack took longer on a loaded machine and failed its file. One bound for both.
setDefaultTimeout(60_000);
await ensureTestInfra();
