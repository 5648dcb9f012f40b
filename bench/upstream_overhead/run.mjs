#!/usr/bin/env node
// Upstream relay overhead: the latency toolmux adds to a tools/call it relays
// to an upstream MCP server. A trivial tool is called on the upstream directly
// and through `toolmux serve --catalog <file naming that upstream>`, side by
// side in one run, with a lean raw JSON-RPC client (newline-delimited messages
// on the child's pipes, one call in flight, no SDK).
//
// Upstreams: toolmux's conformance example (`test_simple_text`, toolmux as a
// library) and @modelcontextprotocol/server-everything (`echo`, a Node.js
// server on the MCP SDK; the copy pinned in tests/e2e). Paths, per upstream:
//   direct        client -stdio-> upstream
//   stdio         client -stdio-> toolmux -stdio-> upstream
//   direct-http   client -HTTP->  upstream      (conformance example only)
//   http          client -HTTP->  toolmux -stdio-> upstream
// Per repetition, per upstream, the paths take turns (the order rotates each
// repetition); each path gets fresh processes, a warm-up, then N sequential
// calls timed one by one. Added = through − direct within a repetition; the
// report gives medians of the repetitions. Prints a table and one JSON line
// (starting {"bench":"upstream_overhead"). See README.md.
//
// Usage: node run.mjs [--build DIR] [--calls N] [--warmup N] [--reps N]
//                     [--upstreams conformance,everything]
//                     [--paths direct,stdio,direct-http,http]
//                     [--pin CLIENT_CORES:SERVER_CORES]

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseArgsOf } from 'node:util';

import { REPO_ROOT, median, round, sleep, stdioClient, toolmuxVersion } from '../lib/common.mjs';

const PROTOCOL_VERSION = '2025-06-18';
const PATHS = ['direct', 'stdio', 'direct-http', 'http'];
const EVERYTHING_DIR = path.join(REPO_ROOT, 'tests/e2e/node_modules/@modelcontextprotocol/server-everything');

function parseArgs(argv) {
  const { values } = parseArgsOf({
    args: argv,
    options: {
      build: { type: 'string', default: path.join(REPO_ROOT, 'build') },
      calls: { type: 'string', default: '5000' },
      warmup: { type: 'string', default: '500' },
      reps: { type: 'string', default: '3' },
      upstreams: { type: 'string', default: 'conformance,everything' },
      paths: { type: 'string', default: 'direct,stdio,direct-http,http' },
      pin: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(20, 24).join('\n'));
    process.exit(0);
  }
  const count = (name, least = 1) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < least) throw new Error(`--${name} takes a whole number, at least ${least}`);
    return n;
  };
  const list = (v) => v.split(',').filter(Boolean);
  let pin = null;
  if (values.pin !== undefined) {
    const [client, servers] = values.pin.split(':');
    if (!client || !servers) throw new Error('--pin takes CLIENT_CORES:SERVER_CORES, e.g. 1:0');
    pin = { client, servers };
  }
  return {
    build: path.resolve(values.build),
    calls: count('calls'),
    warmup: count('warmup', 0),
    reps: count('reps'),
    upstreams: list(values.upstreams),
    paths: list(values.paths).map((p) => {
      if (!PATHS.includes(p)) throw new Error(`--paths: unknown path ${p} (${PATHS.join(', ')})`);
      return p;
    }),
    pin,
  };
}

