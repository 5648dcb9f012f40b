// A toolmux cluster for the end-to-end tests and the store benchmark: N
// `toolmux serve --http` instances (each its own --data-dir, on 127.0.0.1,
// the port from its "serving" line) behind HAProxy, which runs
// examples/haproxy/haproxy.cfg with its bind and server lines replaced by
// free ports; optionally a throwaway PostgreSQL (tests/support/postgres.sh)
// holding their shared store.
//
// Teardown leaves no process and no folder behind: Cluster.close() and
// Postgres.stop() do it when a test ends (pass `t`, or call them from an
// after() hook), and a watchdog process does it when this process dies
// without running them (a crash, a timeout's SIGKILL): it reads what to clean
// up from a pipe, and the pipe's end (this process gone) is its signal.

import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, before } from 'node:test';
import { promisify } from 'node:util';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';

import { HttpServer, REPO_ROOT, TOOLMUX_BIN, sleep, writeTree } from './helpers.mjs';

const execFileAsync = promisify(execFile);

export const HAPROXY_EXAMPLE = path.join(REPO_ROOT, 'examples/haproxy/haproxy.cfg');
/** The same with legacy sessions kept on the instance that opened them. */
export const HAPROXY_LEGACY_SESSIONS = path.join(REPO_ROOT, 'examples/haproxy/legacy-sessions.cfg');
export const POSTGRES_SH = path.join(REPO_ROOT, 'tests/support/postgres.sh');
/** The response header naming the HAProxy server (toolmux1, toolmux2, ...) that answered. */
export const SERVER_HEADER = 'x-toolmux-server';

// ---------------------------------------------------------------------------
// The watchdog: `pid N`, `pg DIR` and `dir DIR` lines add what it cleans up;
// `forget X` removes an entry (already cleaned up). At the end of its input it
// kills the pids (SIGKILL), stops the PostgreSQL servers and removes the
// folders. It ignores the signals a terminal or a test runner sends to the
// whole group, so that it outlives this process.
const WATCHDOG = `
trap '' INT TERM HUP
declare -A pids pgs dirs
while read -r kind value; do
  case $kind in
    pid) pids[$value]=1 ;;
    pg) pgs[$value]=1 ;;
    dir) dirs[$value]=1 ;;
    forget) unset "pids[$value]" "pgs[$value]" "dirs[$value]" ;;
  esac
done
for p in "\${!pids[@]}"; do kill -9 "$p" 2>/dev/null; done
for d in "\${!pgs[@]}"; do bash "$1" stop "$d"; done
for d in "\${!dirs[@]}"; do rm -rf -- "$d"; done
`;

let watchdog;
function watch(kind, value) {
  if (!watchdog) {
    watchdog = spawn('bash', ['-c', WATCHDOG, 'watchdog', POSTGRES_SH], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    watchdog.unref();
    watchdog.stdin.unref?.();
    watchdog.stdin.on('error', () => {});
  }
  watchdog.stdin.write(`${kind} ${value}\n`);
}
const forget = (value) => watchdog?.stdin.write(`forget ${value}\n`);

/** A fresh folder for the cluster's files, watched. */
function clusterDir(prefix) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  watch('dir', dir);
  return dir;
}

// ---------------------------------------------------------------------------
// PostgreSQL

/** A throwaway PostgreSQL server (tests/support/postgres.sh) in a fresh folder. */
export class Postgres {
  /**
   * Starts it; `durable` keeps fsync on (for fair benchmarks). `t` (or an
   * after() hook calling stop()) stops it and removes its folder.
   */
  static async start(t, { durable = false } = {}) {
    // postgres.sh makes DIR itself and hands it to `nobody` when run as root:
    // its parent must let that user through.
    const parent = clusterDir('toolmux-pg-');
    fs.chmodSync(parent, 0o755);
    const pg = new Postgres(path.join(parent, 'pg'), parent);
    watch('pg', pg.dir);
    if (t) t.after(() => pg.stop());
    const args = [POSTGRES_SH, 'start', pg.dir, ...(durable ? ['--durable'] : [])];
    try {
      pg.conninfo = (await execFileAsync('bash', args, { timeout: 90000 })).stdout.trim();
    } catch (error) {
      await pg.stop();
      throw new Error(`postgres.sh start failed: ${error.stderr || error.message}`);
    }
    return pg;
  }

  constructor(dir, parent) {
    this.dir = dir;
    this.parent = parent;
    this.databases = 0;
  }

