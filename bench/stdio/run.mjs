#!/usr/bin/env node
// tools/call over stdio: calls per second, sequential and pipelined, and the
// server's CPU time per call, toolmux beside a server on
// @modelcontextprotocol/sdk (sdk_server.mjs) in the same run.
//
// toolmux is its conformance example (examples/conformance-server) serving its
// native `test_simple_text` tool; the peer serves the same tool with the same
// text. Both run as they ship: toolmux's every call goes through the whole call
// pipeline and writes its record to the log (stderr, to a file here).
//
// Per repetition the servers take turns (the order rotating each repetition):
// each is started pinned to core 0 (taskset), gets `initialize`,
// `notifications/initialized` and one checked call, then
//   sequential  --sequential calls, each sent when the previous one was answered;
//   pipelined   --calls calls, written as fast as the pipe takes them with at
//               most --window unanswered, timed until the last answer.
// Every answer is checked (its id, and the tool's text). The server's CPU time
// (utime + stime from /proc) over the pipelined phase, divided by the calls,
// is its CPU cost per call. This client re-runs itself pinned to core 1.
// Prints a table, the ratios and one JSON line (starting {"bench":"stdio").
//
// Usage: node run.mjs [--build DIR] [--calls N] [--sequential N] [--window N]
//                     [--reps N] [--only toolmux,sdk]

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { REPO_ROOT, cpuSeconds, median, round, stdioClient, toolmuxVersion } from '../lib/common.mjs';

const { values } = parseArgs({
  options: {
    build: { type: 'string', default: path.join(REPO_ROOT, 'build') },
    calls: { type: 'string', default: '50000' },
    sequential: { type: 'string', default: '5000' },
    window: { type: 'string', default: '256' },
    reps: { type: 'string', default: '3' },
    only: { type: 'string', default: 'toolmux,sdk' },
  },
});

// The client on core 1, the servers on core 0: re-run pinned unless already.
if (!process.env.TOOLMUX_BENCH_PINNED) {
  const self = fileURLToPath(import.meta.url);
  const run = spawnSync('taskset', ['-c', '1', process.execPath, self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, TOOLMUX_BENCH_PINNED: '1' },
  });
  process.exit(run.status ?? 1);
}

const CALLS = Number(values.calls);
const SEQUENTIAL = Number(values.sequential);
const WINDOW = Number(values.window);
const REPS = Number(values.reps);
const TEXT = 'This is a simple text response for testing.';
const here = path.dirname(fileURLToPath(import.meta.url));
const example = path.join(values.build, 'examples/conformance-server/toolmux-conformance-server');

const servers = {
  toolmux: (dir) => ({
    command: example,
    args: ['serve', '--data-dir', path.join(dir, 'data'), '--root', dir],
  }),
  sdk: () => ({ command: process.execPath, args: [path.join(here, 'sdk_server.mjs')] }),
};

