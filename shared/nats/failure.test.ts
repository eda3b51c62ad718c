import { expect, test } from "bun:test";
import { errors } from "@nats-io/transport-node";
import { jserrors } from "@nats-io/jetstream/internal";
import { classifyFailure, describeFailure, PermanentMessageError } from "./failure.ts";

const pg = (code: string, message = "x") => Object.assign(new Error(message), { name: "PostgresError", code });

test("Postgres data errors are permanent, except the conflicts a concurrent writer causes", () => {
  expect(classifyFailure(pg("22009", "time zone displacement out of range"))).toBe("permanent");
  expect(classifyFailure(pg("22P05", "unsupported Unicode escape sequence"))).toBe("permanent");
  expect(classifyFailure(pg("22003"))).toBe("permanent"); // integer out of range
  expect(classifyFailure(pg("23502"))).toBe("permanent"); // not null
  expect(classifyFailure(pg("23503"))).toBe("permanent"); // foreign key
  expect(classifyFailure(pg("23505"))).toBe("retry"); // unique: a concurrent creator
  expect(classifyFailure(pg("40P01"))).toBe("retry"); // deadlock
  expect(classifyFailure(pg("40001"))).toBe("retry"); // serialization
  expect(classifyFailure(new PermanentMessageError("no"))).toBe("permanent");
});

test("Postgres or NATS unavailable is transient", () => {
  expect(classifyFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe("transient");
  expect(classifyFailure(Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" }))).toBe(
    "transient",
  );
  expect(classifyFailure(pg("57P01", "terminating connection due to administrator command"))).toBe("transient");
  expect(classifyFailure(pg("57P03", "the database system is starting up"))).toBe("transient");
  expect(classifyFailure(pg("53300", "too many connections"))).toBe("transient");
  expect(classifyFailure(pg("08006"))).toBe("transient");
  expect(classifyFailure(new errors.TimeoutError())).toBe("transient");
  expect(classifyFailure(new errors.ClosedConnectionError())).toBe("transient");
  expect(classifyFailure(new errors.NoRespondersError("$JS.API.STREAM.INFO"))).toBe("transient");
  expect(classifyFailure(new jserrors.JetStreamNotEnabled("jetstream is not enabled"))).toBe("transient");
});

test("anything else is retried, then dead-lettered", () => {
  expect(classifyFailure(new TypeError("cannot read properties of undefined"))).toBe("retry");
  expect(classifyFailure(pg("57014", "canceling statement due to statement timeout"))).toBe("retry");
  expect(classifyFailure("a string")).toBe("retry");
});

test("describeFailure puts the SQLSTATE first and keeps one bounded line", () => {
  expect(describeFailure(pg("22009", "time zone displacement\nout of range"))).toBe(
    "22009 time zone displacement out of range",
  );
  expect(describeFailure(new Error("x".repeat(5000))).length).toBe(1000);
});
