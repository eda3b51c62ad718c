import { dlopen, FFIType, ptr } from "bun:ffi";
import { readdirSync } from "node:fs";
import { arch } from "node:os";

/** sched_setattr / sched_getattr by architecture (the kernel's syscall tables). */
const SYSCALLS: Record<string, { set: number; get: number }> = {
  x64: { set: 314, get: 315 },
  arm64: { set: 274, get: 275 },
};
/** sizeof(struct sched_attr), SCHED_ATTR_SIZE_VER1. */
const SIZE = 56;

/**
 * Asks Linux's fair scheduler (EEVDF, 6.12+) for a slice of `ns` for every thread of this process
 * (`sched_attr.sched_runtime`; the kernel clamps it to 0.1-100 ms), keeping each thread's policy
 * and nice level, which sched_setattr also sets. Threads started later inherit it. 0: nothing.
 * Returns how many threads took it. Bench-only: Bun's FFI, Linux on x64 or arm64, glibc.
 */
export function setThreadSlices(ns: number): number {
  const nr = SYSCALLS[arch()];
  if (!ns || !nr) return 0;
  const lib = dlopen("libc.so.6", {
    syscall: { args: [FFIType.i64, FFIType.i64, FFIType.ptr, FFIType.i64, FFIType.i64], returns: FFIType.i64 },
  });
  let set = 0;
  for (const tid of readdirSync("/proc/self/task").map(Number)) {
    const got = new ArrayBuffer(SIZE);
    if (lib.symbols.syscall(nr.get, tid, ptr(got), SIZE, 0) !== 0n) continue;
    const was = new DataView(got);
    const next = new ArrayBuffer(SIZE);
    const v = new DataView(next);
    v.setUint32(0, SIZE, true);
    v.setUint32(4, was.getUint32(4, true), true); // policy
    v.setInt32(16, was.getInt32(16, true), true); // nice
    v.setBigUint64(24, BigInt(ns), true); // sched_runtime: the slice
    if (lib.symbols.syscall(nr.set, tid, ptr(next), 0, 0) === 0n) set++;
  }
  lib.close();
  return set;
}