/** The upstreams: how to start each over stdio (and over HTTP), and its trivial call. */
function upstreams(options) {
  const conformance = path.join(options.build, 'examples/conformance-server/toolmux-conformance-server');
  const all = {
    conformance: {
      name: 'conformance',
      need: conformance,
      command: conformance,
      args: ['serve'],
      cwd: undefined,
      httpArgs: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
      call: { name: 'test_simple_text', arguments: {} },
      expect: 'This is a simple text response for testing.',
    },
    everything: {
      name: 'everything',
      need: path.join(EVERYTHING_DIR, 'dist/index.js'),
      command: process.execPath,
      args: ['dist/index.js', 'stdio'],
      cwd: EVERYTHING_DIR,
      httpArgs: null,
      call: { name: 'echo', arguments: { message: 'hi' } },
      expect: 'Echo: hi',
    },
  };
  return options.upstreams.map((name) => {
    const u = all[name];
    if (!u) throw new Error(`--upstreams: unknown upstream ${name} (conformance, everything)`);
    if (!fs.existsSync(u.need)) {
      throw new Error(name === 'everything'
        ? `${u.need} is missing: run scripts/install-node-deps.sh tests/e2e`
        : `${u.need} is missing: build the target toolmux-conformance-server`);
    }
    return u;
  });
}

/** Runs a server, on the server cores when pinning; stderr to `logFile`. */
function launch(options, command, args, { cwd, logFile, stdin = 'pipe', stdout = 'pipe' }) {
  const log = fs.openSync(logFile, 'w');
  const pinned = options.pin ? ['taskset', ['-c', options.pin.servers, command, ...args]] : [command, args];
  // taskset execs the server, so the child's pid is the server's.
  const child = spawn(pinned[0], pinned[1], { cwd, stdio: [stdin, stdout, log], env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  fs.closeSync(log);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin?.end();
  const timer = setTimeout(() => child.kill('SIGTERM'), 2000);
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await child.exited;
  clearTimeout(timer);
  clearTimeout(killer);
}

/** A raw HTTP JSON-RPC client on one keep-alive connection. */
function httpClient(url) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  let session = null;
  const post = (text) => new Promise((resolve, reject) => {
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Content-Length': Buffer.byteLength(text),
      'MCP-Protocol-Version': PROTOCOL_VERSION,
    };
    if (session) headers['Mcp-Session-Id'] = session;
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers, setNoDelay: true },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => {
          if (res.headers['mcp-session-id']) session = res.headers['mcp-session-id'];
          if (res.statusCode === 202) return resolve(null);
          if (res.statusCode !== 200) return resolve({ error: { message: `HTTP ${res.statusCode}: ${body}` } });
          resolve(JSON.parse(body));
        });
      });
    req.on('error', reject);
    req.end(text);
  });
  return {
    request: (text) => post(text),
    notify: (text) => post(text),
    close: () => agent.destroy(),
  };
}

const initialize = (id) => JSON.stringify({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'upstream-overhead-bench', version: '0' } },
}) + '\n';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';