  /** A new, empty database; resolves its connection string. */
  async createdb(name = `toolmux_${++this.databases}`) {
    return (await execFileAsync('bash', [POSTGRES_SH, 'createdb', this.dir, name], { timeout: 30000 })).stdout.trim();
  }

  /** The server's own processes (postmaster and its children), for CPU figures. */
  pids() {
    const pidFile = path.join(this.dir, 'data', 'postmaster.pid');
    if (!fs.existsSync(pidFile)) return [];
    const main = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    return [main, ...childrenOf(main)];
  }

  /** Stops the server at once and removes its folder (idempotent). */
  async stop() {
    if (this.stopped) return;
    this.stopped = true;
    await execFileAsync('bash', [POSTGRES_SH, 'stop', this.dir], { timeout: 30000 }).catch(() => {});
    fs.rmSync(this.parent, { recursive: true, force: true });
    forget(this.dir);
    forget(this.parent);
  }
}

/** The pids of the children of `pid` (from /proc/PID/task/TID/children). */
export function childrenOf(pid) {
  const out = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

// ---------------------------------------------------------------------------
// HAProxy

/** A free TCP port on 127.0.0.1 (free when asked; HAProxy's start retries if taken meanwhile). */
export async function freePort() {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * examples/haproxy/haproxy.cfg (or `example`) for this cluster: its `bind` on `port`, one
 * `server` line per instance port, a stats socket, and a response header
 * naming the server that answered (SERVER_HEADER).
 */
export function haproxyConfig({ port, servers, statsSocket, example: file = HAPROXY_EXAMPLE }) {
  const example = fs.readFileSync(file, 'utf8');
  const lines = [];
  let serversWritten = false;
  for (const line of example.split('\n')) {
    if (/^\s*bind\s/.test(line)) {
      lines.push(`    bind 127.0.0.1:${port}`);
    } else if (/^\s*server\s/.test(line)) {
      if (serversWritten) continue;
      serversWritten = true;
      servers.forEach((p, i) => lines.push(`    server toolmux${i + 1} 127.0.0.1:${p} check`));
      lines.push(`    http-after-response set-header X-Toolmux-Server %s`);
    } else {
      lines.push(line);
      if (/^global\s*$/.test(line)) {
        lines.push(`    stats socket ${statsSocket} mode 600 level admin`);
        lines.push('    log stdout format raw local0 info');
      }
      if (/^frontend\s/.test(line)) {
        // One line per request on stdout: the X-Test-Call header a test sent,
        // the server, the status, the termination state, the time and the
        // Mcp-Session-Id.
        lines.push('    log global');
        lines.push('    http-request capture req.hdr(x-test-call) len 40');
        lines.push('    http-request capture req.hdr(mcp-session-id) len 64');
        lines.push('    log-format "request %[capture.req.hdr(0)] %s %ST %tsc %Ta %[capture.req.hdr(1)]"');
      }
    }
  }
  if (!serversWritten) throw new Error(`${file} has no server lines`);
  return lines.join('\n');
}

/** One command to HAProxy's stats socket; resolves its whole answer. */
function haproxyCommand(socketPath, command) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (out += chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve(out));
    socket.write(`${command}\n`);
  });
}

// ---------------------------------------------------------------------------
// The cluster

export class Cluster {
  /**
   * Starts `instances` toolmux instances (`serve --http 127.0.0.1:0`, each a
   * fresh --data-dir, all the same --root and `catalog`, plus `args`) and
   * HAProxy in front. `store`: 'rocksdb' (default, each instance its own) or
   * 'postgresql' (`--store postgresql`, TOOLMUX_POSTGRES_URL a fresh database
   * of `postgres`, a Postgres, or `database`, the connection string of one
   * made before). `haproxy`: the example configuration to run
   * (default examples/haproxy/haproxy.cfg). `stateKey` (32 bytes): written
   * as every instance's <data-dir>/state.key before it starts, so that a
   * requestState sealed by one opens on another. `t` closes it after the test;
   * else call close().
   */
  static async start(t, { instances = 3, catalog, args = [], env = {}, files = {}, store = 'rocksdb', postgres, database, haproxy = HAPROXY_EXAMPLE, stateKey } = {}) {
    const cluster = new Cluster();
    cluster.example = haproxy;
    cluster.stateKey = stateKey;
    if (t) t.after(() => cluster.close());
    try {
      await cluster.#start({ instances, catalog, args, env, files, store, postgres, database });
    } catch (error) {
      await cluster.close();
      throw error;
    }
    return cluster;
  }

