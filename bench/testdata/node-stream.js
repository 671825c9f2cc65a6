// Node side of the throughput benchmarks (BenchmarkRunJSONThroughput,
// BenchmarkStreamInProcess, BenchmarkAgentStream): what the original
// TypeScript runtime did with a prompt turn's stream. It spawns the agent
// (argv after the script and its options), writes the prompt to its stdin,
// reads stdout with readline, re-arms an inactivity setTimeout and
// JSON.parses every line, then prints {"lines": N, "bytes": B, "result":
// bool} once stdout closed and the agent exited (0, or exit 1 from this
// script). "result" is whether an event of the final type came: "result"
// (Cursor's, Gemini's), or the type given by the option --final-type=TYPE
// before the program (Codex's turn.completed).
"use strict";
const { spawn } = require("node:child_process");
const readline = require("node:readline");

let argv = process.argv.slice(2);
let finalType = "result";
if (argv.length > 0 && argv[0].startsWith("--final-type=")) {
  finalType = argv[0].slice("--final-type=".length);
  argv = argv.slice(1);
}
const [program, ...args] = argv;
const idleMs = 120000;
const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
child.stdin.end("Summarise the README.");
let lines = 0;
let bytes = 0;
let result = false;
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
  bytes += Buffer.byteLength(line) + 1;
  const ev = JSON.parse(line);
  if (ev.type === finalType) result = true;
});
let closed = false;
let code = null;
function finish() {
  if (!closed || code === null) return;
  clearTimeout(timer);
  process.stdout.write(JSON.stringify({ lines, bytes, result }) + "\n");
  process.exitCode = code === 0 ? 0 : 1;
}
rl.on("close", () => {
  closed = true;
  finish();
});
child.on("exit", (c, signal) => {
  code = c === null ? signal : c;
  finish();
});