/** Waits for the `serving` log line of an HTTP server: its URL. */
async function servingUrl(child, logFile) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const text = fs.readFileSync(logFile, 'utf8');
    const line = text.split('\n').find((l) => l.includes('"serving"'));
    if (line) return JSON.parse(line).url;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before serving:\n${text}`);
    if (Date.now() > deadline) throw new Error(`did not say "serving" within 30 s:\n${text}`);
    await sleep(20);
  }
}

/** Starts one path for one upstream; resolves to { client, stop() }. */
async function open(options, upstream, pathName, dir) {
  const toolmux = path.join(options.build, 'toolmux');
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(catalog, JSON.stringify({
    tools: [],
    // The trivial tool alone, under its own name (the conformance example is toolmux too:
    // its built-in tools would collide with toolmux's own).
    upstreams: {
      [upstream.name]: {
        command: upstream.command,
        args: upstream.args,
        ...(upstream.cwd ? { cwd: upstream.cwd } : {}),
        prefix: '',
        include: [upstream.call.name],
      },
    },
  }));
  const data = path.join(dir, `data-${pathName}`);
  const logFile = path.join(dir, `${pathName}.log`);
  let child;
  let client;
  if (pathName === 'direct') {
    child = launch(options, upstream.command, upstream.args, { cwd: upstream.cwd, logFile });
    client = stdioClient(child, child.exited);
  } else if (pathName === 'stdio') {
    child = launch(options, toolmux, ['serve', '--catalog', catalog, '--root', dir, '--data-dir', data], { logFile });
    client = stdioClient(child, child.exited);
  } else {
    const args = pathName === 'http'
      ? ['serve', '--catalog', catalog, '--root', dir, '--http', '127.0.0.1:0', '--data-dir', data]
      : upstream.httpArgs(data);
    child = launch(options, pathName === 'http' ? toolmux : upstream.command, args, { cwd: upstream.cwd, logFile, stdin: 'ignore', stdout: 'ignore' });
    client = httpClient(await servingUrl(child, logFile));
  }
  const init = await client.request(initialize(0), 0);
  if (!init?.result) throw new Error(`${upstream.name} ${pathName}: initialize failed: ${JSON.stringify(init)}\n${fs.readFileSync(logFile, 'utf8')}`);
  await client.notify(INITIALIZED);
  return {
    client,
    async stop() {
      client.close?.();
      if (pathName === 'direct' || pathName === 'stdio') await stop(child);
      else {
        child.kill('SIGTERM');
        await child.exited;
      }
    },
  };
}

/** `count` sequential calls; returns each one's latency in microseconds. */
async function calls(client, upstream, firstId, count) {
  const params = JSON.stringify(upstream.call);
  const latencies = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const id = firstId + i;
    const text = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}\n`;
    const t0 = process.hrtime.bigint();
    const response = await client.request(text, id);
    latencies[i] = Number(process.hrtime.bigint() - t0) / 1000;
    const content = response?.result?.content;
    if (!content || response.result.isError || content[0]?.text !== upstream.expect) {
      throw new Error(`${upstream.name}: call ${id} answered ${JSON.stringify(response)}`);
    }
  }
  return latencies;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function measure(options, list, log) {
  const runs = {}; // upstream -> path -> [{p50, p99, mean}]
  for (const u of list) {
    const paths = options.paths.filter((p) => (p === 'direct-http' ? u.httpArgs : true));
    runs[u.name] = Object.fromEntries(paths.map((p) => [p, []]));
  }
  for (let rep = 0; rep < options.reps; rep++) {
    for (const u of list) {
      const paths = Object.keys(runs[u.name]);
      const order = paths.map((_, i) => paths[(i + rep) % paths.length]);
      for (const p of order) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `upstream-overhead-${u.name}-${p}-`));
        const handle = await open(options, u, p, dir);
        try {
          await calls(handle.client, u, 1, options.warmup);
          const latencies = (await calls(handle.client, u, 1 + options.warmup, options.calls)).sort();
          const r = {
            p50: percentile(latencies, 50),
            p99: percentile(latencies, 99),
            mean: latencies.reduce((a, b) => a + b, 0) / latencies.length,
          };
          runs[u.name][p].push(r);
          log(`rep ${rep + 1} ${u.name.padEnd(11)} ${p.padEnd(11)} p50 ${(r.p50 / 1000).toFixed(3)} ms, ` +
            `p99 ${(r.p99 / 1000).toFixed(3)} ms, mean ${(r.mean / 1000).toFixed(3)} ms`);
        } finally {
          await handle.stop();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  }
  return runs;
}

/** Medians of the repetitions, and through − direct per repetition (then its median). */
function summarize(runs) {
  const out = {};
  const baseOf = { stdio: 'direct', http: 'direct-http' };
  for (const [u, byPath] of Object.entries(runs)) {
    out[u] = {};
    for (const [p, rs] of Object.entries(byPath)) {
      const entry = {
        p50Ms: round(median(rs.map((r) => r.p50)) / 1000, 3),
        p99Ms: round(median(rs.map((r) => r.p99)) / 1000, 3),
        runs: rs.map((r) => ({ p50Us: round(r.p50, 1), p99Us: round(r.p99, 1) })),
      };
      // Over HTTP, compare with the upstream over HTTP when it has that path, else over stdio.
      const base = byPath[baseOf[p]] ? baseOf[p] : byPath.direct && p !== 'direct' && p !== 'direct-http' ? 'direct' : null;
      if (base) {
        const b = byPath[base];
        entry.vs = base;
        entry.addedP50Ms = round(median(rs.map((r, i) => r.p50 - b[i].p50)) / 1000, 3);
        entry.addedP99Ms = round(median(rs.map((r, i) => r.p99 - b[i].p99)) / 1000, 3);
        entry.ratioP50 = round(median(rs.map((r, i) => r.p50 / b[i].p50)), 2);
      }
      out[u][p] = entry;
    }
  }
  return out;
}

