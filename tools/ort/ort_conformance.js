#!/usr/bin/env node
// Runs the ONNX backend test suite through ONNX Runtime (CPU, onnxruntime-node)
// with the same binding and tolerances as onyx's conformance runner, and writes
// the same TSV format, so docs/CONFORMANCE.md can compare the two.
//
// usage: node tools/ort/ort_conformance.js [DATA_DIR] > ort_results.tsv
"use strict";
const fs = require("fs");
const path = require("path");
const ort = require("onnxruntime-node"); // installed at the repository root
const protobuf = require("protobufjs");

const DATA = process.argv[2] || "/usr/share/libonnx-testdata/data";
const SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"];
const RTOL = 1e-3, ATOL = 1e-7;

const root = protobuf.loadSync("/usr/include/onnx/onnx.proto");
const TensorProto = root.lookupType("onnx.TensorProto");

const TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
  7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"};
const ARRAYS = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
  float16: Uint16Array, float64: Float64Array, uint32: Uint32Array, uint64: BigUint64Array};

function toTensor(buf) {
  const t = TensorProto.decode(buf);
  const type = TYPES[t.dataType];
  if (!type) throw new Error(`data type ${t.dataType} not supported by onnxruntime-node`);
  const dims = t.dims.map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === "string") return new ort.Tensor("string", t.stringData.map((b) => Buffer.from(b).toString()), dims);
  const A = ARRAYS[type];
  let data;
  if (t.rawData && t.rawData.length) {
    const copy = Buffer.from(t.rawData);
    data = new A(copy.buffer, copy.byteOffset, copy.length / A.BYTES_PER_ELEMENT).slice();
  } else if (type === "float32") data = Float32Array.from(t.floatData);
  else if (type === "float64") data = Float64Array.from(t.doubleData);
  else if (type === "int64") data = BigInt64Array.from(t.int64Data.map((v) => BigInt(v.toString())));
  else if (type === "uint32" || type === "uint64") {
    const vals = t.uint64Data.map((v) => v.toString());
    data = type === "uint64" ? BigUint64Array.from(vals.map(BigInt)) : Uint32Array.from(vals.map(Number));
  } else data = A.from(t.int32Data);
  if (data.length !== n) throw new Error(`tensor holds ${data.length} values, shape needs ${n}`);
  return new ort.Tensor(type, data, dims);
}

function half(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function compare(got, want, name) {
  if (got.type !== want.type) return `output '${name}': type ${got.type} != expected ${want.type}`;
  if (got.dims.join(",") !== want.dims.join(",")) return `output '${name}': shape [${got.dims}] != expected [${want.dims}]`;
  const float = ["float32", "float64", "float16"].includes(got.type);
  let bad = 0, first = -1;
  for (let i = 0; i < want.data.length; i++) {
    let a = got.data[i], b = want.data[i];
    if (got.type === "float16") { a = half(a); b = half(b); }
    let ok;
    if (float) {
      if (Number.isNaN(b)) ok = Number.isNaN(a);
      else if (!Number.isFinite(b)) ok = a === b;
      else ok = Math.abs(a - b) <= ATOL + RTOL * Math.abs(b);
    } else ok = a === b;
    if (!ok) { bad++; if (first < 0) first = i; }
  }
  return bad ? `output '${name}': ${bad} of ${want.data.length} values differ (first at ${first})` : null;
}

async function runTest(dir) {
  let session;
  try {
    session = await ort.InferenceSession.create(path.join(dir, "model.onnx"), {
      graphOptimizationLevel: "all", intraOpNumThreads: 1});
  } catch (e) { return `load: ${String(e.message).split("\n")[0]}`; }
  const sets = fs.readdirSync(dir).filter((d) => d.startsWith("test_data_set_")).sort();
  for (const set of sets) {
    const sd = path.join(dir, set);
    const files = fs.readdirSync(sd);
    const feeds = {};
    try {
      for (let k = 0; files.includes(`input_${k}.pb`); k++)
        feeds[session.inputNames[k]] = toTensor(fs.readFileSync(path.join(sd, `input_${k}.pb`)));
    } catch (e) { return `${set}: input: ${e.message}`; }
    let out;
    try { out = await session.run(feeds); } catch (e) { return `${set}: run: ${String(e.message).split("\n")[0]}`; }
    for (let k = 0; files.includes(`output_${k}.pb`); k++) {
      let want;
      try { want = toTensor(fs.readFileSync(path.join(sd, `output_${k}.pb`))); }
      catch (e) { return `${set}: expected output ${k}: ${e.message}`; }
      const name = session.outputNames[k];
      if (!out[name]) return `${set}: output ${k} missing`;
      const why = compare(out[name], want, name);
      if (why) return `${set}: ${why}`;
    }
  }
  return null;
}

(async () => {
  const counts = {};
  for (const suite of SUITES) {
    const sdir = path.join(DATA, suite);
    if (!fs.existsSync(sdir)) continue;
    counts[suite] = [0, 0];
    for (const test of fs.readdirSync(sdir).sort()) {
      const why = await runTest(path.join(sdir, test));
      counts[suite][why ? 1 : 0]++;
      process.stdout.write(`${suite}\t${test}\t${why ? "fail" : "pass"}\t${(why || "").replace(/[\t\n]/g, " ")}\n`);
    }
  }
  let p = 0, f = 0;
  for (const [s, [a, b]] of Object.entries(counts)) { process.stderr.write(`${s}: ${a}/${a + b}\n`); p += a; f += b; }
  process.stderr.write(`${p} passed, ${f} failed\n`);
})();
