// The JSON Schema of the catalog file (schema/catalog.schema.json), held to
// the reader it describes: every catalog file of the repository is valid
// against the schema exactly when `toolmux check` finds no structural problem
// in it, and the schema reports each problem where toolmux does (at the same
// JSON pointer, or under it). The broken catalogs of
// tests/data/e2e/broken_catalogs/ (one defect each, in every section) fail
// both, and both agree on seeded single changes to valid catalogs. What a
// schema cannot see (files, environment variables, names one part of the
// file gives another) is listed in OUT_OF_REACH, as
// docs/catalog-file.md#editor-validation says.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import Ajv2020 from 'ajv/dist/2020.js';

import { REPO_ROOT, TOOLMUX_BIN, makeTempDir, requireBinary, startClient } from './helpers.mjs';

const SCHEMA_PATH = path.join(REPO_ROOT, 'schema/catalog.schema.json');
const BROKEN_DIR = path.join(REPO_ROOT, 'tests/data/e2e/broken_catalogs');

// Folders whose every .json file is a catalog (some deliberately broken, one
// not even JSON); elsewhere a catalog is a JSON object with "tools" or
// "upstreams" at its top.
const CATALOG_FOLDERS = ['tests/data/catalogs', 'tests/fuzz/corpus/catalog_file_fuzz', 'tests/data/e2e/broken_catalogs'];
const SEARCHED_FOLDERS = ['examples', 'bench', 'tests/data', 'tests/fuzz/corpus/catalog_file_fuzz'];

// Problems `toolmux check` finds that no JSON Schema can: each pattern matches
// the message of one kind. Keep in step with docs/catalog-file.md#editor-validation.
const OUT_OF_REACH = [
  // The text rather than the value: a parser keeps one of two repeated keys,
  // and JavaScript strings cannot hold invalid UTF-8.
  /^repeated object key "/,
  /^invalid UTF-8 in string$/,
  /^escaped lone surrogate /,
  /^nested deeper than \d+ levels$/,
  // The machine the file is loaded on.
  /^the working directory "(?:[^"\\]|\\.)+" (?:does not exist|is not a directory) \(resolved to /,
  /^toolmux's environment has no variable /,
  /^cannot read /,
  // Names one part of the file gives another, or that the built-in tools hold.
  /: the name is already used by \/tools\/\d+$/,
  /: the name is already taken by a tool registered before the catalog$/,
  /: the name is reserved for toolmux's own /,
  /^placeholder \{.*\} names no property of the input schema$/,
  /^alias ".*" (?:collides with tool|points at )/,
  /^argument aliases for /,
  /^argument alias ".*" (?:collides with argument|points at argument)/,
  /^argument policy for tool /,
  /^tool ".*" declares no argument /,
  /^the (?:default|fixed value) .* does not match the input schema of tool /,
  /^argument ".*" has both a default and a fixed value /,
  /^pinned tool ".*" does not exist$/,
  /^maxDelayMs is smaller than initialDelayMs$/,
  // inputSchema and outputSchema past "type": "object": toolmux's own
  // contract for tool schemas (docs/tool-contract.md).
  /^tool ".*": (?:inputSchema|outputSchema): /,
];

