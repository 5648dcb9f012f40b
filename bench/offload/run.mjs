#!/usr/bin/env node
// Offload benchmark: a 10 MB tool result, toolmux beside
// @modelcontextprotocol/server-filesystem.
//
// toolmux: a catalog command tool (`cat` of a 10 MB UTF-8 file with 1- to
// 4-byte characters) prints the text; toolmux stores it in its result store
// (RocksDB under a fresh --data-dir) and answers with a 2000-character preview
// and a result_id. Measured:
//   (1) offload: from writing tools/call to reading the whole response line;
//   (2) read-back: reading the whole result with read_tool_result, max_chars
//       20000, one page after the other; the pages joined must equal the
//       file byte for byte;
//   (3) peak memory: VmHWM from /proc/PID/status of the toolmux process after
//       the read-back (target: under 3x the result size).
// The peer: server-filesystem reads the same file inline with read_text_file:
//   (1) the call, from writing tools/call to reading the whole response line,
//       whose text must equal the file byte for byte; (3) its VmHWM.
//
// Raw newline-delimited JSON-RPC over stdio, no SDK. Each run starts fresh
// processes (start-up is not measured); runs alternate which server goes
// first. Prints a table and one JSON line (starting with {"bench":"offload").
// See README.md.
//
// Usage: node run.mjs [--runs N] [--size-mb MB] [--toolmux PATH] [--only toolmux|server-filesystem]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { REPO_ROOT, median, multibyteLines, peerEntry, readMemory, round, sleep, toolmuxVersion } from '../lib/common.mjs';

const PROTOCOL_VERSION = '2025-06-18'; // supported by both servers
const PAGE_CHARS = 20000;
const MB = 1e6;

