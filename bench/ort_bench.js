#!/usr/bin/env node
// Times ONNX Runtime (CPU, onnxruntime-node) on one model exactly as
// onyx_bench times onyx, and prints the same JSON line.
// usage: node bench/ort_bench.js MODEL [--threads N] [--runs N] [--warmup N] NAME=FILE.npy ...
"use strict";
const fs = require("fs");
const ort = require("onnxruntime-node");

function readNpy(path) {
  const buf = fs.readFileSync(path);
  const hlen = buf.readUInt16LE(8);
  const header = buf.toString("latin1", 10, 10 + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  const types = {"<f4": ["float32", Float32Array], "<f8": ["float64", Float64Array], "<i8": ["int64", BigInt64Array],
    "<i4": ["int32", Int32Array], "|u1": ["uint8", Uint8Array], "|b1": ["bool", Uint8Array]};
  const [type, A] = types[descr];
  const data = buf.subarray(10 + hlen);
  const copy = Buffer.from(data);
  return new ort.Tensor(type, new A(copy.buffer, copy.byteOffset, copy.length / A.BYTES_PER_ELEMENT), shape);
}

(async () => {
  const args = process.argv.slice(2);
  let model = null, threads = 1, runs = 20, warmup = 3;
  const feeds = {};
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--threads") threads = Number(args[++i]);
    else if (args[i] === "--runs") runs = Number(args[++i]);
    else if (args[i] === "--warmup") warmup = Number(args[++i]);
    else if (args[i].includes("=") && model) { const [n, f] = args[i].split("="); feeds[n] = readNpy(f); }
    else model = args[i];
  }
  const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: "all",
    intraOpNumThreads: threads, interOpNumThreads: 1});
  const times = [];
  for (let r = -warmup; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    const t1 = process.hrtime.bigint();
    if (r >= 0) times.push(Number(t1 - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({runtime: "onnxruntime", median_ms: +times[runs >> 1].toFixed(3),
    min_ms: +times[0].toFixed(3), runs, threads}));
})();