/** The value at a JSON pointer of `document`, or undefined. */
function valueAt(document, pointer) {
  if (pointer === '') return document;
  let node = document;
  for (const token of pointer.slice(1).split('/')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[token.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

// Whether check's problem is one no JSON Schema can see. Besides the kinds
// above: a whole number written with a fraction or an exponent (1024.0,
// 1.5e9) is a number to toolmux, which wants an integer written as one, and
// an integer to JSON Schema, which sees values, not how they are written.
function outOfReach(problem, document) {
  if (OUT_OF_REACH.some((pattern) => pattern.test(problem.message))) return true;
  return /^expected an integer, got a number$/.test(problem.message) && Number.isInteger(valueAt(document, problem.pointer));
}

// The keywords VS Code adds to JSON Schema for its messages; annotations
// for every other validator, declared so that strict mode accepts them.
const EDITOR_KEYWORDS = ['patternErrorMessage', 'errorMessage'];

function compileSchema() {
  // strictTuples is off for one rule only: "argv" is an open tuple on purpose
  // (prefixItems for the program, items for its arguments), which that rule,
  // written against tuples that forget their length, would refuse.
  const ajv = new Ajv2020({ strict: true, strictTuples: false, allErrors: true });
  ajv.addVocabulary(EDITOR_KEYWORDS);
  return ajv.compile(JSON.parse(fs.readFileSync(SCHEMA_PATH, 'utf8')));
}

const escapeToken = (token) => token.replace(/~/g, '~0').replace(/\//g, '~1');

// The JSON pointer an ajv error is about, as toolmux would name it: an
// unknown field or a bad property name at its own pointer, a missing field at
// its object. null for "if", which only says which branch failed.
function errorPointer(error) {
  if (error.keyword === 'if') return null;
  if (error.keyword === 'additionalProperties') {
    return `${error.instancePath}/${escapeToken(error.params.additionalProperty)}`;
  }
  const name = error.propertyName ?? error.params?.propertyName;
  if (name !== undefined) return `${error.instancePath}/${escapeToken(name)}`;
  return error.instancePath;
}

const atOrUnder = (pointer, base) => pointer === base || pointer.startsWith(`${base}/`);

// A pointer as check prints it: the characters a terminal would act on as
// their JSON escapes (docs/command-line.md#files-and-the-terminal).
const SHORT_ESCAPES = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const asPrinted = (text) => text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
  (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The schema's errors about a parsed document, each {pointer, message}; none when it is valid. */
function schemaErrors(validate, document) {
  if (validate(document)) return [];
  return validate.errors
    .map((error) => ({ pointer: errorPointer(error), message: `${error.keyword}: ${error.message}` }))
    .filter((error) => error.pointer !== null)
    .map((error) => ({ ...error, pointer: asPrinted(error.pointer) }));
}

/** `toolmux check FILE`: its exit code and its problems, each {pointer, message}. */
function runCheck(file) {
  requireBinary();
  return new Promise((resolve, reject) => {
    // Only PATH from this environment: a variable a catalog names by
    // "fromEnv" must not make the result depend on who runs the test.
    execFile(TOOLMUX_BIN, ['check', file], { cwd: REPO_ROOT, env: { PATH: process.env.PATH }, timeout: 20000 },
      (error, stdout, stderr) => {
        const code = error ? error.code : 0;
        if (typeof code !== 'number') return reject(new Error(`toolmux check ${file}: ${error.message}; ${stderr}`));
        // "FILE: N problems", then "  <pointer>: <message>" for each.
        const [summary, ...lines] = stdout.split('\n').filter((line) => line !== '');
        const odd = lines.find((line) => !line.startsWith('  ') || !line.includes(': '));
        if (odd !== undefined) return reject(new Error(`toolmux check ${file}: unexpected line ${JSON.stringify(odd)}`));
        const problems = lines.map((line) => {
          const rest = line.slice(2);
          const colon = rest.indexOf(': ');
          return { pointer: rest.slice(0, colon), message: rest.slice(colon + 2) };
        });
        resolve({ code, summary, problems, stderr });
      });
  });
}

// `toolmux check` of each file once, a few at a time: the tests below ask
// about the same files, and one at a time they would take half a minute.
const CHECKS_AT_ONCE = 4;
const checks = new Map();
const waiting = [];
let running = 0;
function checkOf(file) {
  if (!checks.has(file)) {
    checks.set(file, new Promise((resolve, reject) => waiting.push({ file, resolve, reject })));
    startChecks();
  }
  return checks.get(file);
}
function startChecks() {
  while (running < CHECKS_AT_ONCE && waiting.length > 0) {
    const { file, resolve, reject } = waiting.shift();
    running += 1;
    runCheck(file).then(resolve, reject).finally(() => {
      running -= 1;
      startChecks();
    });
  }
}

function jsonFilesUnder(folder) {
  const out = [];
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...jsonFilesUnder(full));
    } else if (entry.name.endsWith('.json')) {
      out.push(full);
    }
  }
  return out;
}

/** Every catalog file of the repository's examples, benchmarks and tests, relative to the repository. */
function catalogFiles() {
  const found = new Set();
  for (const folder of SEARCHED_FOLDERS) {
    for (const file of jsonFilesUnder(path.join(REPO_ROOT, folder))) {
      const relative = path.relative(REPO_ROOT, file);
      if (CATALOG_FOLDERS.some((catalogs) => relative.startsWith(`${catalogs}/`))) {
        found.add(relative);
        continue;
      }
      let value;
      try {
        value = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch {
        continue;
      }
      if (value && typeof value === 'object' && !Array.isArray(value) && ('tools' in value || 'upstreams' in value)) {
        found.add(relative);
      }
    }
  }
  return [...found].sort();
}

function describeProblems(problems) {
  return problems.map((p) => `\n    ${p.pointer}: ${p.message}`).join('') || ' none';
}

/**
 * Asserts that the schema and toolmux agree on `file`: valid exactly when
 * check has no structural problem, and each side's problems where the other's are.
 * (check names the tools that aliases and policy refer to only once the file
 * loads without a problem: a file refused for a missing variable hides a bad
 * alias name from it, so such a file would have to keep the two apart.)
 */
async function assertAgree(validate, file) {
  let document;
  let notJson;
  try {
    document = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    notJson = error;
  }
  // Not JSON: an editor says so, and so does toolmux.
  const errors = notJson ? [{ pointer: '', message: `not JSON: ${notJson.message}` }] : schemaErrors(validate, document);
  const { code, summary, problems } = await checkOf(file);
  assert.equal(code, problems.length === 0 ? 0 : 1, `check ${file}: exit ${code} with ${summary}`);
  const beyond = problems.filter((problem) => outOfReach(problem, document));
  const structural = problems.filter((problem) => !outOfReach(problem, document));
  const report =
    `\n  toolmux check (structural):${describeProblems(structural)}` +
    `\n  toolmux check (out of a schema's reach):${describeProblems(beyond)}` +
    `\n  the schema:${describeProblems(errors)}`;
  assert.equal(errors.length === 0, structural.length === 0, `${file}: the schema and toolmux check disagree${report}`);
  for (const problem of structural) {
    assert.ok(errors.some((error) => atOrUnder(error.pointer, problem.pointer)),
      `${file}: the schema reports nothing at or under ${problem.pointer || '""'}${report}`);
  }
  for (const error of errors) {
    assert.ok(structural.some((problem) => atOrUnder(error.pointer, problem.pointer)),
      `${file}: the schema reports ${error.pointer || '""'}, where toolmux finds no structural problem${report}`);
  }
  return { errors, problems, structural, beyond };
}

test('the catalog schema compiles in ajv strict mode, refers to nothing outside itself, and titles and describes every property', () => {
  compileSchema();
  const schema = JSON.parse(fs.readFileSync(SCHEMA_PATH, 'utf8'));
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  const target = (ref) => ref.slice(2).split('/').reduce((node, token) => node[token.replace(/~1/g, '/').replace(/~0/g, '~')], schema);
  const missing = [];
  const visit = (node, at) => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') {
      assert.match(node.$ref, /^#\//, `${at}: $ref ${node.$ref} points outside the file`);
      assert.ok(target(node.$ref) !== undefined, `${at}: $ref ${node.$ref} points at nothing`);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && at !== '/$defs/toolSchema') {
        for (const [name, property] of Object.entries(value)) {
          if (property === true || (property && property.not && Object.keys(property.not).length === 0)) continue;
          const resolved = property.$ref ? { ...target(property.$ref), ...property } : property;
          if (!resolved.title || !resolved.description) missing.push(`${at}/properties/${name}`);
        }
      }
      visit(value, `${at}/${key}`);
    }
  };
  visit(schema, '');
  assert.deepEqual(missing, [], 'properties without a title or a description');
});

test('every catalog of examples/, bench/ and tests/ names the schema in "$schema" by a relative path', () => {
  const files = catalogFiles();
  assert.ok(files.length >= 40, `only ${files.length} catalog files found: ${files}`);
  const wrong = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
    // The text, not the parsed value: one of them is deliberately not JSON.
    const named = /"\$schema"\s*:\s*"([^"]*)"/.exec(text);
    if (!named || path.isAbsolute(named[1]) || path.resolve(REPO_ROOT, path.dirname(file), named[1]) !== SCHEMA_PATH) {
      wrong.push(`${file}: ${named ? named[1] : 'no $schema'}`);
    }
  }
  assert.deepEqual(wrong, [], 'catalogs whose $schema is not the relative path to schema/catalog.schema.json');
});

