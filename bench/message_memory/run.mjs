#!/usr/bin/env node
// Message memory: what messages of tiny JSON values cost toolmux in memory
// (issue 11). Two measurements, each on a fresh process:
//   (1) stdio: one message of `--size-mb` MB (10^6 bytes) whose arguments are
//       an array of {"a":0} objects, sent as one line;
//   (2) HTTP: `--concurrent` such bodies POSTed at once in one session.
// With `--shape string` the arguments are one string of that size instead
// (a file written through an argument): a message that must still pass.
// For each: VmRSS before, VmHWM (peak) after the answers, and what the
// answers were (an error naming the value limit, with it in place).
// Prints a table and one JSON line (starting with {"bench":"message_memory").
//
// Usage: node run.mjs [--toolmux PATH] [--size-mb MB] [--concurrent N] [--shape objects|string]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { REPO_ROOT, readMemory, sleep } from '../lib/common.mjs';

function parseArgs(argv) {
  const options = {
    toolmux: process.env.TOOLMUX_BIN ?? path.join(REPO_ROOT, 'build/toolmux'),
    sizeMb: 15,
    concurrent: 6,
    shape: 'objects',
  };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === '--toolmux') options.toolmux = path.resolve(value);
    else if (argv[i] === '--size-mb') options.sizeMb = Number(value);
    else if (argv[i] === '--concurrent') options.concurrent = Number(value);
    else if (argv[i] === '--shape') options.shape = value;
    else throw new Error(`unknown option ${argv[i]}`);
    i++;
  }
  return options;
}

let shape = 'objects';

/** A tools/call of `id` whose arguments are tiny objects (or one string), `bytes` long in all. */
function tinyObjectsMessage(id, bytes) {
  const head = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"list_directory","arguments":{"xs":`;
  const tail = '}}}';
  if (shape === 'string') return `${head}"${'x'.repeat(bytes - head.length - tail.length - 2)}"${tail}`;
  const item = '{"a":0}';
  const count = Math.floor((bytes - head.length - tail.length - 2) / (item.length + 1));
  return `${head}[${Array(count).fill(item).join(',')}]${tail}`;
}

const initialize = (id) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
});

const children = new Set();
// A run that fails must not leave its server behind (it may hold gigabytes).
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));

function start(bin, args) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolmux-bench-root-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolmux-bench-data-'));
  const child = spawn(bin, ['serve', '--root', root, '--data-dir', dataDir, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => {});
  children.add(child);
  return child;
}

async function stdioRun(options) {
  const child = start(options.toolmux, []);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  // The answer to `id`, or an error with id null (the message could not be read).
  const waitFor = async (id) => {
    for (;;) {
      const found = lines().find((m) => m.id === id || (m.error && m.id === null));
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`toolmux exited (${child.exitCode})`);
      await sleep(20);
    }
  };
  child.stdin.write(`${JSON.stringify(initialize(1))}\n`);
  await waitFor(1);
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  await sleep(300);
  const before = readMemory(child.pid);
  child.stdin.write(`${tinyObjectsMessage(2, options.sizeMb * 1e6)}\n`);
  const answer = await waitFor(2);
  const after = readMemory(child.pid);
  child.kill('SIGKILL');
  return { rssBeforeKb: before.rssKb, peakKb: after.hwmKb, answer: describe(answer) };
}

async function httpRun(options) {
  const child = start(options.toolmux, ['--http', '127.0.0.1:0']);
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  let url;
  while (!(url = /"url":"([^"]+)"/.exec(err)?.[1])) {
    if (child.exitCode !== null) throw new Error(`toolmux exited: ${err}`);
    await sleep(20);
  }
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initialize(1)) });
  await init.text();
  const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' };
  await (await fetch(url, { method: 'POST', headers: session, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
  await sleep(300);
  const before = readMemory(child.pid);
  const bodies = Array.from({ length: options.concurrent }, (_, i) => tinyObjectsMessage(10 + i, options.sizeMb * 1e6));
  const answers = await Promise.all(
    bodies.map(async (body) => {
      const response = await fetch(url, { method: 'POST', headers: session, body }).catch((e) => e);
      if (response instanceof Error) return `failed: ${response.cause?.code ?? response.message}`;
      const text = await response.text();
      // A response sent as an SSE stream: its last event is the answer.
      const data = text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data: {')).pop().slice(6);
      return `${response.status} ${describe(JSON.parse(data))}`;
    }),
  );
  const after = readMemory(child.pid);
  child.kill('SIGKILL');
  const counts = {};
  for (const a of answers) counts[a] = (counts[a] ?? 0) + 1;
  return { rssBeforeKb: before.rssKb, peakKb: after.hwmKb, answer: JSON.stringify(counts) };
}

function describe(message) {
  if (message.error) return `error ${message.error.code}: ${message.error.message.slice(0, 90)}`;
  return message.result?.isError ? 'isError result' : 'result';
}

const options = parseArgs(process.argv.slice(2));
shape = options.shape;
const mb = (kb) => (kb / 1024).toFixed(0);
console.log(`toolmux: ${options.toolmux}`);
const stdio = await stdioRun(options);
console.log(`stdio, one ${options.sizeMb} MB message: RSS before ${mb(stdio.rssBeforeKb)} MiB, peak ${mb(stdio.peakKb)} MiB; ${stdio.answer}`);
const http = await httpRun(options);
console.log(`HTTP, ${options.concurrent} x ${options.sizeMb} MB at once: RSS before ${mb(http.rssBeforeKb)} MiB, peak ${mb(http.peakKb)} MiB; ${http.answer}`);
console.log(JSON.stringify({ bench: 'message_memory', shape, sizeMb: options.sizeMb, concurrent: options.concurrent, stdio, http }));
