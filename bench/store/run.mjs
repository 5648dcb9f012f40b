#!/usr/bin/env node
// Store benchmark: what the store behind toolmux costs, RocksDB (each
// instance its own, embedded) beside PostgreSQL (one server shared by the
// instances, `serve --store postgresql`), in the same run; and one instance
// beside three behind HAProxy (examples/haproxy/haproxy.cfg).
//
// Phase 1, per store, one instance spoken to directly, a fresh store per run
// (runs alternate which store goes first):
//   (1) a small call: read_text_file of a 29-byte file (one audit record
//       written per call), one request at a time: median and p99 latency;
//   (2) a 10 MB offload: a command tool prints a 10 MB UTF-8 text, toolmux
//       stores it and answers with a preview and a result_id: the call's time;
//   (3) its paged read-back: read_tool_result, 20000 characters a page, one
//       page after the other; the pages joined must equal the file.
// Phase 2, per store: a closed-loop load of small calls (C connections, each
// one request at a time, D seconds after a warm-up) against one instance
// directly, then against three behind HAProxy: calls/s, and CPU per call
// (utime + stime from /proc of the toolmux instances, HAProxy and the
// PostgreSQL server with its backends).
//
// Requests are the 2026-07-28 protocol's (no session), raw HTTP (node:http,
// keep-alive), no SDK. PostgreSQL is started by tests/support/postgres.sh
// with --durable (fsync on, as RocksDB's syncs are real too) and included
// only when the binary has `serve --store` (found in its --help). Prints a
// table and one JSON line (starting {"bench":"store"). See README.md.
//
// Usage: node run.mjs [--runs N] [--calls N] [--size-mb MB] [--seconds S]
//                     [--connections C] [--toolmux PATH] [--stores rocksdb,postgresql]

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { Cluster, Postgres, hasStoreOption } from '../../tests/e2e/cluster.mjs';
import { REPO_ROOT, cpuSeconds, median, multibyteLines, round, toolmuxVersion } from '../lib/common.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    calls: { type: 'string', default: '1000' },
    'size-mb': { type: 'string', default: '10' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    toolmux: { type: 'string', default: process.env.TOOLMUX_BIN ?? path.join(REPO_ROOT, 'build/toolmux') },
    stores: { type: 'string', default: 'rocksdb,postgresql' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('Usage: node run.mjs [--runs N] [--calls N] [--size-mb MB] [--seconds S] [--connections C] [--toolmux PATH] [--stores rocksdb,postgresql]');
  process.exit(0);
}
const RUNS = Number(values.runs);
const CALLS = Number(values.calls);
const SIZE_BYTES = Number(values['size-mb']) * 1e6;
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const PAGE_CHARS = 20000;
const NOTE = 'a small file for small calls\n'; // 29 bytes
process.env.TOOLMUX_BIN = path.resolve(values.toolmux);
for (const [name, v] of [['--runs', RUNS], ['--calls', CALLS], ['--seconds', SECONDS], ['--connections', CONNECTIONS]]) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
}
if (!(SIZE_BYTES >= 1e5)) throw new Error('--size-mb must be at least 0.1');

const log = (text) => process.stderr.write(`${text}\n`);

/** The catalog: print_big prints `bigFile` (an absolute path). */
const catalogFor = (bigFile) => ({
  tools: [
    {
      name: 'print_big',
      description: 'Prints big.txt.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      sideEffect: 'read_only',
      timeoutMs: 120000,
      command: { argv: ['cat', '--', bigFile], envAllow: ['PATH'], maxOutputBytes: 64 * 1024 * 1024 },
    },
  ],
});

// ---------------------------------------------------------------------------
// A raw 2026-07-28 client over keep-alive HTTP.

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

class ModernHttp {
  constructor(url, connections = 1) {
    this.url = new URL(url);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    this.id = 0;
  }

