import protobuf from "protobufjs";

/**
 * The google.rpc messages a gRPC failure carries (OTLP/gRPC, "Failures"): Status + RetryInfo for
 * the `grpc-status-details-bin` trailer that tells an exporter when a refusal may be retried.
 * Small messages, written and read with protobufjs's Writer/Reader by field number, as
 * shared/otlp/decode.ts writes Status.
 */

const RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo";

/**
 * `grpc-status-details-bin`: the Status again with one google.rpc.RetryInfo detail
 * (`retry_delay` = Duration{seconds}). OTLP/gRPC: RESOURCE_EXHAUSTED is retryable only when the
 * server sends RetryInfo, and an exporter waits the delay it names.
 */
export function statusWithRetryInfo(code: number, message: string, retryAfterSeconds: number): Uint8Array {
  const duration = protobuf.Writer.create()
    .uint32(8)
    .int64(Math.max(0, Math.ceil(retryAfterSeconds)))
    .finish();
  const retryInfo = protobuf.Writer.create().uint32(10).bytes(duration).finish();
  const any = protobuf.Writer.create().uint32(10).string(RETRY_INFO_TYPE).uint32(18).bytes(retryInfo).finish();
  return protobuf.Writer.create().uint32(8).int32(code).uint32(18).string(message).uint32(26).bytes(any).finish();
}

/** The RetryInfo delay in a `grpc-status-details-bin` value, in seconds, or null (tests, clients). */
export function retryDelayOf(details: Uint8Array): number | null {
  try {
    const fields = (bytes: Uint8Array, each: (field: number, r: protobuf.Reader) => boolean) => {
      const r = protobuf.Reader.create(bytes);
      while (r.pos < r.len) {
        const tag = r.uint32();
        if (!each(tag >>> 3, r)) r.skipType(tag & 7);
      }
    };
    let seconds: number | null = null;
    fields(details, (f, r) => {
      if (f !== 3) return false;
      let type = "";
      let value: Uint8Array | null = null;
      fields(r.bytes(), (g, a) => {
        if (g === 1) type = a.string();
        else if (g === 2) value = a.bytes();
        else return false;
        return true;
      });
      if (type === RETRY_INFO_TYPE && value)
        fields(value, (h, ri) => {
          if (h !== 1) return false;
          fields(ri.bytes(), (k, d) => {
            if (k !== 1) return false;
            seconds = Number(d.int64());
            return true;
          });
          return true;
        });
      return true;
    });
    return seconds;
  } catch {
    return null;
  }
}