  constructor() {
    this.dir = clusterDir('toolmux-cluster-');
    this.instances = [];
    this.haproxy = null;
  }

  async #start({ instances, catalog, args, env, files, store, postgres, database }) {
    // Inside the cluster's folder, so that the watchdog removes it too.
    this.root = path.join(this.dir, 'root');
    fs.mkdirSync(this.root);
    writeTree(this.root, files);
    this.store = store;
    const instanceEnv = { ...env };
    const storeArgs = [];
    if (store === 'postgresql') {
      if (!postgres && !database) throw new Error('Cluster.start: store postgresql needs a Postgres or a database');
      instanceEnv.TOOLMUX_POSTGRES_URL = database ?? (await postgres.createdb());
      storeArgs.push('--store', 'postgresql');
    } else if (store !== 'rocksdb') {
      throw new Error(`Cluster.start: unknown store ${store}`);
    }
    this.startOptions = { catalog, args: [...storeArgs, ...args], env: instanceEnv };
    await Promise.all(Array.from({ length: instances }, (_, i) => this.#startInstance(i)));
    await this.#startHaproxy();
  }

  async #startInstance(i) {
    const dataDir = path.join(this.dir, `data${i + 1}`);
    fs.mkdirSync(dataDir, { mode: 0o700 });
    if (this.stateKey) fs.writeFileSync(path.join(dataDir, 'state.key'), this.stateKey, { mode: 0o600 });
    const server = await HttpServer.start(null, { ...this.startOptions, dataDir, root: this.root });
    watch('pid', server.child.pid);
    server.name = `toolmux${i + 1}`;
    server.port = Number(new URL(server.url).port);
    server.exited.then(() => forget(server.child.pid));
    this.instances[i] = server;
    return server;
  }

  async #startHaproxy() {
    const statsSocket = path.join(this.dir, 'haproxy.sock');
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const cfg = path.join(this.dir, 'haproxy.cfg');
      fs.writeFileSync(cfg, haproxyConfig({ port, servers: this.instances.map((s) => s.port), statsSocket, example: this.example }));
      const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
      this.requests = [];
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        const match = /^request (\S+) (\S+) (-?\d+) (\S+) (-?\d+) (\S+)$/.exec(line);
        const text = (v) => (v === '-' ? null : v);
        if (match) this.requests.push({ call: text(match[1]), server: match[2], status: Number(match[3]), termination: match[4], ms: Number(match[5]), session: text(match[6]) });
      });
      watch('pid', child.pid);
      let stderr = '';
      child.stderr.on('data', (c) => (stderr += c));
      const exited = once(child, 'close').then(([code, signal]) => {
        forget(child.pid);
        return { code, signal };
      });
      this.haproxy = { child, exited, stderr: () => stderr, statsSocket, port };
      // Up when every server passed its checks (rise 2: about 0.6 s).
      const up = await Promise.race([
        this.#waitForStatus(this.instances.map(() => 'UP'), 10000).then(() => true),
        exited.then(() => false),
      ]);
      if (up) break;
      if (attempt < 3 && /cannot bind|Address already in use/i.test(stderr)) continue;
      throw new Error(`haproxy did not start: ${stderr}`);
    }
    this.origin = `http://127.0.0.1:${this.haproxy.port}`;
    this.url = `${this.origin}/mcp`;
  }

  /**
   * `requests`: HAProxy's log, one { call, server, status, termination, ms,
   * session } per request it logged (call: the X-Test-Call header; session:
   * the Mcp-Session-Id; null when absent).
   */

  /** HAProxy's `show stat` rows of the backend's servers: { name, status, requests, ... } by server name. */
  async stats() {
    const text = await haproxyCommand(this.haproxy.statsSocket, 'show stat');
    const [header, ...rows] = text.trim().split('\n');
    const fields = header.replace(/^# /, '').split(',');
    const out = {};
    for (const row of rows) {
      const values = row.split(',');
      const r = Object.fromEntries(fields.map((f, i) => [f, values[i]]));
      if (r.pxname !== 'toolmux' || r.svname === 'BACKEND') continue;
      out[r.svname] = { name: r.svname, status: r.status, check: r.check_status, sessions: Number(r.stot), responses2xx: Number(r.hrsp_2xx), downs: Number(r.chkdown) };
    }
    return out;
  }

  /** Waits until the servers' statuses (in order) are `expected` (e.g. ['UP', 'DOWN', 'UP']; '' for any). */
  async #waitForStatus(expected, timeoutMs) {
    const start = Date.now();
    for (;;) {
      let stats = {};
      try {
        stats = await this.stats();
      } catch {
        // the socket is not there yet
      }
      const now = this.instances.map((s) => stats[s.name] ?? { status: 'none' });
      // 'UP': up and its last check passed (a server starts "UP 1/2", unchecked).
      const matches = (row, want) => want === '' || (want === 'UP' ? row.status === 'UP' && row.check === 'L7OK' : row.status.startsWith(want));
      if (now.every((row, i) => matches(row, expected[i]))) return Date.now() - start;
      if (Date.now() - start > timeoutMs) throw new Error(`servers are ${now.map((r) => r.status).join(', ')}, not ${expected.join(', ')}, after ${timeoutMs} ms`);
      await sleep(25);
    }
  }

  /** Waits until HAProxy has taken instance `i` out of rotation; resolves how long that took (ms). */
  waitForDown(i, timeoutMs = 5000) {
    return this.#waitForStatus(
      this.instances.map((s, j) => (j === i ? 'DOWN' : '')),
      timeoutMs,
    );
  }

  /** kill -9 of instance `i`; resolves once it is gone. */
  async kill(i) {
    const server = this.instances[i];
    server.child.kill('SIGKILL');
    const exit = await server.exited;
    if (exit.signal !== 'SIGKILL') throw new Error(`${server.name} exited with ${JSON.stringify(exit)}, not killed`);
  }

  /** The pids of the instances still running and of HAProxy. */
  pids() {
    return {
      instances: this.instances.filter((s) => !s.exit).map((s) => s.child.pid),
      haproxy: this.haproxy && !this.haproxy.child.exitCode ? [this.haproxy.child.pid] : [],
    };
  }

  /** Stops HAProxy and every instance (SIGKILL) and removes the folders (idempotent). */
  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.haproxy) {
      this.haproxy.child.kill('SIGKILL');
      await this.haproxy.exited;
    }
    await Promise.all(this.instances.filter(Boolean).map((s) => s.kill()));
    fs.rmSync(this.dir, { recursive: true, force: true });
    forget(this.dir);
  }
}

