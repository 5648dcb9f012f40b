// Shared helpers for the toolmux end-to-end tests.
//
// Every test starts the real built binary (TOOLMUX_BIN, default build/toolmux)
// with a fresh temporary directory as --root, filled with the fixture files the
// test itself creates, so tests do not depend on each other or on the host.

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export const REPO_ROOT = path.resolve(here, '../..');
export const TOOLMUX_BIN = process.env.TOOLMUX_BIN
  ? path.resolve(process.env.TOOLMUX_BIN)
  : path.resolve(here, '../../build/toolmux');
export const DATA_DIR = path.join(REPO_ROOT, 'tests/data/e2e');
export const CATALOG = path.join(DATA_DIR, 'catalog.json');
export const BROKEN_CATALOG = path.join(DATA_DIR, 'broken_catalog.json');

export const LATEST_PROTOCOL_VERSION = '2025-11-25';
export const PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

export const BUILTIN_READ_TOOLS = [
  'find_files',
  'get_file_info',
  'list_directory',
  'read_text_file',
  'search_file_contents',
];

export const OUTSIDE_ROOTS = /outside the allowed roots/i;

/** Fails loudly (rather than skipping) when the binary is missing. */
export function requireBinary() {
  if (!fs.existsSync(TOOLMUX_BIN)) {
    throw new Error(
      `toolmux binary not found at ${TOOLMUX_BIN}: build it ` +
        '(cmake -S . -B build && cmake --build build --target toolmux) or set TOOLMUX_BIN',
    );
  }
}

const tempDirs = new Set();
process.on('exit', () => {
  for (const dir of tempDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
});

/** A fresh, empty temporary directory (real path, symlinks resolved), removed at exit. */
export function makeTempDir(prefix = 'toolmux-e2e-') {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  tempDirs.add(dir);
  return dir;
}

/**
 * Creates `files` beneath a fresh temporary directory and returns its path.
 * Keys are relative paths; a value that is a string is the file content, and
 * a key ending in "/" is an (empty) directory.
 */
export function makeRoot(files = {}) {
  const root = makeTempDir('toolmux-root-');
  writeTree(root, files);
  return root;
}

export function writeTree(dir, files) {
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(dir, rel);
    if (rel.endsWith('/')) {
      fs.mkdirSync(full, { recursive: true });
    } else {
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, content);
    }
  }
}

