#!/usr/bin/env node
// HTTP benchmark: tools/call of a trivial tool over Streamable HTTP, toolmux
// (its conformance example, which serves `test_simple_text` natively) beside a
// server on @modelcontextprotocol/sdk (sdk_server.mjs) and a bare cpp-httplib
// endpoint (bare_endpoint.cpp, the ceiling), in the same run. toolmux runs
// twice: in a legacy session (`toolmux`, 2025-06-18, as the others) and with
// the 2026-07-28 protocol's stateless requests (`toolmux_modern`: no session,
// each POST carrying its _meta and the MCP-Protocol-Version, Mcp-Method and
// Mcp-Name headers), the same binary and tool. Not run unless --only names
// them: `toolmux_token` (the legacy session with a static bearer token),
// `toolmux_token_long` (a static token as long as the JWT: cpp-httplib's
// reading of a request head costs per byte, so this one isolates what checking
// the JWT costs from what its length costs) and `toolmux_jwt` (with an OAuth
// JWT access token, RS256, checked against a local issuer's JWKS:
// docs/authorization.md), and `toolmux_traced` (the legacy session with
// tracing on: every span exported over OTLP/HTTP to a receiver in this
// process that reads and discards each request; docs/traces.md).
//
// Each server runs pinned to core 0, wrk (Debian's) to core 1. Per
// repetition, per concurrency (1, 16, 64 connections; wrk threads: 1 for one
// connection, 2 otherwise), the three servers take turns (the order rotates
// each repetition): a warm-up wrk run, then the measured one. Each records
// req/s, p50/p99 latency, non-2xx answers, socket errors, wrong answers, and,
// from `ss` near the end of the run, how many bytes the server sent on each of
// its connections (every connection must have been served). Then memory:
// each server fresh, VmRSS/VmHWM after 100,000 and after 1,000,000 calls at 16
// connections (a server that dies meanwhile is recorded with its last
// reading). Prints a table and one JSON line (starting {"bench":"http").
// See README.md.
//
// Usage: node run.mjs [--build DIR] [--reps N] [--duration S] [--warmup S]
//                     [--connections 1,16,64] [--memory-calls 100000,1000000]
//                     [--memory-seconds S]
//                     [--only bare,toolmux,toolmux_modern,sdk,toolmux_token,toolmux_token_long,toolmux_jwt,toolmux_traced]
//                     [--no-memory] [--instructions N1,N2]
//
// --instructions N1,N2: instead of the timed runs, each server runs under
// valgrind's callgrind twice, answering N1 and then N2 calls per wrk thread
// (16 connections, 2 threads) after its session opens; the instructions one
// call costs are the difference of the two totals over the difference of the
// calls (start-up and shutdown cancel out). Counted instructions do not depend
// on the machine's load. Needs valgrind. Callgrind runs the server's threads
// one at a time and does not have every instruction a processor has (OpenSSL's
// SHA-256 there takes its portable code, not the SHA extensions).
// KEEP_CALLGRIND=1 keeps each callgrind output as /tmp/keep-<server>-<N>.out,
// for callgrind_annotate.

import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { REPO_ROOT, median, readMemory, round, sleep } from '../lib/common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PROTOCOL_VERSION = '2025-06-18'; // spoken by all three
const SERVER_CORE = '0';
const LOAD_CORE = '1';
const TOOL_TEXT = 'This is a simple text response for testing.';