function loadAverage() {
  return os.loadavg().map((x) => round(x, 2));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const list = upstreams(options);
  const toolmux = path.join(options.build, 'toolmux');
  if (!fs.existsSync(toolmux)) throw new Error(`${toolmux} is missing: build the target toolmux`);
  if (options.pin) execFileSync('taskset', ['-a', '-pc', options.pin.client, String(process.pid)], { stdio: 'ignore' });
  const log = (line) => process.stderr.write(`${line}\n`);
  const loadBefore = loadAverage();
  const samples = [];
  const sampler = setInterval(() => samples.push(os.loadavg()[0]), 5000);
  let runs;
  try {
    runs = await measure(options, list, log);
  } finally {
    clearInterval(sampler);
  }
  const table = summarize(runs);

  const pinText = options.pin ? `client on core ${options.pin.client}, servers on core ${options.pin.servers}` : 'not pinned';
  console.log(`\nmedians of ${options.reps} repetitions of ${options.calls} sequential calls (after ${options.warmup} warm-up), ${pinText}`);
  console.log('upstream     path          p50 ms   p99 ms   added p50 ms  added p99 ms  p50 ratio  vs');
  for (const [u, byPath] of Object.entries(table)) {
    for (const [p, t] of Object.entries(byPath)) {
      const added = (x) => (x === undefined ? '-' : (x >= 0 ? '+' : '') + x.toFixed(3));
      console.log(`${u.padEnd(12)} ${p.padEnd(11)} ${t.p50Ms.toFixed(3).padStart(8)} ${t.p99Ms.toFixed(3).padStart(8)} ` +
        `${added(t.addedP50Ms).padStart(14)} ${added(t.addedP99Ms).padStart(13)} ${(t.ratioP50 === undefined ? '-' : `${t.ratioP50}x`).padStart(10)}  ${t.vs === 'direct' && p === 'http' ? 'direct (stdio: includes HTTP itself)' : t.vs ?? ''}`);
    }
  }
  const verdicts = [];
  for (const [u, byPath] of Object.entries(table)) {
    for (const p of ['stdio', 'http']) {
      const t = byPath[p];
      // Through HTTP beside the upstream over stdio adds the HTTP transport itself: not a relay figure.
      if (t?.addedP50Ms !== undefined && !(p === 'http' && t.vs === 'direct')) verdicts.push(`${u} ${p}: +${t.addedP50Ms.toFixed(3)} ms (${t.addedP50Ms < 0.5 ? 'met' : 'MISSED'})`);
    }
  }
  console.log(`\ntarget: under 0.5 ms added at p50. ${verdicts.join('; ')}`);
  const loadDuring = samples.length ? samples : [loadBefore[0]];
  console.log(`load average: ${loadBefore.join(' ')} before; 1-minute during: min ${Math.min(...loadDuring).toFixed(2)}, ` +
    `median ${median(loadDuring).toFixed(2)}, max ${Math.max(...loadDuring).toFixed(2)}`);
  console.log(JSON.stringify({
    bench: 'upstream_overhead',
    toolmux: await toolmuxVersion(toolmux),
    node: process.version,
    host: { cpus: os.cpus().length, kernel: os.release() },
    calls: options.calls,
    warmup: options.warmup,
    reps: options.reps,
    pin: options.pin,
    load: { before: loadBefore, during: { min: round(Math.min(...loadDuring)), median: round(median(loadDuring)), max: round(Math.max(...loadDuring)) } },
    results: table,
  }));
}

main().catch((error) => {
  console.error(error.stack ?? String(error));
  process.exit(1);
});