  /** tools/call of `name`; resolves the result (throws on an error or a tool error). */
  call(name, args = {}) {
    const id = ++this.id;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: META } });
    return new Promise((resolve, reject) => {
      const request = http.request(
        this.url,
        {
          agent: this.agent,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': name,
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          const chunks = [];
          response.on('data', (c) => chunks.push(c));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let message;
            try {
              message = JSON.parse(response.headers['content-type']?.startsWith('text/event-stream') ? lastSseData(text) : text);
            } catch {
              reject(new Error(`${name}: HTTP ${response.statusCode}: ${text.slice(0, 300)}`));
              return;
            }
            if (!message.result || message.result.isError) reject(new Error(`${name}: ${JSON.stringify(message).slice(0, 500)}`));
            else resolve(message.result);
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  close() {
    this.agent.destroy();
  }
}

/** The data of the last event of an SSE body (the response). */
function lastSseData(text) {
  const events = text.split('\n\n').filter((e) => e.includes('data:'));
  return events
    .at(-1)
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trimStart())
    .join('\n');
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** CPU seconds used so far by `processes()` ({ kind, pid, reaped }), summed by kind. */
function cpuByKind(processes) {
  const out = {};
  for (const p of processes()) out[p.kind] = (out[p.kind] ?? 0) + cpuSeconds(p.pid, p);
  return out;
}

/** `after` - `before` by kind, in milliseconds, divided by `per`. */
const cpuDelta = (before, after, per = 1) =>
  Object.fromEntries(Object.entries(after).map(([kind, s]) => [kind, ((s - (before[kind] ?? 0)) * 1000) / per]));

// ---------------------------------------------------------------------------
// Phase 1: one instance, a fresh store.

async function phaseOne(cluster, text, processes) {
  const client = new ModernHttp(cluster.instances[0].url);
  try {
    for (let i = 0; i < 50; i++) await client.call('read_text_file', { path: 'note.txt' });
    const ms = [];
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      const result = await client.call('read_text_file', { path: 'note.txt' });
      ms.push(performance.now() - t0);
      if (result.content[0].text !== NOTE) throw new Error(`read_text_file answered ${JSON.stringify(result).slice(0, 300)}`);
    }
    const cpu0 = cpuByKind(processes);
    const t0 = performance.now();
    const offload = await client.call('print_big');
    const offloadMs = performance.now() - t0;
    const cpu1 = cpuByKind(processes);
    const id = /result_id "([^"]+)"/.exec(offload.content.at(-1).text)?.[1];
    if (!id) throw new Error(`print_big was not offloaded: ${JSON.stringify(offload).slice(0, 500)}`);
    const parts = [];
    let offset = 0;
    let pages = 0;
    let readMs = 0;
    for (;;) {
      const p0 = performance.now();
      const page = await client.call('read_tool_result', { result_id: id, offset, max_chars: PAGE_CHARS });
      readMs += performance.now() - p0;
      pages++;
      parts.push(page.content[0].text);
      if (page.structuredContent.next_offset === undefined) break;
      offset = page.structuredContent.next_offset;
    }
    const cpu2 = cpuByKind(processes);
    if (parts.join('') !== text) throw new Error('the pages read back differ from the text');
    return {
      smallMedianMs: median(ms),
      smallP99Ms: percentile(ms, 99),
      offloadMs,
      readMs,
      pages,
      offloadCpuMsBy: cpuDelta(cpu0, cpu1),
      readCpuMsBy: cpuDelta(cpu1, cpu2),
    };
  } finally {
    client.close();
  }
}

// ---------------------------------------------------------------------------
// Phase 2: a closed-loop load of small calls.

async function load(url, processes) {
  const client = new ModernHttp(url, CONNECTIONS);
  try {
    const deadline = { warm: performance.now() + 2000 };
    deadline.end = deadline.warm + SECONDS * 1000;
    let counted = 0;
    let cpuStart = null;
    const cpuNow = () => cpuByKind(processes);
    const loop = async () => {
      while (performance.now() < deadline.end) {
        await client.call('read_text_file', { path: 'note.txt' });
        if (performance.now() >= deadline.warm) counted++;
      }
    };
    const warm = (async () => {
      await new Promise((r) => setTimeout(r, deadline.warm - performance.now()));
      cpuStart = cpuNow();
      counted = 0;
    })();
    await Promise.all([warm, ...Array.from({ length: CONNECTIONS }, loop)]);
    const cpuEnd = cpuNow();
    const seconds = (performance.now() - deadline.warm) / 1000;
    const perCall = cpuDelta(cpuStart, cpuEnd, counted / 1000); // µs per call
    const cpuUsPerCall = Object.values(perCall).reduce((a, b) => a + b, 0);
    return { callsPerSecond: counted / seconds, cpuUsPerCall, cpuUsPerCallBy: perCall };
  } finally {
    client.close();
  }
}

