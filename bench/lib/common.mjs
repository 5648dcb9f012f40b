// What the benchmarks under bench/ share: finding the peer server, the
// binary's version, a process's memory, the statistics they report, and a
// raw JSON-RPC client over stdio.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The reference filesystem server pinned in bench/startup: its entry script and version. */
export function peerEntry() {
  const pkgDir = path.join(REPO_ROOT, 'bench/startup/node_modules/@modelcontextprotocol/server-filesystem');
  const pkgFile = path.join(pkgDir, 'package.json');
  if (!fs.existsSync(pkgFile)) {
    throw new Error(`${pkgDir} is missing: run scripts/install-node-deps.sh (npm ci in bench/startup)`);
  }
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : Object.values(pkg.bin ?? {})[0] ?? 'dist/index.js';
  return { entry: path.join(pkgDir, bin), version: pkg.version };
}

/** What `toolmux --version` prints, or null. */
export function toolmuxVersion(bin) {
  return new Promise((resolve) => {
    const child = spawn(bin, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', () => resolve(null));
    child.on('close', () => resolve(out.trim() || null));
  });
}

/** VmRSS and VmHWM (kB) of a live process. */
export function readMemory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return match ? Number(match[1]) : null;
  };
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/**
 * CPU seconds (user + system) a process has used, from /proc/PID/stat; with
 * `reaped`, also what its children that it has waited for used. 0 for a
 * process that is gone.
 */
export function cpuSeconds(pid, { reaped = false } = {}) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]); // utime, stime
  return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) / CLK_TCK; // cutime, cstime
}

/**
 * The large-result benchmarks' text: numbered lines mixing 1- to 4-byte UTF-8
 * characters, whole lines only, at least `bytes` bytes.
 */
export function multibyteLines(bytes) {
  const c = ['a', 'é', '☃', '𝄞'];
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `${i} ${c[i % 4]} é☃𝄞 ${c[(i * 3 + 1) % 4]} naïve snow☃ clef𝄞 ${c[(i * 7 + 2) % 4]}\n`;
    parts.push(line);
    size += Buffer.byteLength(line, 'utf8');
  }
  return parts.join('');
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The median of the values that are not null. */
export function median(values) {
  const sorted = values.filter((v) => v !== null && v !== undefined).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return null;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

export const round = (x, digits = 2) =>
  x === null || x === undefined ? null : Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * A raw JSON-RPC client over a child's stdio: `request(text, id)` writes one line
 * and resolves with the parsed response to `id`; a request from the server gets
 * -32601. When `exited` (a promise) settles, what is still waiting resolves with
 * an error. `child.stdin.writableNeedDrain` says when to wait for 'drain'.
 */
export function stdioClient(child, exited) {
  const pending = new Map();
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if (message.method !== undefined) {
        // A request from the server (none is expected: no client capabilities) gets -32601.
        if (message.id !== undefined) {
          child.stdin.write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"error":{"code":-32601,"message":"not supported"}}\n`);
        }
        continue;
      }
      const resolve = pending.get(message.id);
      if (resolve) {
        pending.delete(message.id);
        resolve(message);
      }
    }
  });
  exited?.then((how) => {
    for (const resolve of pending.values()) resolve({ error: { message: `server exited ${JSON.stringify(how)}` } });
    pending.clear();
  });
  return {
    request(text, id) {
      return new Promise((resolve) => {
        pending.set(id, resolve);
        child.stdin.write(text);
      });
    },
    notify(text) {
      child.stdin.write(text);
    },
  };
}