/** JSON of a value for an assertion message, cut to `max` characters. */
export function short(value, max = 600) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}... (${text.length} chars)` : text;
}

/** The concatenated text of a CallToolResult's text content blocks. */
export function textOf(result) {
  return (result?.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** Lines of a text, without a trailing empty line. */
export function linesOf(text) {
  const lines = text.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `predicate()` is truthy, polling; throws after `timeoutMs`. */
export async function waitUntil(predicate, timeoutMs, what = 'condition') {
  const start = Date.now();
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Records every JSON-RPC message a transport sends (`sent`) and receives
 * (`received`). Protocol.connect assigns transport.onmessage; the tap wraps it.
 */
export function tapTransport(transport) {
  const sent = [];
  const received = [];
  const originalSend = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(message);
    return originalSend(message, options);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get() {
      return handler && ((message, extra) => {
        received.push(message);
        return handler(message, extra);
      });
    },
    set(fn) {
      handler = fn;
    },
  });
  return { sent, received };
}

/**
 * Starts `toolmux serve` with the given arguments through the real SDK client
 * and connects (initialize + notifications/initialized).
 *
 * Returns { client, transport, sent, received, stderr(), close() }:
 * `sent` and `received` record every JSON-RPC message in each direction, so a
 * test can look at what the SDK does not expose (the negotiated protocol
 * version, whether a cancelled request got a response, ...).
 *
 * `t` (a node:test context) registers the close as cleanup and dumps the
 * server's stderr when the test fails.
 */
// Where a server started without --data-dir keeps its state: $XDG_STATE_HOME,
// one folder per test file (per node process). What one file's servers learn
// (the search memory) or journal then never reaches another file's servers,
// running at the same time, nor the user's own ~/.local/state.
let fileStateHome;
function stateHomeFor(args, env) {
  if (args.includes('--data-dir') || 'XDG_STATE_HOME' in env) return {};
  fileStateHome ??= makeTempDir('toolmux-state-');
  return { XDG_STATE_HOME: fileStateHome };
}

export async function startClient(t, { args = [], env = {}, command = TOOLMUX_BIN, cwd, clientCapabilities = {} } = {}) {
  if (command === TOOLMUX_BIN) requireBinary();
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...stateHomeFor(args, env), ...env },
    cwd,
    stderr: 'pipe',
  });
  let stderrText = '';
  transport.stderr.on('data', (chunk) => {
    stderrText += chunk.toString();
  });

  const { sent, received } = tapTransport(transport);

  const client = new Client({ name: 'toolmux-e2e', version: '0.0.0' }, { capabilities: clientCapabilities });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.close().catch(() => {});
  };
  if (t) {
    t.after(async () => {
      await close();
      // TOOLMUX_E2E_STDERR=1 shows each server's stderr (its logs) in the test output.
      if (process.env.TOOLMUX_E2E_STDERR && stderrText) t.diagnostic(`toolmux stderr:\n${stderrText}`);
    });
  }
  try {
    await client.connect(transport);
  } catch (error) {
    await close();
    error.message += `\n--- toolmux stderr ---\n${stderrText}`;
    throw error;
  }
  return {
    client,
    transport,
    sent,
    received,
    stderr: () => stderrText,
    close,
  };
}

/** The full tool list, following nextCursor until the last page. */
export async function listAllTools(client) {
  const tools = [];
  let cursor;
  const seen = new Set();
  for (;;) {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    if (!page.nextCursor) return tools;
    if (seen.has(page.nextCursor)) throw new Error(`cursor repeated: ${page.nextCursor}`);
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}

/** Asserts that `promise` rejects with an McpError carrying `code`. */
export async function expectMcpError(assert, promise, code, messagePattern) {
  let error;
  try {
    const result = await promise;
    assert.fail(`expected a JSON-RPC error ${code}, got a result: ${JSON.stringify(result)}`);
  } catch (e) {
    if (e.code === 'ERR_ASSERTION') throw e;
    error = e;
  }
  assert.equal(error.code, code, `expected error code ${code}, got ${error.code}: ${error.message}`);
  if (messagePattern) assert.match(error.message, messagePattern);
  return error;
}

/**
 * A toolmux process driven over a raw pipe (no SDK): one JSON-RPC message per
 * line. `lines` holds every stdout line, `messages` the parsed ones.
 */
export class RawServer {
  constructor(args = ['serve'], { env, cwd, command = TOOLMUX_BIN } = {}) {
    requireBinary();
    this.child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: env ?? { PATH: process.env.PATH, HOME: process.env.HOME ?? '/' },
      cwd,
    });
    this.lines = [];
    this.messages = [];
    this.unparsable = [];
    this.stderr = '';
    this.exit = null; // { code, signal, at }
    let buffer = '';
    this.child.stdout.on('data', (chunk) => {
      buffer += chunk.toString();
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') continue;
        this.lines.push(line);
        try {
          this.messages.push(JSON.parse(line));
        } catch {
          this.unparsable.push(line);
        }
      }
    });
    this.child.stderr.on('data', (chunk) => {
      this.stderr += chunk.toString();
    });
    this.child.stdin.on('error', () => {});
    this.exited = once(this.child, 'exit').then(([code, signal]) => {
      this.exit = { code, signal, at: performance.now() };
      return this.exit;
    });
  }

  /** Writes one raw line (a newline is appended). */
  writeLine(line) {
    this.child.stdin.write(`${line}\n`);
  }

  send(message) {
    this.writeLine(JSON.stringify(message));
  }

  /** Waits for the first message (from index `from`) matching `predicate`. */
  async waitFor(predicate, { timeoutMs = 5000, from = 0, what = 'a message' } = {}) {
    const start = Date.now();
    for (;;) {
      for (let i = from; i < this.messages.length; i++) {
        if (predicate(this.messages[i])) return this.messages[i];
      }
      if (this.exit) {
        throw new Error(`toolmux exited (${JSON.stringify(this.exit)}) before ${what}; stdout lines: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`);
      }
      if (Date.now() - start > timeoutMs) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stdout lines: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`);
      }
      await sleep(5);
    }
  }

  /** Sends a request and waits for the response with the same id. */
  async request(id, method, params) {
    const message = { jsonrpc: '2.0', id, method };
    if (params !== undefined) message.params = params;
    const from = this.messages.length;
    this.send(message);
    return this.waitFor((m) => m.id === id && ('result' in m || 'error' in m), { from, what: `the response to ${method} (id ${id})` });
  }

  async initialize(protocolVersion = LATEST_PROTOCOL_VERSION, id = 'init', capabilities = {}) {
    const response = await this.request(id, 'initialize', {
      protocolVersion,
      capabilities,
      clientInfo: { name: 'toolmux-e2e-raw', version: '0.0.0' },
    });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return response;
  }

  closeStdin() {
    this.child.stdin.end();
  }

  async kill() {
    if (!this.exit) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/**
 * Runs `toolmux ARGS...` to completion, with `env` added to this process's
 * environment; returns { code, signal, stdout, stderr }.
 */
export function runCli(args, { timeoutMs = 10000, cwd, env = {} } = {}) {
  requireBinary();
  return new Promise((resolve, reject) => {
    const child = spawn(TOOLMUX_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    // Decoded as a stream: a character cut between two reads stays whole.
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`toolmux ${args.join(' ')} did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    // 'close', not 'exit': 'exit' can come before the last of stdout and
    // stderr has been read, and the caller would see the output cut short.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The project version from the top-level CMakeLists.txt (project(toolmux VERSION x.y.z)). */
export function projectVersion() {
  const cmake = fs.readFileSync(path.join(REPO_ROOT, 'CMakeLists.txt'), 'utf8');
  const match = /project\s*\(\s*toolmux\s+VERSION\s+([0-9.]+)/i.exec(cmake);
  return match ? match[1] : null;
}

// ---------------------------------------------------------------------------
// Aliases, policy, result limits and offloading (limits.test.mjs,
// aliases.test.mjs). Their catalog files are in tests/data/e2e/limits/.

export const LIMITS_DIR = path.join(DATA_DIR, 'limits');

/** The path of a catalog file in tests/data/e2e/limits/. */
export function limitsCatalog(name) {
  return path.join(LIMITS_DIR, name);
}

/**
 * startClient with a fresh --root (filled with `files`) and a fresh --data-dir
 * (unless `dataDir` is given, or `dataDir: null` to leave the flag out), the
 * catalog, and `args`; lists the tools once so that the SDK validates
 * structuredContent against each tool's outputSchema from then on.
 */
export async function serveStore(t, { catalog, files = {}, args = [], env = {}, dataDir } = {}) {
  const root = makeRoot(files);
  const data = dataDir === undefined ? makeTempDir('toolmux-data-') : dataDir;
  const session = await startClient(t, {
    args: [
      'serve',
      '--root',
      root,
      ...(data === null ? [] : ['--data-dir', data]),
      ...(catalog ? ['--catalog', catalog] : []),
      ...args,
    ],
    env,
  });
  session.tools = await listAllTools(session.client);
  session.root = root;
  session.dataDir = data;
  return session;
}

/** The Unicode characters (code points) of a string: toolmux counts these, JS's .length counts UTF-16 units. */
export function codePoints(text) {
  return Array.from(text);
}

export function charCount(text) {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) n++; // a low surrogate continues a character
  }
  return n;
}

/** The first `count` characters (code points) of a text. */
export function firstChars(text, count) {
  let i = 0;
  for (let n = 0; n < count && i < text.length; n++) i += text.codePointAt(i) > 0xffff ? 2 : 1;
  return text.slice(0, i);
}

export const CYCLE_CHARS = ['a', 'é', '☃', '𝄞']; // 1, 2, 3 and 4 bytes in UTF-8

/** What the catalogs' gen_chars tool prints: `count` characters of CYCLE_CHARS, from index `start`. */
export function genCharsText(count, start = 0) {
  let out = '';
  for (let i = 0; i < count; i++) out += CYCLE_CHARS[(i + start) % 4];
  return out;
}

/** What the catalogs' gen_lines tool prints: `lines` numbered lines with 1- to 4-byte characters. */
export function genLinesText(lines) {
  const parts = [];
  for (let i = 0; i < lines; i++) parts.push(`${i} ${CYCLE_CHARS[i % 4]} é☃𝄞 ${CYCLE_CHARS[(i * 3 + 1) % 4]}\n`);
  return parts.join('');
}

/** The marker toolmux appends to a text cut at `kept` of `total` characters. */
export function truncationMarker(kept, total) {
  return `\n[toolmux: truncated: showing the first ${kept} of ${total} characters; ${total - kept} characters were cut]`;
}

const OFFLOAD_NOTICE =
  /\n\n\[toolmux: (this result|the structured result) is (\d+) bytes \((\d+) characters\), too large to show here(; its first (\d+) characters are above)?\. It is stored as result_id "([^"]+)": call read_tool_result with \{"result_id": "([^"]+)", "offset": 0\}, then with each page's next_offset, to read it whole \(up to 20000 characters a page\)\.\]$/;

/**
 * Splits an offloaded text block into its preview and the notice; null when the
 * text carries no notice. Returns { preview, what, bytes, chars, previewChars, id, notice }.
 */
export function parseOffloadNotice(text) {
  const match = OFFLOAD_NOTICE.exec(text);
  if (!match) return null;
  if (match[6] !== match[7]) throw new Error(`the notice names two ids: ${match[6]} and ${match[7]}`);
  return {
    preview: text.slice(0, match.index),
    what: match[1],
    bytes: Number(match[2]),
    chars: Number(match[3]),
    previewChars: match[5] === undefined ? null : Number(match[5]),
    id: match[6],
    notice: match[0],
  };
}

/** The exact notice toolmux puts after the preview of an offloaded `text` stored as `id`. */
export function expectedOffloadNotice(text, id, what = 'this result', previewChars = 2000) {
  const bytes = Buffer.byteLength(text, 'utf8');
  const chars = charCount(text);
  const above = chars > previewChars ? `; its first ${previewChars} characters are above` : '';
  return (
    `\n\n[toolmux: ${what} is ${bytes} bytes (${chars} characters), too large to show here${above}. ` +
    `It is stored as result_id ${JSON.stringify(id)}: call read_tool_result with {"result_id": ${JSON.stringify(id)}, "offset": 0}, ` +
    "then with each page's next_offset, to read it whole (up to 20000 characters a page).]"
  );
}

/**
 * Reads a stored result whole with read_tool_result, checking each page's
 * shape: content[0] is the page, content[1] the position line, and
 * structuredContent { result_id, offset, returned_chars, total_chars,
 * next_offset (absent at the end) }. `maxChars` is a number, or a function of
 * the page index giving the max_chars of that page (undefined: leave it out).
 * `offset` is where to start (default 0); `maxPages` stops early.
 * Returns { text, pages, totalChars, end } (end: the offset after the last page read).
 */
export async function readStoredResult(assert, client, id, { maxChars, offset: from = 0, maxPages = Infinity } = {}) {
  const parts = [];
  let offset = from;
  let totalChars = null;
  for (let page = 0; ; page++) {
    if (page >= maxPages) return { text: parts.join(''), pages: page, totalChars, end: offset };
    const max = typeof maxChars === 'function' ? maxChars(page) : maxChars;
    const args = { result_id: id, offset };
    if (max !== undefined) args.max_chars = max;
    const result = await client.callTool({ name: 'read_tool_result', arguments: args });
    assert.notEqual(result.isError, true, `read_tool_result ${JSON.stringify(args)}: ${short(result)}`);
    assert.equal(result.content.length, 2, `page ${page}: expected the page and a position line: ${short(result)}`);
    const text = result.content[0].text;
    const sc = result.structuredContent;
    assert.ok(sc, `page ${page}: no structuredContent`);
    assert.equal(sc.result_id, id);
    assert.equal(sc.offset, offset);
    if (totalChars === null) totalChars = sc.total_chars;
    assert.equal(sc.total_chars, totalChars, `page ${page}: total_chars changed`);
    const chars = charCount(text);
    assert.equal(sc.returned_chars, chars, `page ${page}: returned_chars ${sc.returned_chars} but the page has ${chars} characters`);
    const limit = max ?? 20000;
    const end = offset + chars;
    if (sc.next_offset !== undefined) {
      assert.equal(chars, limit, `page ${page} (offset ${offset}): not the last page but ${chars} characters, not ${limit}`);
      assert.equal(sc.next_offset, end);
      assert.equal(result.content[1].text, `[toolmux: characters ${offset} to ${end} of ${totalChars}; continue with offset ${end}]`);
    } else {
      assert.ok(chars <= limit, `page ${page}: ${chars} characters, over max_chars ${limit}`);
      assert.equal(end, totalChars, `the last page ends at ${end}, not at total_chars ${totalChars}`);
      assert.equal(result.content[1].text, `[toolmux: characters ${offset} to ${end} of ${totalChars}; this is the end]`);
    }
    parts.push(text);
    if (sc.next_offset === undefined) return { text: parts.join(''), pages: page + 1, totalChars, end };
    offset = sc.next_offset;
  }
}

/** The message read_tool_result gives for an id this session cannot read. */
export function notFoundPrefix(id) {
  return `No stored result with id ${JSON.stringify(id)} for this session`;
}

// ---------------------------------------------------------------------------
// Streamable HTTP (http*.test.mjs): `toolmux serve --http 127.0.0.1:0`, the
// SDK client over StreamableHTTPClientTransport, and raw fetch for what the
// SDK never sends.

/** The catalog of the HTTP tests (tests/data/e2e/http/): discovery on, offloading over 8192 bytes. */
export const HTTP_CATALOG = path.join(DATA_DIR, 'http', 'catalog.json');
/** What tools/list shows a fresh session with HTTP_CATALOG: the pinned tools and the discovery tools. */
export const HTTP_PINNED = ['call_tool', 'gen_chars', 'read_tool_result', 'sleep_long', 'slow_call', 'tool_search'];

/** The sorted names of a tool list. */
export const toolNames = (tools) => tools.map((tool) => tool.name).sort();

/** A ping request. */
export const pingRequest = (id = 'ping') => ({ jsonrpc: '2.0', id, method: 'ping' });

/** A tools/call of tool_search (limit 2), as a raw request. */
export const searchRequest = (id, query) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'tool_search', arguments: { query, limit: 2 } },
});

/** The headers a raw request of session `id` carries. */
export const sessionHeaders = (id) => ({ 'mcp-session-id': id, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION });

/** Calls HTTP_CATALOG's gen_chars with `count` and returns the id of the offloaded result. */
export async function offloadChars(assert, client, count) {
  const result = await client.callTool({ name: 'gen_chars', arguments: { count } });
  assert.notEqual(result.isError, true, short(result));
  const notice = parseOffloadNotice(textOf(result));
  assert.ok(notice, `no offload notice in ${short(result)}`);
  return notice.id;
}

/** Asserts that read_tool_result refuses `id` to this client as an unknown id. */
export async function expectResultRefused(assert, client, id) {
  const result = await client.callTool({ name: 'read_tool_result', arguments: { result_id: id, offset: 0 } });
  assert.equal(result.isError, true, short(result));
  assert.ok(textOf(result).startsWith(notFoundPrefix(id)), textOf(result));
}

/**
 * A running `toolmux serve --http 127.0.0.1:0` (or `listen`) with a fresh
 * --data-dir (or `dataDir`) and --root (or `root`), plus `args`. `url` is the endpoint the
 * "serving" log line names; `logs` are the stderr JSON lines parsed.
 */
export class HttpServer {
  /** Starts the server and waits for its "serving" line. `t` stops it after the test. */
  static async start(t, { args = [], env = {}, dataDir, root, catalog, listen } = {}) {
    const server = new HttpServer({ args, env, dataDir, root, catalog, listen });
    if (t) {
      t.after(async () => {
        if (process.env.TOOLMUX_E2E_STDERR && server.stderr) t.diagnostic(`toolmux stderr:\n${server.stderr}`);
        await server.kill();
      });
    }
    try {
      const serving = await server.waitForLog((line) => line.event === 'serving', 10000);
      server.url = serving.url;
      server.origin = new URL(serving.url).origin;
    } catch (error) {
      await server.kill();
      throw error;
    }
    return server;
  }

  constructor({ args, env, dataDir, root, catalog, listen = '127.0.0.1:0' }) {
    requireBinary();
    this.dataDir = dataDir ?? makeTempDir('toolmux-data-');
    this.root = root ?? makeRoot({});
    const argv = ['serve', '--http', listen, '--data-dir', this.dataDir, '--root', this.root];
    if (catalog) argv.push('--catalog', catalog);
    argv.push(...args);
    this.child = spawn(TOOLMUX_BIN, argv, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/', ...env },
    });
    this.stderr = '';
    this.logs = [];
    this.exit = null; // { code, signal, at }
    let buffer = '';
    this.child.stderr.on('data', (chunk) => {
      this.stderr += chunk.toString();
      buffer += chunk.toString();
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          this.logs.push(JSON.parse(line));
        } catch {
          // not a log line
        }
      }
    });
    // 'close': the process has exited and its stderr is read to the end.
    this.exited = once(this.child, 'close').then(([code, signal]) => {
      this.exit = { code, signal, at: performance.now() };
      return this.exit;
    });
  }

  /** The first log line (parsed) matching `predicate`; throws on timeout or exit. */
  async waitForLog(predicate, timeoutMs = 5000) {
    const start = Date.now();
    for (;;) {
      const line = this.logs.find(predicate);
      if (line) return line;
      if (this.exit) throw new Error(`toolmux exited (${JSON.stringify(this.exit)}); stderr:\n${this.stderr}`);
      if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for a log line; stderr:\n${this.stderr}`);
      await sleep(10);
    }
  }

  /** SIGTERM, then waits for the exit (SIGKILL after `timeoutMs`); returns { code, signal, ms }. */
  async stop(timeoutMs = 15000) {
    if (this.exit) return { ...this.exit, ms: 0 };
    const start = performance.now();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return { ...exit, ms: exit.at - start };
  }

  /** SIGTERM and asserts a clean exit (code 0) within `timeoutMs`. */
  async stopCleanly(assert, timeoutMs = 15000) {
    const exit = await this.stop(timeoutMs);
    assert.equal(exit.code, 0, `toolmux exited with ${JSON.stringify(exit)}; stderr:\n${this.stderr}`);
    return exit;
  }

  async kill() {
    if (!this.exit) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/**
 * Connects the SDK client to `url` over Streamable HTTP: initialize, or, with
 * `sessionId`, a transport that goes on with that session (the SDK skips
 * initialize then). `headers` go on every request (Authorization).
 * Returns { client, transport, sent, received, close() }; `t` closes it after the test.
 */
export async function connectHttp(t, url, { headers, sessionId, clientCapabilities = {} } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    sessionId,
    requestInit: headers ? { headers } : undefined,
    // Keep reconnection attempts short: a test stops servers under its clients.
    reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1, maxRetries: 1 },
  });
  const { sent, received } = tapTransport(transport);
  const errors = [];
  const client = new Client({ name: 'toolmux-e2e-http', version: '0.0.0' }, { capabilities: clientCapabilities });
  client.onerror = (error) => errors.push(error);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.close().catch(() => {});
  };
  if (t) t.after(close);
  await client.connect(transport);
  return { client, transport, sent, received, errors, close };
}

