#!/usr/bin/env node
// Command tool overhead: what a command tool call through toolmux costs beyond
// running the same program directly, and how that grows with the number of
// processes on the machine. After each command exits, toolmux looks through
// /proc for processes that still carry the run's marker (a grandchild that
// left the process group with setsid; src/base/process_runner.h):
// that scan reads every process's environment, so its cost is per process.
//
// Per repetition, for each background load (0 and --procs extra idle
// processes, `sleep` children of this script), the two paths take turns:
//   direct   spawn `stat --format=... -- catalog.json` from Node and wait
//   toolmux  the file_size tool of examples/catalog.json over stdio, raw
//            JSON-RPC, one call in flight (the same program and arguments)
// Each path makes --warmup calls, then --calls timed one by one. Added =
// toolmux − direct (medians within a repetition); the report gives medians of
// the repetitions. Prints a table and one JSON line (starting
// {"bench":"command_overhead").
//
// Usage: node run.mjs [--build DIR] [--calls N] [--warmup N] [--reps N] [--procs N]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { REPO_ROOT, median, round, sleep, toolmuxVersion } from '../lib/common.mjs';

const { values } = parseArgs({
  options: {
    build: { type: 'string', default: path.join(REPO_ROOT, 'build') },
    calls: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    reps: { type: 'string', default: '3' },
    procs: { type: 'string', default: '2000' },
  },
});
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
const REPS = Number(values.reps);
const PROCS = Number(values.procs);
const BIN = path.join(values.build, 'toolmux');
const EXAMPLES = path.join(REPO_ROOT, 'examples');

function runDirect() {
  return new Promise((resolve, reject) => {
    const child = spawn('stat', ['--format=%n: %s bytes, %F', '--', 'catalog.json'], {
      cwd: EXAMPLES,
      env: { PATH: process.env.PATH, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`stat exited ${code}`))));
  });
}

// A toolmux over stdio with a minimal JSON-RPC client.
async function startToolmux() {
  const child = spawn(BIN, ['serve', '--catalog', path.join(EXAMPLES, 'catalog.json'), '--log-level', 'error'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting = new Map();
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let at;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  });
  let next = 1;
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const call = async () => {
    const answer = await request('tools/call', { name: 'file_size', arguments: { path: 'catalog.json' } });
    if (answer.error || answer.result.isError) throw new Error(`file_size failed: ${JSON.stringify(answer)}`);
  };
  return { call, stop: () => child.kill('SIGTERM') };
}

async function timed(call) {
  for (let i = 0; i < WARMUP; i++) await call();
  const ms = [];
  for (let i = 0; i < CALLS; i++) {
    const start = process.hrtime.bigint();
    await call();
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(ms);
}

async function withProcesses(count, body) {
  const children = [];
  for (let i = 0; i < count; i++) {
    children.push(spawn('sleep', ['3600'], { stdio: 'ignore', env: { PATH: process.env.PATH, BENCH_IDLE: String(i) } }));
  }
  await sleep(count > 0 ? 2000 : 0);
  try {
    return await body();
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await sleep(count > 0 ? 1000 : 0);
  }
}

const runs = { 0: [], [PROCS]: [] };
for (let rep = 0; rep < REPS; rep++) {
  for (const load of [0, PROCS]) {
    await withProcesses(load, async () => {
      const processes = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
      const tm = await startToolmux();
      const order = rep % 2 ? ['toolmux', 'direct'] : ['direct', 'toolmux'];
      const result = { processes };
      for (const which of order) result[which] = await timed(which === 'direct' ? runDirect : tm.call);
      tm.stop();
      result.added = result.toolmux - result.direct;
      runs[load].push(result);
    });
  }
}

const report = { bench: 'command_overhead', toolmux: await toolmuxVersion(BIN), calls: CALLS, reps: REPS, loads: {} };
console.log('extra processes | processes on the machine | direct p50 ms | toolmux p50 ms | added ms');
for (const load of [0, PROCS]) {
  const r = runs[load];
  const row = {
    processes: median(r.map((x) => x.processes)),
    direct_ms: round(median(r.map((x) => x.direct)), 3),
    toolmux_ms: round(median(r.map((x) => x.toolmux)), 3),
    added_ms: round(median(r.map((x) => x.added)), 3),
  };
  report.loads[load] = row;
  console.log(`${load} | ${row.processes} | ${row.direct_ms} | ${row.toolmux_ms} | ${row.added_ms}`);
}
console.log(JSON.stringify(report));