function parseArgs(argv) {
  const options = {
    runs: 5,
    sizeMb: 10,
    toolmux: process.env.TOOLMUX_BIN ? path.resolve(process.env.TOOLMUX_BIN) : path.join(REPO_ROOT, 'build/toolmux'),
    only: null,
    timeoutMs: 120000,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--runs') options.runs = Number.parseInt(value(), 10);
    else if (arg === '--size-mb') options.sizeMb = Number(value());
    else if (arg === '--toolmux') options.toolmux = path.resolve(value());
    else if (arg === '--only') options.only = value();
    else if (arg === '--timeout-ms') options.timeoutMs = Number.parseInt(value(), 10);
    else if (arg === '--help' || arg === '-h') {
      console.log('Usage: node run.mjs [--runs N] [--size-mb MB] [--toolmux PATH] [--only toolmux|server-filesystem] [--timeout-ms MS]');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(options.runs) || options.runs < 1) throw new Error('--runs must be a positive integer');
  if (!(options.sizeMb > 0.1)) throw new Error('--size-mb must be more than 0.1');
  if (options.only && !['toolmux', 'server-filesystem'].includes(options.only)) throw new Error('--only: toolmux or server-filesystem');
  return options;
}

/** The peer from bench/startup's pinned install (same package, same version). */
function countChars(buffer) {
  // Every byte that is not a UTF-8 continuation byte (10xxxxxx) starts a character.
  let n = 0;
  for (let i = 0; i < buffer.length; i++) if ((buffer[i] & 0xc0) !== 0x80) n++;
  return n;
}


/**
 * A server process spoken to with newline-delimited JSON-RPC. Lines are split
 * on the newline byte and decoded whole, so a multi-byte character split
 * between two reads is never damaged.
 */
class RawServer {
  constructor(name, command, args, { timeoutMs }) {
    this.name = name;
    this.timeoutMs = timeoutMs;
    this.child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME ?? os.homedir() },
    });
    this.stderr = '';
    this.child.stderr.on('data', (c) => {
      if (this.stderr.length < 64 * 1024) this.stderr += c;
    });
    this.child.stdin.on('error', () => {});
    this.exited = null;
    this.exitPromise = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exited = { code, signal };
        resolve(this.exited);
      });
    });
    this.waiters = new Map(); // id -> (line: Buffer, at: bigint) => void
    let pending = [];
    this.child.stdout.on('data', (chunk) => {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0) break;
        pending.push(chunk.subarray(start, nl));
        const line = pending.length === 1 ? pending[0] : Buffer.concat(pending);
        pending = [];
        start = nl + 1;
        this.onLine(line, process.hrtime.bigint());
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    });
  }

  onLine(line, at) {
    if (line.length === 0) return;
    // The time was taken when the line was complete; parsing it is not counted.
    let message;
    try {
      message = JSON.parse(line.toString('utf8'));
    } catch {
      return;
    }
    if (message.id !== undefined && this.waiters.has(message.id)) {
      const waiter = this.waiters.get(message.id);
      this.waiters.delete(message.id);
      waiter(message, line.length, at);
    }
  }

  /** Sends a request; resolves { message, bytes, ns } where ns is the time from the write to the response line. */
  request(id, method, params) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: no ${method} response within ${this.timeoutMs} ms; stderr: ${this.stderr}`)),
        this.timeoutMs,
      );
      const t0 = process.hrtime.bigint();
      this.waiters.set(id, (message, bytes, at) => {
        clearTimeout(timer);
        resolve({ message, bytes, ns: Number(at - t0) });
      });
      this.exitPromise.then((e) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${JSON.stringify(e)}) before the ${method} response; stderr: ${this.stderr}`));
      });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method, params) {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) })}\n`);
  }

  async initialize() {
    const { message } = await this.request('init', 'initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'toolmux-offload-bench', version: '0.0.0' },
    });
    if (!message.result) throw new Error(`${this.name}: initialize failed: ${JSON.stringify(message)}`);
    this.notify('notifications/initialized');
  }

  async close() {
    this.child.stdin.end();
    const closed = await Promise.race([this.exitPromise, sleep(5000).then(() => null)]);
    if (!closed) {
      this.child.kill('SIGKILL');
      await this.exitPromise;
    }
    return this.exited;
  }
}

function callResult(server, response, what) {
  const { message } = response;
  if (!message.result) throw new Error(`${server.name}: ${what} failed: ${JSON.stringify(message).slice(0, 2000)}`);
  if (message.result.isError) throw new Error(`${server.name}: ${what} is an error: ${JSON.stringify(message.result).slice(0, 2000)}`);
  return message.result;
}

const NOTICE = /It is stored as result_id "([^"]+)"/;

async function runToolmux(env, options) {
  const dataDir = fs.mkdtempSync(path.join(env.work, 'data-'));
  const server = new RawServer('toolmux', options.toolmux, ['serve', '--root', env.root, '--catalog', env.catalog, '--data-dir', dataDir], options);
  try {
    await server.initialize();
    const idle = readMemory(server.child.pid);

    const call = await server.request(1, 'tools/call', { name: 'print_big', arguments: {} });
    const result = callResult(server, call, 'print_big');
    const text = result.content.map((b) => b.text).join('');
    const match = NOTICE.exec(text);
    if (!match) throw new Error(`toolmux: the result was not offloaded: ${text.slice(-600)}`);
    const id = match[1];
    const afterCall = readMemory(server.child.pid);

    const pages = [];
    let offset = 0;
    let readNs = 0;
    let readBytes = 0;
    for (let n = 2; ; n++) {
      const page = await server.request(n, 'tools/call', {
        name: 'read_tool_result',
        arguments: { result_id: id, offset, max_chars: PAGE_CHARS },
      });
      readNs += page.ns;
      readBytes += page.bytes;
      const r = callResult(server, page, `read_tool_result at offset ${offset}`);
      pages.push(Buffer.from(r.content[0].text, 'utf8'));
      if (r.structuredContent.next_offset === undefined) break;
      offset = r.structuredContent.next_offset;
    }
    const back = Buffer.concat(pages);
    if (!back.equals(env.text)) {
      throw new Error(`toolmux: the text read back differs from the file (${back.length} bytes, expected ${env.text.length})`);
    }
    const memory = readMemory(server.child.pid);
    return {
      callMs: call.ns / 1e6,
      responseBytes: call.bytes,
      readBackMs: readNs / 1e6,
      readBackPages: pages.length,
      readBackResponseBytes: readBytes,
      idleHwmKb: idle.hwmKb,
      callHwmKb: afterCall.hwmKb,
      callRssKb: afterCall.rssKb,
      ...memory,
    };
  } finally {
    const exit = await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (exit && exit.code !== 0) console.error(`toolmux exited ${JSON.stringify(exit)}; stderr: ${server.stderr.slice(-2000)}`);
  }
}

async function runPeer(env, options) {
  const server = new RawServer('server-filesystem', process.execPath, [env.peer.entry, env.root], options);
  try {
    await server.initialize();
    const idle = readMemory(server.child.pid);
    const call = await server.request(1, 'tools/call', { name: 'read_text_file', arguments: { path: env.file } });
    const result = callResult(server, call, 'read_text_file');
    const text = Buffer.from(result.content[0].text, 'utf8');
    if (!text.equals(env.text)) throw new Error(`server-filesystem: the text differs from the file (${text.length} bytes, expected ${env.text.length})`);
    const memory = readMemory(server.child.pid);
    return { callMs: call.ns / 1e6, responseBytes: call.bytes, idleHwmKb: idle.hwmKb, ...memory };
  } finally {
    await server.close();
  }
}


async function main() {
  const options = parseArgs(process.argv.slice(2));
  const servers = [];
  if (options.only !== 'server-filesystem') {
    if (!fs.existsSync(options.toolmux)) throw new Error(`toolmux binary not found at ${options.toolmux} (build it or pass --toolmux PATH)`);
    servers.push({ name: 'toolmux', version: await toolmuxVersion(options.toolmux), run: runToolmux });
  }
  let peer = null;
  if (options.only !== 'toolmux') {
    peer = peerEntry();
    servers.push({ name: 'server-filesystem', version: peer.version, run: runPeer });
  }

  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'toolmux-offload-bench-')));
  const root = path.join(work, 'root');
  fs.mkdirSync(root);
  const text = Buffer.from(multibyteLines(Math.round(options.sizeMb * MB)), 'utf8');
  const file = path.join(root, 'big.txt');
  fs.writeFileSync(file, text);
  const catalog = path.join(work, 'catalog.json');
  fs.writeFileSync(
    catalog,
    JSON.stringify(
      {
        tools: [
          {
            name: 'print_big',
            description: 'Prints big.txt, a UTF-8 text with 1- to 4-byte characters.',
            inputSchema: { type: 'object', properties: {}, additionalProperties: false },
            sideEffect: 'read_only',
            timeoutMs: 60000,
            command: { argv: ['cat', '--', 'big.txt'], cwd: root, envAllow: ['PATH'], maxOutputBytes: 4 * text.length },
          },
        ],
        // The defaults, written out: offload over 50000 bytes.
        results: { offload: true, offloadThresholdBytes: 50000 },
      },
      null,
      2,
    ),
  );
  const env = { work, root, file, text, catalog, peer };

  const samples = Object.fromEntries(servers.map((s) => [s.name, []]));
  try {
    // Warm-up (not counted): page cache, node's compile cache.
    for (const server of servers) await server.run(env, options);
    for (let i = 0; i < options.runs; i++) {
      const order = i % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) samples[server.name].push(await server.run(env, options));
      if (process.stderr.isTTY) process.stderr.write(`\rrun ${i + 1}/${options.runs}`);
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }

  const size = text.length;
  const results = {};
  for (const server of servers) {
    const runs = samples[server.name];
    const m = (f) => median(runs.map(f));
    const callMs = m((r) => r.callMs);
    const entry = {
      version: server.version,
      call_ms: round(callMs),
      call_mb_s: round(size / MB / (callMs / 1000)),
      call_ms_runs: runs.map((r) => round(r.callMs)),
      response_bytes: m((r) => r.responseBytes),
      idle_hwm_kb: m((r) => r.idleHwmKb),
      peak_hwm_kb: m((r) => r.hwmKb),
      rss_after_kb: m((r) => r.rssKb),
      peak_over_result: round((m((r) => r.hwmKb) * 1024) / size),
    };
    if (server.name === 'toolmux') {
      const readMs = m((r) => r.readBackMs);
      Object.assign(entry, {
        read_back_ms: round(readMs),
        read_back_mb_s: round(size / MB / (readMs / 1000)),
        read_back_ms_runs: runs.map((r) => round(r.readBackMs)),
        read_back_pages: m((r) => r.readBackPages),
        read_back_response_bytes: m((r) => r.readBackResponseBytes),
        hwm_after_call_kb: m((r) => r.callHwmKb),
        rss_after_call_kb: m((r) => r.callRssKb),
        peak_growth_over_result: round(((m((r) => r.hwmKb) - m((r) => r.idleHwmKb)) * 1024) / size),
        peak_under_3x_result: m((r) => r.hwmKb) * 1024 < 3 * size,
        peak_growth_under_3x_result: (m((r) => r.hwmKb) - m((r) => r.idleHwmKb)) * 1024 < 3 * size,
      });
    }
    results[server.name] = entry;
  }
  const summary = {
    bench: 'offload',
    runs: options.runs,
    result_bytes: size,
    result_chars: countChars(text),
    page_chars: PAGE_CHARS,
    node: process.version,
    host: { cpus: os.cpus().length, kernel: os.release() },
    servers: results,
  };

  const rows = [['server', 'version', 'call ms', 'call MB/s', 'read-back ms', 'read-back MB/s', 'response KiB', 'idle HWM MiB', 'peak HWM MiB', 'peak / result', '(peak - idle) / result']];
  for (const [name, r] of Object.entries(results)) {
    rows.push([
      name,
      String(r.version ?? '?'),
      r.call_ms.toFixed(1),
      r.call_mb_s.toFixed(1),
      r.read_back_ms === undefined ? '-' : r.read_back_ms.toFixed(1),
      r.read_back_mb_s === undefined ? '-' : r.read_back_mb_s.toFixed(1),
      (r.response_bytes / 1024).toFixed(1),
      (r.idle_hwm_kb / 1024).toFixed(1),
      (r.peak_hwm_kb / 1024).toFixed(1),
      `${r.peak_over_result.toFixed(2)}x`,
      `${(((r.peak_hwm_kb - r.idle_hwm_kb) * 1024) / size).toFixed(2)}x`,
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  console.log(`result: ${size} bytes (${(size / MB).toFixed(2)} MB), ${summary.result_chars} characters; medians of ${options.runs} runs`);
  for (const [i, row] of rows.entries()) {
    console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  if (results.toolmux) {
    const r = results.toolmux;
    const target = `the target of 3x the result size (${((3 * size) / 1024 / 1024).toFixed(1)} MiB)`;
    console.log(`toolmux peak memory ${(r.peak_hwm_kb / 1024).toFixed(1)} MiB: ${r.peak_under_3x_result ? 'under' : 'OVER'} ${target}`);
    console.log(
      `toolmux peak memory above its idle ${(r.idle_hwm_kb / 1024).toFixed(1)} MiB: ${((r.peak_hwm_kb - r.idle_hwm_kb) / 1024).toFixed(1)} MiB, ` +
        `${r.peak_growth_under_3x_result ? 'under' : 'OVER'} ${target}`,
    );
  }
  console.log(JSON.stringify(summary));
}

main().catch((error) => {
  console.error(error.stack ?? error.message ?? error);
  process.exit(1);
});