/** The example built on the library API (examples/conformance-server). */
export const EXAMPLE_BIN = process.env.TOOLMUX_EXAMPLE_BIN
  ? path.resolve(process.env.TOOLMUX_EXAMPLE_BIN)
  : path.join(REPO_ROOT, 'build/examples/conformance-server/toolmux-conformance-server');

/**
 * Starts the example over HTTP on a free port with a fresh --data-dir and
 * `args`; resolves its endpoint URL. `t` stops it after the test and checks
 * that it exits 0 on SIGTERM.
 */
export async function startExampleHttp(t, args = []) {
  if (!fs.existsSync(EXAMPLE_BIN)) throw new Error(`example server not built at ${EXAMPLE_BIN}`);
  const argv = ['serve', '--http', '127.0.0.1:0', '--data-dir', makeTempDir('toolmux-example-'), ...args];
  const child = spawn(EXAMPLE_BIN, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = once(child, 'exit');
  t.after(async () => {
    child.kill('SIGTERM');
    const [code] = await exited;
    if (code !== 0) throw new Error(`the example server exited with ${code} on SIGTERM`);
  });
  let stderr = '';
  for await (const chunk of child.stderr) {
    stderr += chunk.toString();
    const match = stderr.match(/"url":"([^"]+)"/);
    if (match) return match[1];
  }
  throw new Error(`the example server did not start:\n${stderr}`);
}

