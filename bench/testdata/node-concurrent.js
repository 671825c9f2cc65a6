// Node side of BenchmarkConcurrentTurnsRSS: what the original TypeScript
// runtime did per prompt turn, for N turns at once in one process. Each turn spawns the
// agent (argv after the turn count), writes the prompt to its stdin, reads
// stdout with readline, re-arms an inactivity setTimeout and JSON.parses
// every line, and keeps a bounded stderr tail. When every turn is over it
// prints its own peak RSS (VmHWM from /proc/self/status, as the Go driver
// does: getrusage's maxrss carries the forking parent's peak over exec) and
// CPU time (getrusage RUSAGE_SELF through process.resourceUsage(); the
// children are not counted) as one JSON line.
"use strict";
const fs = require("node:fs");
const { spawn } = require("node:child_process");
const readline = require("node:readline");

const [, , turnsArg, program, ...args] = process.argv;
const turns = Number(turnsArg);
const firstLineMs = 30000;
const idleMs = 120000;
const tailBytes = 16384;
const prompt = "Summarise the README.";
const started = process.hrtime.bigint();
let inFlight = 0;
let peakInFlight = 0;
let lines = 0;
let failed = 0;
let done = 0;

function turn() {
  const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] });
  inFlight++;
  peakInFlight = Math.max(peakInFlight, inFlight);
  child.stdin.end(prompt);
  let stderrTail = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (s) => {
    stderrTail = (stderrTail + s).slice(-tailBytes);
  });
  let sawResult = false;
  let error = null;
  let timer = setTimeout(onTimeout, firstLineMs);
  function onTimeout() {
    error = "timeout";
    child.kill("SIGKILL");
  }
  const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
  rl.on("line", (line) => {
    clearTimeout(timer);
    timer = setTimeout(onTimeout, idleMs);
    lines++;
    if (line.trim() === "") return;
    let ev;
    try {
      ev = JSON.parse(line);
    } catch (e) {
      error = error || "protocol: " + e.message;
      return;
    }
    if (ev.type === "result") sawResult = true;
  });
  let closed = false;
  let exitCode = null;
  function finish() {
    if (!closed || exitCode === null) return;
    clearTimeout(timer);
    inFlight--;
    if (error || !sawResult || exitCode !== 0) {
      failed++;
      console.error("turn failed:", error || (sawResult ? "exit " + exitCode : "no result"), stderrTail);
    }
    if (++done === turns) report();
  }
  rl.on("close", () => {
    closed = true;
    finish();
  });
  child.on("exit", (code, signal) => {
    exitCode = code === null ? signal : code;
    finish();
  });
  child.on("error", (e) => {
    error = "spawn: " + e.message;
  });
}

function vmHWM() {
  const m = /^VmHWM:\s*(\d+) kB$/m.exec(fs.readFileSync("/proc/self/status", "utf8"));
  if (!m) throw new Error("no VmHWM in /proc/self/status");
  return Number(m[1]);
}

function report() {
  const ru = process.resourceUsage();
  process.stdout.write(
    JSON.stringify({
      turns,
      failed,
      lines,
      peakInFlight,
      maxRSSKB: vmHWM(),
      userMS: ru.userCPUTime / 1000,
      sysMS: ru.systemCPUTime / 1000,
      wallMS: Number(process.hrtime.bigint() - started) / 1e6,
    }) + "\n",
  );
}

for (let i = 0; i < turns; i++) turn();