/**
 * In a describe block: one PostgreSQL (a Postgres) and a Cluster on it
 * (Cluster.start's `options`, store postgresql), started before the block's
 * tests and stopped after them; `use(pg, cluster)` is given both once they run.
 */
export function clusterOnPostgres(options, use) {
  let pg;
  let cluster;
  before(async () => {
    pg = await Postgres.start(null);
    cluster = await Cluster.start(null, { ...options, store: 'postgresql', postgres: pg });
    use(pg, cluster);
  });
  after(async () => {
    await cluster?.close();
    await pg?.stop();
  });
}

/** Whether the binary under test has `serve --store` (the PostgreSQL store). */
export async function hasStoreOption(bin = TOOLMUX_BIN) {
  const { stdout } = await execFileAsync(bin, ['serve', '--help']).catch((e) => e);
  return /^\s*--store\s/m.test(stdout ?? '');
}

/**
 * The v2 client (@modelcontextprotocol/client) pinned to 2026-07-28 on `url`.
 * Each request carries `X-Test-Call: <record.callId>` when a test set one
 * (HAProxy's log then names it: Cluster.requests); `served` holds, for each
 * response, the server HAProxy sent the request to (SERVER_HEADER), in
 * order, and `last` the latest. `capabilities` are the client's. Closed
 * after the test when `t` is given.
 */
export async function connectModern(t, url, { capabilities = {}, headers: extra = {} } = {}) {
  const served = [];
  const record = {
    served,
    last: null,
    callId: null,
    fetch: async (input, init = {}) => {
      const headers = new Headers(init.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      if (record.callId !== null) headers.set('x-test-call', String(record.callId));
      const response = await fetch(input, { ...init, headers });
      record.last = response.headers.get(SERVER_HEADER);
      served.push(record.last);
      return response;
    },
  };
  const transport = new ModernTransport(new URL(url), { fetch: record.fetch });
  const client = new ModernClient(
    { name: 'toolmux-e2e-cluster', version: '0.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (t) t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  record.client = client;
  return record;
}
