// Baseline for the P1 throughput benchmark: what the original TypeScript
// runtime did per turn. It spawns the generator given on the command line,
// reads its stdout with readline, and re-arms an inactivity setTimeout on
// every line. It prints {"lines": N, "bytes": B, "ms": T} where T is the
// time from spawn to the stream's close, measured inside Node so its own
// startup is not counted.
"use strict";
const { spawn } = require("node:child_process");
const readline = require("node:readline");

const [, , program, ...args] = process.argv;
const idleMs = 120000;
const started = process.hrtime.bigint();
const child = spawn(program, args, { stdio: ["ignore", "pipe", "inherit"] });
let lines = 0;
let bytes = 0;
let timer = setTimeout(onIdle, idleMs);
function onIdle() {
  child.kill("SIGKILL");
  console.error("inactivity deadline");
  process.exit(1);
}
const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
rl.on("line", (line) => {
  clearTimeout(timer);
  timer = setTimeout(onIdle, idleMs);
  lines++;
  bytes += line.length + 1;
});
rl.on("close", () => {
  clearTimeout(timer);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  child.on("exit", () => {});
  process.stdout.write(JSON.stringify({ lines, bytes, ms }) + "\n");
});
