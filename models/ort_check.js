#!/usr/bin/env node
// Loads each model given in ONNX Runtime (CPU) and prints its inputs and
// outputs; exits non-zero when one does not load. Run after the exports so a
// model ONNX Runtime rejects is caught where it is made, not in the tests.
//
// usage: node models/ort_check.js MODEL.onnx...
"use strict";
const ort = require("onnxruntime-node"); // installed at the repository root

async function main() {
  const models = process.argv.slice(2);
  if (!models.length) {
    console.error("usage: node ort_check.js MODEL.onnx...");
    process.exit(2);
  }
  let failed = 0;
  for (const file of models) {
    try {
      const s = await ort.InferenceSession.create(file, {graphOptimizationLevel: "all"});
      console.log(`${file}: loads in ONNX Runtime; inputs ${s.inputNames.join(", ")}; ` +
        `outputs ${s.outputNames.join(", ")}`);
      await s.release();
    } catch (e) {
      console.error(`${file}: ONNX Runtime cannot load it: ${String(e.message).split("\n")[0]}`);
      failed++;
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