// Over a hundred runs of toolmux check: more than npm test's 30 s default on a
// loaded machine, hence the test's own timeout.
const MANY_CHECKS = { timeout: 180000 };

test('every catalog is valid against the schema exactly when toolmux check finds no structural problem', MANY_CHECKS, async (t) => {
  const validate = compileSchema();
  const files = catalogFiles();
  for (const file of files) checkOf(path.join(REPO_ROOT, file)).catch(() => {});
  let valid = 0;
  let outOfReachOnly = 0;
  for (const file of files) {
    await t.test(file, async () => {
      const { errors, problems, structural } = await assertAgree(validate, path.join(REPO_ROOT, file));
      if (errors.length === 0) valid += 1;
      if (structural.length === 0 && problems.length > 0) outOfReachOnly += 1;
    });
  }
  // Both kinds are there: valid files, and files refused only for what a schema cannot see.
  t.diagnostic(`${files.length} catalogs: ${valid} valid against the schema, ${outOfReachOnly} of them refused by check for problems out of its reach`);
  assert.ok(valid >= 20, `only ${valid} catalogs valid against the schema`);
  assert.ok(outOfReachOnly >= 3, `only ${outOfReachOnly} catalogs refused for problems out of a schema's reach`);
});

test('each broken catalog fails both the schema and toolmux check, at the same place', MANY_CHECKS, async (t) => {
  const validate = compileSchema();
  const files = fs.readdirSync(BROKEN_DIR).filter((name) => name.endsWith('.json')).sort();
  assert.ok(files.length >= 15, `only ${files.length} broken catalogs`);
  const sections = new Set();
  for (const name of files) {
    await t.test(name, async () => {
      const file = path.join(BROKEN_DIR, name);
      const { errors, problems, structural, beyond } = await assertAgree(validate, file);
      assert.ok(problems.length > 0, `toolmux check passed ${name}`);
      assert.deepEqual(beyond, [], `${name} has a problem out of a schema's reach`);
      assert.ok(errors.length > 0, `the schema passed ${name}`);
      // One defect: every problem at or under the first's pointer (a secret
      // with a misspelt field is two problems, the field and its object).
      const base = structural.map((p) => p.pointer).sort((a, b) => a.length - b.length)[0];
      for (const problem of structural) assert.ok(atOrUnder(problem.pointer, base), `${name}: more than one defect${describeProblems(structural)}`);
      sections.add(base.split('/')[1] ?? '');
    });
  }
  for (const section of ['', 'tools', 'aliases', 'policy', 'results', 'discovery', 'search', 'upstreams']) {
    assert.ok(sections.has(section), `no broken catalog with its defect in ${section ? `"${section}"` : 'the top level'}`);
  }
});