/** The standard headers of a raw POST to the endpoint, with `extra` over them. */
export function mcpHeaders(extra = {}) {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  };
}

/** A raw POST of `body` (an object, or a string sent as is). Returns the fetch Response. */
export function rawPost(url, body, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: mcpHeaders(headers),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The status of a raw GET (Accept: text/event-stream) with `headers`; a stream it opens is dropped. */
export async function rawGetStatus(url, headers = {}) {
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  await response.body?.cancel();
  return response.status;
}

/** An initialize request, as a raw client sends it. */
export const initializeRequest = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'toolmux-e2e-raw', version: '0.0.0' } },
});

/** initialize + notifications/initialized over raw fetch; returns the session id. */
export async function rawInitialize(url, headers = {}) {
  const response = await rawPost(url, initializeRequest(), headers);
  if (response.status !== 200) throw new Error(`initialize: HTTP ${response.status}: ${await response.text()}`);
  await response.text();
  const sessionId = response.headers.get('mcp-session-id');
  if (!sessionId) throw new Error('initialize: no Mcp-Session-Id');
  const sessionHeaders = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const initialized = await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders);
  await initialized.text();
  if (initialized.status !== 202) throw new Error(`notifications/initialized: HTTP ${initialized.status}`);
  return sessionId;
}

