// The soak: many HTTP sessions making many calls of mixed tools against one
// `toolmux serve --http`, every answer checked, the server's memory sampled.
//
// Each session is a raw Streamable HTTP client (node:http, one keep-alive
// connection, one call in flight): initialize, then `calls` calls cycling
// through six kinds, each with the exact answer it must get:
//
//   echo     echo_text (a command tool): its text and a newline
//   native   read_text_file of notes.txt: the file's content
//   search   tool_search: echo_text among the tools found
//   offload  gen_chars of 5000 characters (12,500 bytes, over the 8192-byte
//            threshold): an offload notice; then read_tool_result of its id:
//            the text, byte for byte (two calls)
//   invalid  gen_chars with count "many": isError, naming /count
//   unknown  no_such_tool: a JSON-RPC error -32602, "Unknown tool"
//
// Any other answer, an HTTP status other than 200, or a dropped connection is
// an error. Used by run.mjs (the full soak) and tests/e2e/soak.test.mjs (a
// reduced one).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SOAK_CATALOG = path.join(path.dirname(fileURLToPath(import.meta.url)), 'catalog.json');
const PROTOCOL_VERSION = '2025-11-25';
const NOTES = 'soak notes\nline two é☃𝄞\n';
const OFFLOAD_CHARS = 5000;
const KINDS = ['echo', 'native', 'search', 'offload', 'invalid', 'unknown'];

function genChars(count) {
  const cycle = ['a', 'é', '☃', '𝄞'];
  let out = '';
  for (let i = 0; i < count; i++) out += cycle[i % 4];
  return out;
}
const OFFLOADED_TEXT = genChars(OFFLOAD_CHARS);

/** VmRSS of a live process, in kB; null once it is gone. */
function rssKb(pid) {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Starts the server; resolves { child, url, exited } once it logs "serving". */
async function startServer(bin, dir) {
  const root = path.join(dir, 'root');
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, 'notes.txt'), NOTES);
  const argv = ['serve', '--http', '127.0.0.1:0', '--data-dir', path.join(dir, 'data'), '--root', root, '--catalog', SOAK_CATALOG];
  const child = spawn(bin, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let head = '';
  const url = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      // Every call writes a log line: read on to the end, keep only the start.
      if (head.length > 65536) return;
      head += chunk.toString();
      const match = /"event":"serving"[^\n]*"url":"([^"]+)"/.exec(head);
      if (match) resolve(match[1]);
    };
    child.stderr.on('data', onData);
    exited.then((exit) => reject(new Error(`toolmux exited before serving (${JSON.stringify(exit)}): ${head}`)));
  });
  return { child, url, exited };
}

/** One JSON-RPC POST; resolves { status, message } (the response, from JSON or the last SSE event). */
function post(agent, url, body, sessionId) {
  const data = JSON.stringify(body);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': Buffer.byteLength(data),
  };
  if (sessionId) {
    headers['mcp-session-id'] = sessionId;
    headers['mcp-protocol-version'] = PROTOCOL_VERSION;
  }
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers }, (response) => {
      const chunks = [];
      response.on('data', (c) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let message = null;
        try {
          if ((response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
            const datas = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean);
            message = datas.length ? JSON.parse(datas[datas.length - 1]) : null;
          } else if (text) {
            message = JSON.parse(text);
          }
        } catch {
          message = { unparsable: text.slice(0, 200) };
        }
        resolve({ status: response.statusCode, sessionId: response.headers['mcp-session-id'], message });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(data);
  });
}

