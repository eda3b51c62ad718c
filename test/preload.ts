// `bun test` run directly (without `npm test`) still gets real servers: start them here.
import { ensureTestInfra } from "./helpers/infra";
await ensureTestInfra();