test('"$schema" is never read: a URL or a missing file there changes nothing, and nothing is fetched', async (t) => {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    response.writeHead(500).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/catalog.schema.json`;
  const dir = makeTempDir('toolmux-schema-');
  const tool = {
    name: 'say_hello',
    description: 'Prints hello.',
    inputSchema: { type: 'object' },
    sideEffect: 'read_only',
    timeoutMs: 5000,
    command: { argv: ['echo', 'hello'] },
  };
  for (const [name, reference] of [['url.json', url], ['missing.json', path.join(dir, 'no-such-schema.json')], ['folder.json', dir]]) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify({ $schema: reference, tools: [tool] }));
    const { code, summary } = await runCheck(file);
    assert.equal(code, 0, `check with $schema ${reference}: ${summary}`);
    assert.match(summary, /: ok, 1 command tools/);
  }
  const { client } = await startClient(t, {
    args: ['serve', '--catalog', path.join(dir, 'url.json'), '--root', dir, '--data-dir', path.join(dir, 'data'), '--no-journal'],
  });
  const { tools } = await client.listTools();
  assert.ok(tools.some((listed) => listed.name === 'say_hello'), `tools: ${tools.map((listed) => listed.name)}`);
  const result = await client.callTool({ name: 'say_hello', arguments: {} });
  assert.equal(result.content[0].text, 'hello\n');
  assert.equal(requests, 0, 'toolmux fetched the URL in "$schema"');
});

// One change at a time to a valid catalog: a value replaced by one of
// MUTATION_VALUES (ends of ranges, wrong types, bad names), a field renamed as
// if misspelt, or a field removed. The fixed seed makes the same changes each
// run; a failure names the change.
const MUTATION_BASES = ['tests/data/e2e/schema_edges/edges.json', 'examples/catalog.json', 'examples/upstreams.json'];
const MUTATIONS = 120;
const MUTATION_SEED = 16;
const MUTATION_VALUES = [
  0, -1, 1, 1.5, -0.5, 100.5, 1e3, 65, 2147483648, 1073741825, 86400001, '', ' ', 'x', 'a b', '{x', 'x}',
  'read_only', 'http://x', 'ftp://x', true, null, [], {}, ['x'], [1], { fromEnv: 'PATH' }, { fromFile: 'token.txt' },
];

/** A pseudo-random number generator in [0, 1) (mulberry32), the same for the same seed. */
function randomFrom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every place in `value` below its root, as a list of keys and indexes. */
function places(value, at = [], out = []) {
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const place = [...at, Array.isArray(value) ? Number(key) : key];
      out.push(place);
      places(value[key], place, out);
    }
  }
  return out;
}

test('one change at a time to a valid catalog: the schema and toolmux check still agree', MANY_CHECKS, async (t) => {
  const validate = compileSchema();
  const dir = makeTempDir('toolmux-schema-changes-');
  // edges.json reads a secret from token.txt beside it; "cwd": "." is the folder itself.
  fs.copyFileSync(path.join(REPO_ROOT, 'tests/data/e2e/schema_edges/token.txt'), path.join(dir, 'token.txt'));
  const random = randomFrom(MUTATION_SEED);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const changes = [];
  for (let i = 0; i < MUTATIONS; i += 1) {
    const base = MUTATION_BASES[i % MUTATION_BASES.length];
    const document = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, base), 'utf8'));
    const place = pick(places(document));
    const parent = place.slice(0, -1).reduce((node, key) => node[key], document);
    const key = place[place.length - 1];
    const pointer = `/${place.map((token) => escapeToken(String(token))).join('/')}`;
    const kind = Array.isArray(parent) ? 0 : random();
    let what;
    if (kind < 0.6) {
      const value = pick(MUTATION_VALUES);
      parent[key] = value;
      what = `${pointer} = ${JSON.stringify(value)}`;
    } else if (kind < 0.8) {
      parent[`${key}s`] = parent[key];
      delete parent[key];
      what = `${pointer} renamed ${key}s`;
    } else {
      delete parent[key];
      what = `${pointer} removed`;
    }
    const file = path.join(dir, `change_${i}.json`);
    fs.writeFileSync(file, JSON.stringify(document, null, 2));
    changes.push({ name: `${base} ${what}`, file });
    checkOf(file).catch(() => {});
  }
  for (const { name, file } of changes) {
    await t.test(name, () => assertAgree(validate, file));
  }
});