const textOf = (result) => (result?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');

/** Runs one session's calls; records errors; returns how many calls it made. */
async function runSession(url, s, calls, stats) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let id = 0;
  const fail = (what, detail) => {
    stats.errors++;
    if (stats.firstErrors.length < 10) stats.firstErrors.push({ session: s, call: id, what, detail: JSON.stringify(detail)?.slice(0, 300) });
  };
  try {
    const init = await post(agent, url, {
      jsonrpc: '2.0',
      id: ++id,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'toolmux-soak', version: '0' } },
    });
    if (init.status !== 200 || !init.sessionId) return fail('initialize', init);
    const sessionId = init.sessionId;
    const initialized = await post(agent, url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
    if (initialized.status !== 202) return fail('notifications/initialized', initialized);
    // The answer's message, or null (an error recorded) when it is not a
    // JSON-RPC response to this call.
    const callMessage = async (name, args) => {
      const answer = await post(agent, url, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }, sessionId);
      stats.calls++;
      if (answer.status !== 200 || !answer.message || answer.message.id !== id) {
        fail(`${name}: not a response to the call`, answer);
        return null;
      }
      return answer.message;
    };
    // The call's result, or null (an error recorded) when it did not get one.
    const call = async (name, args) => {
      const message = await callMessage(name, args);
      if (message && !message.result) fail(`${name}: not a result`, message);
      return message?.result ?? null;
    };
    for (let i = 0, step = 0; i < calls; step++) {
      const kind = KINDS[(step + s) % KINDS.length];
      stats.byKind[kind] = (stats.byKind[kind] ?? 0) + 1;
      if (kind === 'echo') {
        const text = `session ${s} call ${i}`;
        const r = await call('echo_text', { text });
        if (r && (r.isError || textOf(r) !== `${text}\n`)) fail('echo', r);
        i++;
      } else if (kind === 'native') {
        const r = await call('read_text_file', { path: 'notes.txt' });
        if (r && (r.isError || textOf(r) !== NOTES)) fail('native', r);
        i++;
      } else if (kind === 'search') {
        const r = await call('tool_search', { query: 'echo text back', limit: 3 });
        if (r && (r.isError || !r.structuredContent?.tools?.some((t) => t.name === 'echo_text'))) fail('search', r);
        i++;
      } else if (kind === 'offload') {
        const r = await call('gen_chars', { count: OFFLOAD_CHARS });
        i++;
        const match = r && /It is stored as result_id "([A-Za-z0-9_-]{43})"/.exec(textOf(r));
        if (!r) continue;
        if (r.isError || !match) {
          fail('offload: no notice', r);
          continue;
        }
        if (i >= calls) break;
        const page = await call('read_tool_result', { result_id: match[1], offset: 0 });
        i++;
        if (page && (page.isError || page.content?.[0]?.text !== OFFLOADED_TEXT || page.structuredContent?.next_offset !== undefined)) {
          fail('offload: read back', page);
        }
      } else if (kind === 'invalid') {
        const r = await call('gen_chars', { count: 'many' });
        if (r && !(r.isError && textOf(r).startsWith('Invalid arguments for tool "gen_chars": argument /count'))) fail('invalid', r);
        i++;
      } else {
        // A JSON-RPC error (invalid params), as the specification asks.
        const m = await callMessage('no_such_tool', {});
        if (m && !(m.error?.code === -32602 && m.error.message.startsWith('Unknown tool: "no_such_tool"'))) fail('unknown', m);
        i++;
      }
    }
    const end = await new Promise((resolve, reject) => {
      const request = http.request(url, { method: 'DELETE', agent, headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL_VERSION } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      });
      request.on('error', reject);
      request.end();
    });
    if (end !== 200 && end !== 204) fail('DELETE', end);
  } catch (error) {
    fail('connection', String(error));
  } finally {
    agent.destroy();
  }
}

/**
 * Runs the soak. Returns { sessions, callsPerSession, calls, errors,
 * firstErrors, byKind, seconds, callsPerSecond, rss: { samples, warmFirstKb,
 * lastKb, maxKb, warmMaxKb }, load: { start, end }, exit }.
 * The warm-up is the first `warmupFraction` of the calls: RSS figures after
 * it are what "flat" is judged on.
 */
export async function runSoak({ bin, sessions = 64, calls = 20000, sampleMs = 1000, warmupFraction = 0.1, log = () => {} }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolmux-soak-'));
  const server = await startServer(bin, dir);
  const stats = { calls: 0, errors: 0, firstErrors: [], byKind: {} };
  const total = sessions * calls;
  const samples = [];
  const sample = () => samples.push({ seconds: (performance.now() - start) / 1000, calls: stats.calls, rssKb: rssKb(server.child.pid) });
  const start = performance.now();
  sample();
  const sampler = setInterval(() => {
    sample();
    const last = samples[samples.length - 1];
    log(`${last.seconds.toFixed(0)} s: ${last.calls} of ${total} calls, ${stats.errors} errors, RSS ${last.rssKb} kB`);
  }, sampleMs);
  const loadStart = os.loadavg();
  try {
    await Promise.all(Array.from({ length: sessions }, (_, s) => runSession(server.url, s, calls, stats)));
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - start) / 1000;
  sample();
  const loadEnd = os.loadavg();
  server.child.kill('SIGTERM');
  const exit = await server.exited;
  fs.rmSync(dir, { recursive: true, force: true });

  const warm = samples.filter((x) => x.calls >= warmupFraction * total && x.rssKb !== null);
  const kb = (list) => list.map((x) => x.rssKb).filter((v) => v !== null);
  return {
    sessions,
    callsPerSession: calls,
    calls: stats.calls,
    errors: stats.errors,
    firstErrors: stats.firstErrors,
    byKind: stats.byKind,
    seconds,
    callsPerSecond: stats.calls / seconds,
    rss: {
      samples,
      firstKb: samples[0].rssKb,
      warmFirstKb: warm.length ? warm[0].rssKb : null,
      lastKb: kb(samples).at(-1) ?? null,
      maxKb: Math.max(...kb(samples)),
      warmMaxKb: warm.length ? Math.max(...kb(warm)) : null,
    },
    load: { start: loadStart, end: loadEnd },
    exit,
  };
}