/**
 * Reads a text/event-stream body as it arrives. `events` holds every event
 * ({ id, data, retry }, data '' for the priming event); `message(i)` parses
 * one. `ended` resolves when the stream ends (or is aborted with close()).
 */
export class SseReader {
  /** Opens `url` with GET (Accept: text/event-stream) and `headers`; returns the reader, or the Response when not 200. */
  static async get(url, headers = {}) {
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...headers },
      signal: controller.signal,
    });
    if (response.status !== 200) return { response };
    return { response, reader: new SseReader(response, controller) };
  }

  /** POSTs `body` and reads the answer as a stream when it is one. */
  static async post(url, body, headers = {}) {
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders(headers),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    return { response, reader: new SseReader(response, controller) };
  }

  constructor(response, controller) {
    this.response = response;
    this.controller = controller;
    this.events = [];
    this.done = false;
    this.ended = this.#read().finally(() => {
      this.done = true;
    });
  }

  async #read() {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of this.response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = { id: undefined, data: undefined, retry: undefined };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') event.id = value;
            else if (field === 'retry') event.retry = Number(value);
            else if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
          }
          if (event.id !== undefined || event.data !== undefined) this.events.push(event);
        }
      }
    } catch {
      // aborted by close(), or the connection dropped
    }
  }

  /** The JSON-RPC messages of the events with data, in order. */
  messages() {
    return this.events.filter((e) => e.data).map((e) => JSON.parse(e.data));
  }

  /** Waits until an event matching `predicate` ({id, data, message}) has arrived; returns it. */
  async waitFor(predicate, timeoutMs = 5000, what = 'an SSE event') {
    return waitUntil(
      () => this.events.find((e) => predicate({ ...e, message: e.data ? JSON.parse(e.data) : undefined })),
      timeoutMs,
      what,
    ).catch((error) => {
      error.message += `; events so far: ${short(this.events, 2000)}`;
      throw error;
    });
  }

  /** Drops the connection. */
  close() {
    this.controller.abort();
    return this.ended;
  }
}

/**
 * A throwaway PostgreSQL server (tests/support/postgres.sh) for the rest of
 * test `t`, stopped and removed after it: createdb(name) gives a new
 * database's connection string, psql(url, sql) one query's rows (unaligned,
 * tuples only).
 */
export function startPostgres(t) {
  const script = path.join(REPO_ROOT, 'tests/support/postgres.sh');
  const parent = fs.mkdtempSync('/tmp/tmpg-');
  fs.chmodSync(parent, 0o755); // the server runs as nobody under root
  const dir = path.join(parent, 'pg');
  execFileSync('bash', [script, 'start', dir], { encoding: 'utf8' });
  t.after(() => {
    execFileSync('bash', [script, 'stop', dir]);
    fs.rmSync(parent, { recursive: true, force: true });
  });
  const bin = fs.readdirSync('/usr/lib/postgresql').sort().reverse()[0];
  return {
    dir,
    createdb: (name) => execFileSync('bash', [script, 'createdb', dir, name], { encoding: 'utf8' }).trim(),
    psql: (url, sql) =>
      execFileSync(`/usr/lib/postgresql/${bin}/bin/psql`, [url, '-Atc', sql], { encoding: 'utf8' }).trim(),
  };
}
