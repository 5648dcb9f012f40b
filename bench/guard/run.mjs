#!/usr/bin/env node
// The cost of guarded mutations' bookkeeping per call: the same calls to a
// toolmux that journals and audits (as it ships) and to one started with
// --no-journal, side by side in one run.
//
// Two tools, each called over stdio with a raw JSON-RPC client, one call in
// flight:
//   read     read_text_file of a 13-byte file (read_only: one audit record,
//            not synced)
//   mutate   touch_stamp, a command tool (local_mutation, so no confirmation
//            by default) that runs `touch -- stamp.txt`: the journal's intent
//            (synced) before it runs, its outcome and audit record (one
//            synced batch) after
// Both servers run for the whole repetition; calls alternate between them one
// by one (on, off, off, on, ...), so that the machine's noise falls on both
// alike. Each server gets a fresh --data-dir under --data-root (default: the
// system's temporary folder; the journal's syncs cost what that disk's fsync
// costs). Per repetition and tool: p50 and p99 of each server's latencies;
// the report gives medians of the repetitions, the differences on − off and
// the ratios on / off. Prints a table and one JSON line (starting
// {"bench":"guard").
//
// Usage: node run.mjs [--build DIR] [--calls N] [--warmup N] [--reps N] [--data-root DIR]

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { REPO_ROOT, median, round, stdioClient, toolmuxVersion } from '../lib/common.mjs';

const { values } = parseArgs({
  options: {
    build: { type: 'string', default: path.join(REPO_ROOT, 'build') },
    calls: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '200' },
    reps: { type: 'string', default: '3' },
    'data-root': { type: 'string', default: os.tmpdir() },
  },
});
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
const REPS = Number(values.reps);
const BIN = path.join(values.build, 'toolmux');
const CATALOG = path.join(REPO_ROOT, 'bench/guard/catalog.json');
const CONFIGS = { on: [], off: ['--no-journal'] };
const TOOLS = {
  read: { name: 'read_text_file', arguments: { path: 'notes.txt' }, expect: (text) => text === 'a short note\n' },
  mutate: { name: 'touch_stamp', arguments: {}, expect: (text) => text === 'touched\n' },
};

/** A toolmux over stdio in `dir` (its catalog's folder and --root), with `extra` options. */
async function startToolmux(dir, name, extra) {
  const data = path.join(dir, `data-${name}`);
  const log = fs.openSync(path.join(dir, `${name}.log`), 'w');
  const child = spawn(BIN, ['serve', '--catalog', path.join(dir, 'catalog.json'), '--root', dir, '--data-dir', data, ...extra], {
    stdio: ['pipe', 'pipe', log],
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/' },
  });
  fs.closeSync(log);
  const exited = once(child, 'exit');
  const client = stdioClient(child, exited);
  const init = await client.request(
    `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-guard', version: '0' } } })}\n`,
    0,
  );
  if (!init.result) throw new Error(`${name}: initialize failed: ${JSON.stringify(init)}`);
  client.notify('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  let next = 1;
  return {
    /** One tools/call of `tool`; its latency in µs. */
    async call(tool) {
      const id = next++;
      const text = `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: tool.arguments } })}\n`;
      const start = process.hrtime.bigint();
      const answer = await client.request(text, id);
      const us = Number(process.hrtime.bigint() - start) / 1000;
      const out = answer.result?.content?.[0]?.text;
      if (answer.error || answer.result.isError || !tool.expect(out)) {
        throw new Error(`${name}: ${tool.name} answered ${JSON.stringify(answer)}`);
      }
      return us;
    },
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

/** Nearest-rank percentile of sorted values. */
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

const runs = Object.fromEntries(Object.keys(TOOLS).map((tool) => [tool, { on: [], off: [] }]));
for (let rep = 0; rep < REPS; rep++) {
  const dir = fs.mkdtempSync(path.join(values['data-root'], 'bench-guard-'));
  fs.copyFileSync(CATALOG, path.join(dir, 'catalog.json'));
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'a short note\n');
  const servers = {};
  for (const [name, extra] of Object.entries(CONFIGS)) servers[name] = await startToolmux(dir, name, extra);
  try {
    for (const [toolName, tool] of Object.entries(TOOLS)) {
      const latencies = { on: [], off: [] };
      for (let i = 0; i < WARMUP + CALLS; i++) {
        // on, off, off, on, on, off, ...: neither always goes first.
        const order = (i + rep) % 2 ? ['off', 'on'] : ['on', 'off'];
        for (const name of order) {
          const us = await servers[name].call(tool);
          if (i >= WARMUP) latencies[name].push(us);
        }
      }
      for (const name of Object.keys(CONFIGS)) {
        const sorted = latencies[name].sort((a, b) => a - b);
        const r = { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
        runs[toolName][name].push(r);
        console.error(`rep ${rep + 1} ${toolName.padEnd(6)} journal ${name.padEnd(3)} p50 ${r.p50.toFixed(1)} µs, p99 ${r.p99.toFixed(1)} µs`);
      }
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const report = {
  bench: 'guard',
  toolmux: await toolmuxVersion(BIN),
  calls: CALLS,
  warmup: WARMUP,
  reps: REPS,
  dataRoot: values['data-root'],
  tools: {},
};
console.log('tool | journal+audit on: p50 / p99 µs | off (--no-journal): p50 / p99 µs | added p50 / p99 µs | on/off p50 | on/off p99');
for (const [toolName, byConfig] of Object.entries(runs)) {
  const m = (name, p) => median(byConfig[name].map((r) => r[p]));
  // The difference and ratio per repetition, then their medians.
  const per = (f, p) => median(byConfig.on.map((r, i) => f(r[p], byConfig.off[i][p])));
  const row = {
    on: { p50Us: round(m('on', 'p50'), 1), p99Us: round(m('on', 'p99'), 1) },
    off: { p50Us: round(m('off', 'p50'), 1), p99Us: round(m('off', 'p99'), 1) },
    addedP50Us: round(per((a, b) => a - b, 'p50'), 1),
    addedP99Us: round(per((a, b) => a - b, 'p99'), 1),
    ratioP50: round(per((a, b) => a / b, 'p50'), 2),
    ratioP99: round(per((a, b) => a / b, 'p99'), 2),
    runs: byConfig,
  };
  report.tools[toolName] = row;
  console.log(
    `${TOOLS[toolName].name} | ${row.on.p50Us} / ${row.on.p99Us} | ${row.off.p50Us} / ${row.off.p99Us} | ` +
      `${row.addedP50Us} / ${row.addedP99Us} | ${row.ratioP50} | ${row.ratioP99}`,
  );
}
console.log(JSON.stringify(report));
