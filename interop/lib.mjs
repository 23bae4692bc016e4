// Helpers shared by check_duckdb.mjs and check_arrow.mjs: the report format
// that interop_test.go compares with what memowm wrote.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { endianness } from "node:os";

if (endianness() !== "LE") {
  throw new Error("these checks hash typed arrays' bytes and assume a little-endian machine");
}

// readSpec reads the JSON file named by the one argument: a map from a name
// ("states", "codes") to {path, samples}.
export function readSpec(usage) {
  if (process.argv.length !== 3) {
    process.stderr.write(`usage: ${usage}\n`);
    process.exit(2);
  }
  return JSON.parse(readFileSync(process.argv[2], "utf8"));
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// bits is a float32's IEEE 754 bits (exact for -0 and subnormals), or null.
export function bits(v) {
  if (v === null || v === undefined) return null;
  f32[0] = v;
  return u32[0];
}

// hex is a byte array's hex, or null.
export function hex(b) {
  if (b === null || b === undefined) return null;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

// obs reports one observation, a Float32Array or Uint8Array: its length, the
// SHA-256 of its little-endian bytes, and its values at the sample indices
// (floats as bits).
export function obs(values, samples) {
  const isFloat = values instanceof Float32Array;
  return {
    obs_len: values.length,
    obs_sha256: createHash("sha256").update(Buffer.from(values.buffer, values.byteOffset, values.byteLength)).digest("hex"),
    obs_sample: samples.map((j) => (isFloat ? bits(values[j]) : values[j])),
  };
}

// int turns a BigInt or number into a number, checking that it is exact.
export function int(v) {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`integer ${v} does not fit a double`);
  return n;
}

export function print(report) {
  process.stdout.write(JSON.stringify(report) + "\n");
}
