#!/usr/bin/env node
// Start-up benchmark: toolmux beside @modelcontextprotocol/server-filesystem.
//
// For each run, per server:
//   (1) time from spawn to the first tools/list answer: spawn, write
//       initialize, wait for its response, write notifications/initialized and
//       tools/list, wait for that response;
//   (2) idle memory: VmRSS and VmHWM from /proc/PID/status of the server
//       process 1 s after the tools/list answer.
// Runs alternate between the two servers. Prints a table and one JSON line
// (starting with {"bench":"startup"). See README.md.
//
// Usage: node run.mjs [--runs N] [--toolmux PATH] [--idle-ms MS] [--only toolmux|server-filesystem]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { REPO_ROOT, median, peerEntry, readMemory, round, sleep, toolmuxVersion } from '../lib/common.mjs';

const PROTOCOL_VERSION = '2025-06-18'; // supported by both servers

function parseArgs(argv) {
  const options = {
    runs: 30,
    toolmux: process.env.TOOLMUX_BIN ? path.resolve(process.env.TOOLMUX_BIN) : path.join(REPO_ROOT, 'build/toolmux'),
    idleMs: 1000,
    only: null,
    timeoutMs: 15000,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--runs') options.runs = Number.parseInt(value(), 10);
    else if (arg === '--toolmux') options.toolmux = path.resolve(value());
    else if (arg === '--idle-ms') options.idleMs = Number.parseInt(value(), 10);
    else if (arg === '--only') options.only = value();
    else if (arg === '--timeout-ms') options.timeoutMs = Number.parseInt(value(), 10);
    else if (arg === '--help' || arg === '-h') {
      console.log('Usage: node run.mjs [--runs N] [--toolmux PATH] [--idle-ms MS] [--only toolmux|server-filesystem] [--timeout-ms MS]');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(options.runs) || options.runs < 1) throw new Error('--runs must be a positive integer');
  return options;
}


/** One run: returns { startupMs, rssKb, hwmKb, toolCount }. */
async function runOnce(server, root, options) {
  const t0 = process.hrtime.bigint();
  const child = spawn(server.command, [...server.args, root], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? os.homedir() },
  });
  let stderr = '';
  child.stderr.on('data', (c) => {
    if (stderr.length < 64 * 1024) stderr += c;
  });
  child.stdin.on('error', () => {});
  let exited = null;
  const exitPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    });
  });
  const waiters = new Map();
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString();
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message.id !== undefined && waiters.has(message.id)) {
        waiters.get(message.id)(message);
        waiters.delete(message.id);
      }
    }
  });
  const waitResponse = (id, what) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${server.name}: no ${what} response within ${options.timeoutMs} ms; stderr: ${stderr}`)), options.timeoutMs);
      waiters.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      exitPromise.then((e) => {
        clearTimeout(timer);
        reject(new Error(`${server.name} exited (${JSON.stringify(e)}) before the ${what} response; stderr: ${stderr}`));
      });
    });
  const write = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);

  try {
    const initDone = waitResponse(1, 'initialize');
    write({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'toolmux-startup-bench', version: '0.0.0' } },
    });
    const init = await initDone;
    if (!init.result) throw new Error(`${server.name}: initialize failed: ${JSON.stringify(init)}`);
    const listDone = waitResponse(2, 'tools/list');
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    write({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const list = await listDone;
    const t1 = process.hrtime.bigint();
    if (!Array.isArray(list.result?.tools)) throw new Error(`${server.name}: tools/list failed: ${JSON.stringify(list)}`);

    await sleep(options.idleMs);
    if (exited) throw new Error(`${server.name} exited while idle: ${JSON.stringify(exited)}; stderr: ${stderr}`);
    const memory = readMemory(child.pid);
    return { startupMs: Number(t1 - t0) / 1e6, ...memory, toolCount: list.result.tools.length };
  } finally {
    child.stdin.end();
    const closed = await Promise.race([exitPromise, sleep(2000).then(() => null)]);
    if (!closed) {
      child.kill('SIGKILL');
      await exitPromise;
    }
  }
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  // Nearest-rank: the smallest value with at least q of the data at or below it.
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1];
}


async function main() {
  const options = parseArgs(process.argv.slice(2));
  const servers = [];
  if (options.only !== 'server-filesystem') {
    if (!fs.existsSync(options.toolmux)) throw new Error(`toolmux binary not found at ${options.toolmux} (build it or pass --toolmux PATH)`);
    servers.push({
      name: 'toolmux',
      command: options.toolmux,
      args: ['serve', '--root'],
      version: await toolmuxVersion(options.toolmux),
    });
  }
  if (options.only !== 'toolmux') {
    const peer = peerEntry();
    servers.push({
      name: 'server-filesystem',
      command: process.execPath,
      args: [peer.entry],
      version: peer.version,
    });
  }

  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'toolmux-bench-')));
  fs.writeFileSync(path.join(root, 'README.txt'), 'benchmark root\n');
  fs.mkdirSync(path.join(root, 'sub'));
  fs.writeFileSync(path.join(root, 'sub/file.txt'), 'x\n');

  const samples = Object.fromEntries(servers.map((s) => [s.name, []]));
  try {
    // Warm-up (not counted): page cache, node's compile cache.
    for (const server of servers) await runOnce(server, root, { ...options, idleMs: 0 });
    for (let i = 0; i < options.runs; i++) {
      // Alternate which server goes first so that drift affects both alike.
      const order = i % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) samples[server.name].push(await runOnce(server, root, options));
      if (process.stderr.isTTY) process.stderr.write(`\rrun ${i + 1}/${options.runs}`);
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }

  const results = {};
  for (const server of servers) {
    const runs = samples[server.name];
    const startup = runs.map((r) => r.startupMs);
    results[server.name] = {
      version: server.version,
      tools: runs[0]?.toolCount ?? null,
      startup_ms: { median: round(median(startup)), p90: round(quantile(startup, 0.9)), min: round(Math.min(...startup)), max: round(Math.max(...startup)) },
      idle_rss_kb: median(runs.map((r) => r.rssKb)),
      idle_hwm_kb: median(runs.map((r) => r.hwmKb)),
    };
  }
  const ratio = (f) =>
    results.toolmux && results['server-filesystem'] ? round(f(results['server-filesystem']) / f(results.toolmux), 1) : null;
  const summary = {
    bench: 'startup',
    runs: options.runs,
    idle_ms: options.idleMs,
    node: process.version,
    host: { cpus: os.cpus().length, kernel: os.release() },
    servers: results,
    // Peer divided by toolmux: how many times faster / smaller toolmux is.
    ratio_startup_median: ratio((r) => r.startup_ms.median),
    ratio_startup_p90: ratio((r) => r.startup_ms.p90),
    ratio_idle_rss: ratio((r) => r.idle_rss_kb),
    ratio_idle_hwm: ratio((r) => r.idle_hwm_kb),
  };

  const rows = [['server', 'version', 'tools', 'startup median ms', 'startup p90 ms', 'idle RSS MiB', 'idle HWM MiB']];
  for (const [name, r] of Object.entries(results)) {
    rows.push([
      name,
      String(r.version ?? '?'),
      String(r.tools),
      r.startup_ms.median.toFixed(1),
      r.startup_ms.p90.toFixed(1),
      (r.idle_rss_kb / 1024).toFixed(1),
      (r.idle_hwm_kb / 1024).toFixed(1),
    ]);
  }
  if (summary.ratio_startup_median !== null) {
    rows.push([
      'ratio (peer/toolmux)',
      '',
      '',
      `${summary.ratio_startup_median.toFixed(1)}x`,
      `${summary.ratio_startup_p90.toFixed(1)}x`,
      `${summary.ratio_idle_rss.toFixed(1)}x`,
      `${summary.ratio_idle_hwm.toFixed(1)}x`,
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  for (const [i, row] of rows.entries()) {
    console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log(JSON.stringify(summary));
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exit(1);
});