// ---------------------------------------------------------------------------

function startCluster(store, pg, instances, catalog) {
  return Cluster.start(null, { instances, catalog, files: { 'note.txt': NOTE }, store, postgres: pg, args: ['--max-calls', '256'] });
}

function processesOf(cluster, pg, { proxy }) {
  return () => [
    ...cluster.instances.map((s) => ({ kind: 'toolmux', pid: s.child.pid })),
    ...(proxy ? [{ kind: 'haproxy', pid: cluster.haproxy.child.pid }] : []),
    // The postmaster with the backends it has reaped, and the live ones.
    ...(pg ? pg.pids().map((pid, i) => ({ kind: 'postgres', pid, reaped: i === 0 })) : []),
  ];
}

async function main() {
  if (!fs.existsSync(process.env.TOOLMUX_BIN)) throw new Error(`${process.env.TOOLMUX_BIN} not found: build toolmux first`);
  const wanted = values.stores.split(',').filter(Boolean);
  for (const s of wanted) if (!['rocksdb', 'postgresql'].includes(s)) throw new Error(`--stores: unknown store ${s}`);
  const withPg = await hasStoreOption(process.env.TOOLMUX_BIN);
  const stores = wanted.filter((s) => s === 'rocksdb' || withPg);
  if (wanted.includes('postgresql') && !withPg) log('this toolmux has no `serve --store`: PostgreSQL left out');
  const text = multibyteLines(SIZE_BYTES);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolmux-store-bench-'));
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(path.join(dir, 'big.txt'), text);
  fs.writeFileSync(catalog, JSON.stringify(catalogFor(path.join(dir, 'big.txt'))));
  const pg = stores.includes('postgresql') ? await Postgres.start(null, { durable: true }) : null;
  const version = await toolmuxVersion(process.env.TOOLMUX_BIN);
  const results = Object.fromEntries(stores.map((s) => [s, { runs: [], one: [], three: [] }]));
  try {
    for (let run = 0; run < RUNS; run++) {
      const order = run % 2 ? [...stores].reverse() : stores;
      for (const store of order) {
        log(`run ${run + 1}/${RUNS}: ${store}, one instance`);
        const cluster = await startCluster(store, pg, 1, catalog);
        try {
          results[store].runs.push(await phaseOne(cluster, text, processesOf(cluster, store === 'postgresql' ? pg : null, { proxy: false })));
        } finally {
          await cluster.close();
        }
      }
    }
    for (let run = 0; run < RUNS; run++) {
      for (const store of run % 2 ? [...stores].reverse() : stores) {
        log(`load ${run + 1}/${RUNS}: ${store}, one instance, then three behind HAProxy`);
        const one = await startCluster(store, pg, 1, catalog);
        try {
          results[store].one.push(await load(one.instances[0].url, processesOf(one, store === 'postgresql' ? pg : null, { proxy: false })));
        } finally {
          await one.close();
        }
        const three = await startCluster(store, pg, 3, catalog);
        try {
          results[store].three.push(await load(three.url, processesOf(three, store === 'postgresql' ? pg : null, { proxy: true })));
        } finally {
          await three.close();
        }
      }
    }
  } finally {
    await pg?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  // The median per kind of process of the CPU per call.
  const byKind = (list, key = 'cpuUsPerCallBy') => {
    const kinds = [...new Set(list.flatMap((x) => Object.keys(x[key])))];
    return Object.fromEntries(kinds.map((k) => [k, round(median(list.map((x) => x[key][k] ?? 0)), 0)]));
  };
  const summary = {};
  for (const store of stores) {
    const r = results[store];
    const m = (list, key) => median(list.map((x) => x[key]));
    summary[store] = {
      small_median_ms: round(m(r.runs, 'smallMedianMs'), 3),
      small_p99_ms: round(m(r.runs, 'smallP99Ms'), 3),
      offload_ms: round(m(r.runs, 'offloadMs'), 1),
      read_back_ms: round(m(r.runs, 'readMs'), 1),
      read_back_pages: r.runs[0].pages,
      one_calls_per_s: round(m(r.one, 'callsPerSecond'), 0),
      one_cpu_us_per_call: round(m(r.one, 'cpuUsPerCall'), 0),
      three_calls_per_s: round(m(r.three, 'callsPerSecond'), 0),
      three_cpu_us_per_call: round(m(r.three, 'cpuUsPerCall'), 0),
      offload_cpu_ms_by: byKind(r.runs, 'offloadCpuMsBy'),
      read_back_cpu_ms_by: byKind(r.runs, 'readCpuMsBy'),
      one_cpu_us_per_call_by: byKind(r.one),
      three_cpu_us_per_call_by: byKind(r.three),
      runs: r,
    };
  }
  const bytes = Buffer.byteLength(text);
  console.log(`toolmux ${version}; result ${bytes} bytes; ${CALLS} small calls per run; load: ${CONNECTIONS} connections, ${SECONDS} s; medians of ${RUNS} runs`);
  const header = ['store', 'small ms', 'small p99 ms', 'offload ms', 'read-back ms', 'pages', '1 inst calls/s', '1 inst CPU µs/call', '3 inst calls/s', '3 inst CPU µs/call'];
  const rows = stores.map((s) => {
    const x = summary[s];
    return [s, x.small_median_ms, x.small_p99_ms, x.offload_ms, x.read_back_ms, x.read_back_pages, x.one_calls_per_s, x.one_cpu_us_per_call, x.three_calls_per_s, x.three_cpu_us_per_call].map(String);
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  const ratios = {};
  if (summary.rocksdb && summary.postgresql) {
    const p = summary.postgresql;
    const k = summary.rocksdb;
    ratios.postgresql_over_rocksdb = {
      small: round(p.small_median_ms / k.small_median_ms, 2),
      offload: round(p.offload_ms / k.offload_ms, 2),
      read_back: round(p.read_back_ms / k.read_back_ms, 2),
      one_calls_per_s: round(p.one_calls_per_s / k.one_calls_per_s, 2),
      one_cpu_per_call: round(p.one_cpu_us_per_call / k.one_cpu_us_per_call, 2),
    };
    console.log(`postgresql / rocksdb: ${JSON.stringify(ratios.postgresql_over_rocksdb)}`);
  }
  for (const s of stores) {
    ratios[`${s}_three_over_one`] = {
      calls_per_s: round(summary[s].three_calls_per_s / summary[s].one_calls_per_s, 2),
      cpu_per_call: round(summary[s].three_cpu_us_per_call / summary[s].one_cpu_us_per_call, 2),
    };
    console.log(`${s}, three behind HAProxy / one: ${JSON.stringify(ratios[`${s}_three_over_one`])}`);
    console.log(`${s}, CPU ms by process: offload ${JSON.stringify(summary[s].offload_cpu_ms_by)}, read-back ${JSON.stringify(summary[s].read_back_cpu_ms_by)}`);
    console.log(`${s}, CPU µs per call by process: one instance ${JSON.stringify(summary[s].one_cpu_us_per_call_by)}, three ${JSON.stringify(summary[s].three_cpu_us_per_call_by)}`);
  }
  console.log(
    JSON.stringify({
      bench: 'store',
      version,
      runs: RUNS,
      calls: CALLS,
      result_bytes: bytes,
      connections: CONNECTIONS,
      seconds: SECONDS,
      node: process.version,
      stores: summary,
      ratios,
    }),
  );
}

main().catch((error) => {
  console.error(error.stack ?? error);
  process.exit(1);
});