function parseArgs(argv) {
  const options = {
    build: path.join(REPO_ROOT, 'build'),
    reps: 3,
    duration: 10,
    warmup: 2,
    connections: [1, 16, 64],
    memoryCalls: [100000, 1000000],
    memorySeconds: 1200,
    only: ['bare', 'toolmux', 'toolmux_modern', 'sdk'],
    memory: true,
  };
  const list = (v) => v.split(',').filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--build') options.build = path.resolve(value());
    else if (arg === '--reps') options.reps = Number.parseInt(value(), 10);
    else if (arg === '--duration') options.duration = Number.parseInt(value(), 10);
    else if (arg === '--warmup') options.warmup = Number.parseInt(value(), 10);
    else if (arg === '--connections') options.connections = list(value()).map(Number);
    else if (arg === '--memory-calls') options.memoryCalls = list(value()).map(Number);
    else if (arg === '--memory-seconds') options.memorySeconds = Number.parseInt(value(), 10);
    else if (arg === '--only') options.only = list(value());
    else if (arg === '--no-memory') options.memory = false;
    else if (arg === '--instructions') options.instructions = list(value()).map(Number);
    else if (arg === '--help' || arg === '-h') {
      console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(18, 21).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return options;
}

function servers(options) {
  const toolmux = path.join(options.build, 'examples/conformance-server/toolmux-conformance-server');
  const bare = path.join(options.build, 'bench/http/bare_endpoint');
  const sdkEntry = path.join(HERE, 'sdk_server.mjs');
  const need = {
    toolmux: [toolmux],
    toolmux_modern: [toolmux],
    bare: [bare],
    sdk: [path.join(HERE, 'node_modules/@modelcontextprotocol/sdk/package.json')],
  };
  for (const name of options.only) {
    for (const file of need[name] ?? []) {
      if (fs.existsSync(file)) continue;
      throw new Error(name === 'sdk'
        ? 'bench/http/node_modules is missing: run scripts/install-node-deps.sh bench/http'
        : `${file} is missing: build the targets toolmux-conformance-server and bare_endpoint`);
    }
  }
  const all = {
    bare: { name: 'bare', command: bare, args: () => ['--port', '0'] },
    toolmux: {
      name: 'toolmux',
      command: toolmux,
      args: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
    },
    toolmux_modern: {
      name: 'toolmux_modern',
      modern: true,
      command: toolmux,
      args: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
    },
    sdk: { name: 'sdk', command: process.execPath, args: () => [sdkEntry, '--port', '0'] },
    // The legacy session again, with a static bearer token on every request.
    toolmux_token: {
      name: 'toolmux_token',
      command: toolmux,
      auth: 'token',
      args: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
    },
    // The same with a static token as long as toolmux_jwt's JWT.
    toolmux_token_long: {
      name: 'toolmux_token_long',
      command: toolmux,
      auth: 'token_long',
      args: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
    },
    // The legacy session with every span exported to a local OTLP receiver.
    toolmux_traced: {
      name: 'toolmux_traced',
      command: toolmux,
      traced: true,
      args: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
    },
    // The same with an OAuth JWT access token, checked against a local issuer.
    toolmux_jwt: {
      name: 'toolmux_jwt',
      command: toolmux,
      auth: 'jwt',
      args: (dataDir) => ['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir],
    },
  };
  return options.only.map((name) => {
    if (!all[name]) throw new Error(`--only: unknown server ${name} (bare, toolmux, toolmux_modern, sdk, toolmux_token, toolmux_token_long, toolmux_jwt, toolmux_traced)`);
    return all[name];
  });
}

let sinkUrl;
/** A local OTLP/HTTP receiver that reads each export and answers 200 (started once). */
async function otlpSink() {
  if (sinkUrl) return sinkUrl;
  const sink = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  sink.unref();
  sinkUrl = `http://127.0.0.1:${sink.address().port}`;
  return sinkUrl;
}

/** Starts `server` on core 0; resolves to { child, pid, url, port, stop() }. */
async function start(server) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `http-bench-${server.name}-`));
  const logFile = path.join(dir, 'stderr.log');
  const log = fs.openSync(logFile, 'w');
  // taskset execs the server, so the child's pid is the server's.
  const extra = [];
  if (server.auth === 'token' || server.auth === 'token_long') {
    const file = path.join(dir, 'tokens');
    fs.writeFileSync(file, `bench=${await staticToken(server)}\n`, { mode: 0o600 });
    extra.push('--tokens-file', file);
  } else if (server.auth === 'jwt') {
    const issuer = await localIssuer();
    extra.push('--auth-issuer', issuer.url, '--resource-url', JWT_RESOURCE);
  }
  if (server.traced) extra.push('--otlp-endpoint', await otlpSink());
  const command = server.callgrind
    ? ['valgrind', '--tool=callgrind', `--callgrind-out-file=${server.callgrind}`, server.command]
    : ['taskset', '-c', SERVER_CORE, server.command];
  const child = spawn(command[0], [...command.slice(1), ...server.args(path.join(dir, 'data')), ...extra], {
    stdio: ['ignore', 'ignore', log],
  });
  fs.closeSync(log);
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
  const deadline = Date.now() + (server.callgrind ? 120000 : 15000);
  for (;;) {
    const text = fs.readFileSync(logFile, 'utf8');
    const line = text.split('\n').find((l) => l.includes('"serving"'));
    if (line) {
      const url = JSON.parse(line).url;
      return {
        child,
        pid: child.pid,
        url,
        port: Number(new URL(url).port),
        exit,
        logFile,
        async stop() {
          if (!exited) {
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
            await exit;
            clearTimeout(timer);
          }
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (exited) throw new Error(`${server.name} exited (${JSON.stringify(exited)}) before serving:\n${text}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${server.name} did not say "serving" within 15 s:\n${text}`);
    }
    await sleep(50);
  }
}

const STATIC_TOKEN = 'bench-static-token-0123456789abcdef';
// Not the server's own URL (its port is chosen at start): the audience the
// token names and the server is told is its resource, which is all it checks.
const JWT_RESOURCE = 'http://127.0.0.1:1/mcp';
let issuerPromise = null;

/**
 * An OAuth authorization server on loopback, started once: its metadata
 * (OpenID discovery) and JWKS, and one RS256 access token for JWT_RESOURCE,
 * valid for a day, signed with node:crypto.
 */
function localIssuer() {
  issuerPromise ??= (async () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'RS256' };
    const server = http.createServer((req, res) => {
      const url = `http://127.0.0.1:${server.address().port}`;
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
      else if (req.url === '/jwks') res.end(JSON.stringify({ keys: [jwk] }));
      else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.unref();
    const url = `http://127.0.0.1:${server.address().port}`;
    const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const input = `${encode({ alg: 'RS256', typ: 'at+jwt', kid: 'bench' })}.${encode({
      iss: url, aud: JWT_RESOURCE, sub: 'bench', scope: 'tools', iat: now, exp: now + 86400,
    })}`;
    const token = `${input}.${crypto.sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    return { url, token };
  })();
  return issuerPromise;
}

/** The static token of `server`: short, or as long as the JWT. */
async function staticToken(server) {
  if (server.auth !== 'token_long') return STATIC_TOKEN;
  const { token } = await localIssuer();
  return (STATIC_TOKEN + '0123456789abcdef'.repeat(Math.ceil(token.length / 16))).slice(0, token.length);
}

/** The Authorization header `server` needs, or {}. */
async function authHeaders(server) {
  if (server.auth === 'token' || server.auth === 'token_long') {
    return { Authorization: `Bearer ${await staticToken(server)}` };
  }
  if (server.auth === 'jwt') return { Authorization: `Bearer ${(await localIssuer()).token}` };
  return {};
}

/** One POST on a connection of its own (closed after it). */
function post(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Content-Length': Buffer.byteLength(text),
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const MODERN_VERSION = '2026-07-28';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'http-bench', version: '0' },
};

/**
 * initialize + notifications/initialized, then one checked tools/call: the
 * session id. For a 2026-07-28 server, no session: one checked stateless
 * tools/call, and the "session" is the word "modern" (tools_call.lua then
 * sends stateless requests).
 */
async function openSession(url, modern = false, auth = {}) {
  if (modern) {
    const call = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text', arguments: {}, _meta: MODERN_META } },
      { 'MCP-Protocol-Version': MODERN_VERSION, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'test_simple_text', ...auth },
    );
    if (call.status !== 200 || !call.body.includes(TOOL_TEXT) || call.headers['mcp-session-id']) {
      throw new Error(`modern tools/call: ${call.status} ${JSON.stringify(call.headers)} ${call.body}`);
    }
    return 'modern';
  }
  const init = await post(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'http-bench', version: '0' } },
  }, auth);
  const session = init.headers['mcp-session-id'];
  if (init.status !== 200 || !session) throw new Error(`initialize: ${init.status} ${init.body}`);
  const headers = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': PROTOCOL_VERSION, ...auth };
  const ready = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (ready.status !== 202) throw new Error(`notifications/initialized: ${ready.status} ${ready.body}`);
  const call = await post(
    url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } },
    headers,
  );
  if (call.status !== 200 || !call.body.includes(TOOL_TEXT)) throw new Error(`tools/call: ${call.status} ${call.body}`);
  return session;
}

function run(command, args) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 64 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

/** Bytes the server has sent on each of its established connections (ss -ti). */
async function bytesPerConnection(port) {
  const out = await run('ss', ['-tinH', 'state', 'established', `( sport = :${port} )`]);
  return [...out.matchAll(/bytes_sent:(\d+)/g)].map((m) => Number(m[1]));
}

/**
 * Runs wrk on core 1. With `limit`, stops once every thread has that many
 * answers (wrk's main thread sleeps the whole -d otherwise, so it is
 * interrupted). With `sampleAtS`, reads the server's connections then. With
 * `server`, stops when the server exits (result.serverDied).
 */
function wrk({ url, session, connections, seconds, limit = 0, port, sampleAtS, server, token = '' }) {
  const threads = connections === 1 ? 1 : 2;
  const args = ['-c', LOAD_CORE, 'wrk', '-t', String(threads), '-c', String(connections), '-d', `${seconds}s`,
    '--latency', '-s', path.join(HERE, 'tools_call.lua'), url, '--', session, String(limit), token];
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let stopped = 0;
    let sample = null;
    const timer = sampleAtS
      ? setTimeout(() => (sample = bytesPerConnection(port).catch(() => null)), sampleAtS * 1000)
      : null;
    child.stdout.on('data', (c) => {
      out += c;
      const reached = (out.match(/^limit reached$/gm) ?? []).length;
      if (limit && reached === threads && stopped === 0) {
        stopped = 1;
        child.kill('SIGINT');
      }
    });
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    let serverDied = false;
    server?.exit.then(() => {
      serverDied = true;
      child.kill('SIGINT');
    });
    child.on('exit', async (code) => {
      if (timer) clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) return reject(new Error(`wrk exited ${code} without a result:\n${out}\n${err}`));
      const result = JSON.parse(line.slice('RESULT '.length));
      result.connections = connections;
      result.rps = result.requests / (result.duration_us / 1e6);
      result.perConnectionBytes = sample ? await sample : null;
      result.serverDied = serverDied;
      resolve(result);
    });
  });
}

/** Per-connection service, from the ss sample: were all connections served? */
function connectionCheck(result) {
  const bytes = result.perConnectionBytes;
  if (!bytes) return { seen: null, served: null, minShare: null };
  const served = bytes.filter((b) => b > 0).length;
  const mean = bytes.reduce((a, b) => a + b, 0) / (bytes.length || 1);
  return { seen: bytes.length, served, minShare: bytes.length ? round(Math.min(...bytes) / mean, 2) : null };
}

async function measureThroughput(list, options, log) {
  const results = {}; // server -> connections -> [runs]
  for (const s of list) results[s.name] = Object.fromEntries(options.connections.map((c) => [c, []]));
  for (let rep = 0; rep < options.reps; rep++) {
    const live = [];
    for (const s of list) {
      const handle = await start(s);
      const auth = await authHeaders(s);
      handle.session = await openSession(handle.url, s.modern, auth);
      handle.token = auth.Authorization?.slice('Bearer '.length) ?? '';
      live.push({ server: s, handle });
    }
    try {
      for (const connections of options.connections) {
        // Rotate who goes first, so that a change in load hits all alike.
        const order = live.map((_, i) => live[(i + rep) % live.length]);
        for (const { server, handle } of order) {
          const common = { url: handle.url, session: handle.session, connections, port: handle.port, token: handle.token };
          await wrk({ ...common, seconds: options.warmup });
          const r = await wrk({ ...common, seconds: options.duration, sampleAtS: Math.max(options.duration - 1.5, options.duration / 2) });
          r.check = connectionCheck(r);
          results[server.name][connections].push(r);
          log(`rep ${rep + 1} ${server.name.padEnd(14)} c=${String(connections).padStart(2)}: ` +
            `${Math.round(r.rps)} req/s, p50 ${(r.latency_us.p50 / 1000).toFixed(2)} ms, ` +
            `p99 ${(r.latency_us.p99 / 1000).toFixed(2)} ms, non-2xx ${r.errors.status}, wrong ${r.wrong}, ` +
            `socket errors ${r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout}, ` +
            `connections served ${r.check.served}/${r.check.seen} (min share ${r.check.minShare})` +
            (r.wrong ? `; first wrong answer: ${r.first_wrong}` : ''));
        }
      }
    } finally {
      for (const { handle } of live) await handle.stop();
    }
  }
  return results;
}

async function measureMemory(list, options, log) {
  const out = {};
  for (const s of list) {
    const handle = await start(s);
    try {
      const auth = await authHeaders(s);
      const session = await openSession(handle.url, s.modern, auth);
      const token = auth.Authorization?.slice('Bearer '.length) ?? '';
      const points = [];
      let calls = 0;
      // Read every few seconds too: a server that dies (out of memory) leaves its last reading.
      let last = null;
      const poll = setInterval(() => {
        try {
          const now = readMemory(handle.pid);
          if (now.rssKb !== null) last = now; // a dead (zombie) process has none
        } catch {}
      }, 2000);
      try {
        for (const target of options.memoryCalls) {
          const threads = 2;
          const perThread = Math.ceil((target - calls) / threads);
          const r = await wrk({
            url: handle.url,
            session,
            connections: 16,
            seconds: options.memorySeconds,
            limit: perThread,
            port: handle.port,
            server: handle,
            token,
          });
          calls += r.requests;
          if (r.serverDied) {
            const why = fs.readFileSync(handle.logFile, 'utf8').match(/FATAL ERROR: [^\n]*/)?.[0] ?? 'exited';
            points.push({ calls, died: why, rssKb: last?.rssKb ?? null, hwmKb: last?.hwmKb ?? null });
            log(`memory ${s.name.padEnd(7)} died after about ${calls} calls (${why}); last read VmRSS ` +
              `${((last?.rssKb ?? 0) / 1024).toFixed(1)} MB`);
            break;
          }
          const memory = readMemory(handle.pid);
          points.push({ calls, rps: Math.round(r.rps), ...memory, errors: r.errors, wrong: r.wrong });
          log(`memory ${s.name.padEnd(7)} after ${calls} calls: VmRSS ${(memory.rssKb / 1024).toFixed(1)} MB, ` +
            `VmHWM ${(memory.hwmKb / 1024).toFixed(1)} MB (${Math.round(r.rps)} req/s)`);
        }
      } finally {
        clearInterval(poll);
      }
      out[s.name] = points;
    } finally {
      await handle.stop();
    }
  }
  return out;
}

function summarize(results) {
  const table = {};
  for (const [name, byConnections] of Object.entries(results)) {
    table[name] = {};
    for (const [c, runs] of Object.entries(byConnections)) {
      table[name][c] = {
        rps: round(median(runs.map((r) => r.rps)), 0),
        p50Ms: round(median(runs.map((r) => r.latency_us.p50)) / 1000, 3),
        p99Ms: round(median(runs.map((r) => r.latency_us.p99)) / 1000, 3),
        non2xx: runs.reduce((a, r) => a + r.errors.status, 0),
        socketErrors: runs.reduce((a, r) => a + r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout, 0),
        wrong: runs.reduce((a, r) => a + r.wrong, 0),
        allConnectionsServed: runs.every((r) => r.check.seen === Number(c) && r.check.served === Number(c)),
        served: runs.map((r) => `${r.check.served}/${r.check.seen}`).join(' '),
        minShare: Math.min(...runs.map((r) => r.check.minShare ?? 0)),
        runs: runs.map((r) => ({ rps: Math.round(r.rps), p50Us: r.latency_us.p50, p99Us: r.latency_us.p99 })),
      };
    }
  }
  return table;
}

function printReport(table, memory, load) {
  const names = Object.keys(table);
  const cs = Object.keys(table[names[0]]);
  console.log('\nmedians of the repetitions (server on core 0, wrk on core 1)');
  console.log('server         conns   req/s    p50 ms   p99 ms  non-2xx  sock-err  wrong  all conns served');
  for (const name of names) {
    for (const c of cs) {
      const t = table[name][c];
      console.log(`${name.padEnd(14)} ${String(c).padStart(5)} ${String(t.rps).padStart(7)} ${t.p50Ms.toFixed(3).padStart(9)} ` +
        `${t.p99Ms.toFixed(3).padStart(8)} ${String(t.non2xx).padStart(8)} ${String(t.socketErrors).padStart(9)} ` +
        `${String(t.wrong).padStart(6)}  ${t.allConnectionsServed ? 'yes' : `NO (${t.served})`} (min share ${t.minShare})`);
    }
  }
  const ratios = {};
  if (table.toolmux) {
    console.log('\ntargets: toolmux >= 85% of bare req/s, >= 5x sdk req/s, p99 <= 1.5x bare p99 (issue 12)');
    for (const c of cs) {
      const t = table.toolmux[c];
      const r = {};
      if (table.bare) {
        r.ofBare = round(t.rps / table.bare[c].rps, 2);
        r.p99VsBare = round(t.p99Ms / table.bare[c].p99Ms, 2);
      }
      if (table.sdk) r.timesSdk = round(t.rps / table.sdk[c].rps, 2);
      ratios[c] = r;
      const verdict = (x, ok) => (x === undefined ? '-' : `${x} (${ok(x) ? 'met' : 'MISSED'})`);
      console.log(`c=${String(c).padStart(2)}: toolmux/bare ${verdict(r.ofBare, (x) => x >= 0.85)}, ` +
        `toolmux/sdk ${verdict(r.timesSdk, (x) => x >= 5)}, ` +
        `p99 toolmux/bare ${verdict(r.p99VsBare, (x) => x <= 1.5)}`);
    }
  }
  if (table.toolmux && table.toolmux_modern) {
    console.log('\nthe 2026-07-28 path beside the legacy one (same binary, same tool): modern/legacy req/s, p99');
    for (const c of cs) {
      const legacy = table.toolmux[c];
      const modern = table.toolmux_modern[c];
      ratios[`modern_${c}`] = { rps: round(modern.rps / legacy.rps, 2), p99: round(modern.p99Ms / legacy.p99Ms, 2) };
      console.log(`c=${String(c).padStart(2)}: modern/legacy req/s ${ratios[`modern_${c}`].rps}, p99 ${ratios[`modern_${c}`].p99}`);
    }
  }
  if (memory) {
    console.log('\nmemory at 16 connections (VmRSS / VmHWM, MB)');
    for (const [name, points] of Object.entries(memory)) {
      const first = points[0];
      const last = points[points.length - 1];
      const growth = last.died ? null : round(last.rssKb / first.rssKb - 1, 3);
      const shown = points.map((p) => p.died
        ? `died after ~${p.calls} (${p.died}), last read ${(p.rssKb / 1024).toFixed(1)} / ${(p.hwmKb / 1024).toFixed(1)}`
        : `after ${p.calls}: ${(p.rssKb / 1024).toFixed(1)} / ${(p.hwmKb / 1024).toFixed(1)}`);
      const flat = !last.died && Math.abs(growth) <= 0.1;
      console.log(`${name.padEnd(14)} ${shown.join(', ')}` + (growth === null ? '' : `; RSS growth ${(growth * 100).toFixed(1)}%`) +
        (name === 'toolmux' ? (flat ? ' (met)' : ' (MISSED)') : ''));
    }
  }
  const samples = load.samples.length ? load.samples : [load.before[0]];
  console.log(`\nload average: ${load.before.map((x) => x.toFixed(2)).join(' ')} before, ` +
    `${load.after.map((x) => x.toFixed(2)).join(' ')} after; 1-minute load during the run ` +
    `min ${Math.min(...samples)}, median ${median(samples)}, max ${Math.max(...samples)}`);
  return ratios;
}

/**
 * Instructions per tools/call of each server, under callgrind: the totals of
 * two runs (n1 and n2 calls per wrk thread) differenced.
 */
async function measureInstructions(list, [n1, n2], log) {
  const rows = {};
  for (const s of list) {
    const totals = [];
    for (const n of [n1, n2]) {
      const out = path.join(os.tmpdir(), `http-bench-callgrind-${process.pid}-${s.name}-${n}.out`);
      const handle = await start({ ...s, callgrind: out });
      const auth = await authHeaders(s);
      const session = await openSession(handle.url, s.modern, auth);
      const token = auth.Authorization?.slice('Bearer '.length) ?? '';
      const r = await wrk({ url: handle.url, session, connections: 16, seconds: 600, limit: n, port: handle.port, token });
      await handle.stop();
      const text = fs.readFileSync(out, 'utf8');
      if (process.env.KEEP_CALLGRIND) fs.copyFileSync(out, `/tmp/keep-${s.name}-${n}.out`);
      fs.rmSync(out, { force: true });
      const total = Number(/^summary: (\d+)/m.exec(text)?.[1] ?? /^totals: (\d+)/m.exec(text)?.[1]);
      if (!Number.isFinite(total)) throw new Error(`${s.name}: no total in callgrind's output`);
      if (r.wrong) throw new Error(`${s.name}: ${r.wrong} wrong answers (${r.first_wrong})`);
      totals.push({ calls: r.answered, total });
      log(`${s.name.padEnd(18)} ${r.answered} calls: ${total} instructions`);
    }
    const perCall = (totals[1].total - totals[0].total) / (totals[1].calls - totals[0].calls);
    rows[s.name] = Math.round(perCall);
  }
  console.log('\ninstructions per tools/call (callgrind, 16 connections; difference of two runs)');
  for (const [name, n] of Object.entries(rows)) console.log(`${name.padEnd(18)} ${n.toLocaleString('en-US')}`);
  console.log(JSON.stringify({ bench: 'http', instructions: rows, calls: [n1, n2] }));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const list = servers(options);
  if (options.instructions) {
    if (options.instructions.length !== 2 || !(options.instructions[1] > options.instructions[0])) {
      throw new Error('--instructions needs N1,N2 with N2 > N1');
    }
    await measureInstructions(list, options.instructions, (line) => console.error(line));
    return;
  }
  if (os.cpus().length < 2) throw new Error('needs 2 cores: the server on core 0, wrk on core 1');
  const log = (line) => console.error(line);
  // The machine is shared: the 1-minute load average, every 10 s, says how quiet it was.
  const load = { before: os.loadavg(), samples: [] };
  const sampler = setInterval(() => load.samples.push(round(os.loadavg()[0], 2)), 10000);
  const results = await measureThroughput(list, options, log);
  const memory = options.memory ? await measureMemory(list, options, log) : null;
  clearInterval(sampler);
  load.after = os.loadavg();
  const table = summarize(results);
  const ratios = printReport(table, memory, load);
  console.log(JSON.stringify({
    bench: 'http',
    date: new Date().toISOString(),
    options: { reps: options.reps, duration: options.duration, warmup: options.warmup, connections: options.connections },
    load,
    table,
    ratios,
    memory,
  }));
}

main().catch((e) => {
  console.error(e.stack ?? String(e));
  process.exit(1);
});