// A server over pipes; `request` writes one call and gives its answer's promise.
function start(name, dir) {
  const { command, args } = servers[name](dir);
  const log = fs.openSync(path.join(dir, `${name}.log`), 'w');
  const child = spawn('taskset', ['-c', '0', command, ...args], { stdio: ['pipe', 'pipe', log] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const client = stdioClient(child, exited);
  const line = (message) => JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n';
  return {
    child,
    exited,
    request(id, method, params) {
      return client.request(line({ id, method, params }), id);
    },
    notify(method) {
      client.notify(line({ method }));
    },
  };
}

function check(message, id) {
  const text = message?.result?.content?.[0]?.text;
  if (message.id !== id || text !== TEXT) {
    throw new Error(`call ${id}: unexpected answer ${JSON.stringify(message).slice(0, 300)}`);
  }
}

const CALL = { name: 'test_simple_text', arguments: {} };

async function measure(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `stdio-bench-${name}-`));
  const server = start(name, dir);
  try {
    const init = await server.request(0, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'stdio-bench', version: '1' },
    });
    if (!init.result) throw new Error(`${name}: initialize failed: ${JSON.stringify(init)}`);
    server.notify('notifications/initialized');
    let id = 1;
    check(await server.request(id, 'tools/call', CALL), id);

    // Sequential: one call in flight.
    let started = process.hrtime.bigint();
    for (let i = 0; i < SEQUENTIAL; ++i) {
      ++id;
      check(await server.request(id, 'tools/call', CALL), id);
    }
    const sequential = SEQUENTIAL / (Number(process.hrtime.bigint() - started) / 1e9);

    // Pipelined: up to WINDOW unanswered, written as fast as the pipe takes them.
    const cpuBefore = cpuSeconds(server.child.pid);
    started = process.hrtime.bigint();
    const first = id + 1;
    const last = id + CALLS;
    let next = first;
    let answered = 0;
    await new Promise((resolve, reject) => {
      const pump = () => {
        while (next <= last && next - first - answered < WINDOW) {
          const callId = next++;
          server.request(callId, 'tools/call', CALL).then((message) => {
            try {
              check(message, callId);
            } catch (error) {
              reject(error);
              return;
            }
            if (++answered === CALLS) resolve();
            else pump();
          });
          if (server.child.stdin.writableNeedDrain) {
            server.child.stdin.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    const pipelined = CALLS / (Number(process.hrtime.bigint() - started) / 1e9);
    const cpuPerCallUs = ((cpuSeconds(server.child.pid) - cpuBefore) / CALLS) * 1e6;
    return { sequential, pipelined, cpuPerCallUs };
  } finally {
    server.child.stdin.end();
    const timer = setTimeout(() => server.child.kill('SIGKILL'), 10000);
    await server.exited;
    clearTimeout(timer);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const names = values.only.split(',');
for (const name of names) {
  if (!servers[name]) throw new Error(`--only: unknown server ${name}`);
}
if (names.includes('toolmux') && !fs.existsSync(example)) {
  throw new Error(`${example} is missing: cmake --build ${values.build} --target toolmux-conformance-server`);
}
const results = Object.fromEntries(names.map((n) => [n, []]));
for (let rep = 0; rep < REPS; ++rep) {
  const order = names.map((_, i) => names[(i + rep) % names.length]);
  for (const name of order) {
    const r = await measure(name);
    results[name].push(r);
    console.error(
      `rep ${rep + 1}/${REPS} ${name}: sequential ${Math.round(r.sequential)}/s, ` +
        `pipelined ${Math.round(r.pipelined)}/s, ${round(r.cpuPerCallUs, 1)} µs CPU per call`,
    );
  }
}

const summary = {};
for (const name of names) {
  summary[name] = {
    sequential_per_s: Math.round(median(results[name].map((r) => r.sequential))),
    pipelined_per_s: Math.round(median(results[name].map((r) => r.pipelined))),
    cpu_us_per_call: round(median(results[name].map((r) => r.cpuPerCallUs)), 1),
  };
}
console.log('server   sequential/s   pipelined/s   server CPU µs/call   (medians of %d)', REPS);
for (const name of names) {
  const s = summary[name];
  console.log(
    `${name.padEnd(8)} ${String(s.sequential_per_s).padStart(12)} ${String(s.pipelined_per_s).padStart(13)} ${String(s.cpu_us_per_call).padStart(20)}`,
  );
}
const ratios = {};
if (summary.toolmux && summary.sdk) {
  // Ratios of the per-repetition values (same rep, same machine load), then the median.
  const per = (key) =>
    round(median(results.toolmux.map((r, i) => r[key] / results.sdk[i][key])), 2);
  ratios.sequential = per('sequential');
  ratios.pipelined = per('pipelined');
  ratios.cpu_per_call = per('cpuPerCallUs');
  console.log(
    `toolmux / sdk: sequential ${ratios.sequential}x, pipelined ${ratios.pipelined}x, CPU per call ${ratios.cpu_per_call}x`,
  );
}
console.log(
  JSON.stringify({
    bench: 'stdio',
    toolmux: await toolmuxVersion(example),
    calls: CALLS,
    sequential_calls: SEQUENTIAL,
    window: WINDOW,
    reps: REPS,
    load: os.loadavg()[0],
    summary,
    ratios,
  }),
);
