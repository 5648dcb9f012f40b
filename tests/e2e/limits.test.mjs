// The catalog file's "results" section, seen by the real SDK client over
// stdio: truncation at maxTextChars (exactly at the limit and one character
// over, never inside a character), offloading of large results to the result
// store under --data-dir and reading them back with read_tool_result (byte for
// byte, across pages that split between multi-byte characters),
// structuredContent that stays valid for the SDK, ids that another session
// cannot read, and two servers sharing one data folder.
//
// The command tools gen_chars and gen_lines (tests/data/e2e/limits/) print
// text with 1-, 2-, 3- and 4-byte UTF-8 characters; genCharsText and
// genLinesText (helpers.mjs) build the same text here to compare with.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  charCount,
  codePoints,
  expectedOffloadNotice,
  genCharsText,
  genLinesText,
  firstChars,
  limitsCatalog,
  makeTempDir,
  notFoundPrefix,
  parseOffloadNotice,
  readStoredResult,
  serveStore,
  short,
  textOf,
  truncationMarker,
} from './helpers.mjs';

const TRUNCATE = limitsCatalog('truncate.catalog.json'); // maxTextChars 1000, offload false
const OFFLOAD = limitsCatalog('offload.catalog.json'); // the defaults: offload over 50000 bytes
const OFFLOAD_SMALL = limitsCatalog('offload_small.catalog.json'); // offload over 1024 bytes, maxTextChars -1
const STRUCTURED_CHARS = limitsCatalog('structured_chars.catalog.json'); // maxTextChars 3000, offload at 50000 bytes

const utf8 = (text) => Buffer.from(text, 'utf8');

/** Asserts that two texts are the same bytes, with a useful message where they differ. */
function assertSameBytes(actual, expected, what) {
  const a = utf8(actual);
  const b = utf8(expected);
  if (a.equals(b)) return;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  assert.fail(
    `${what}: ${a.length} bytes, expected ${b.length}; first difference at byte ${i}: ` +
      `got ${JSON.stringify(a.subarray(i, i + 40).toString())}, expected ${JSON.stringify(b.subarray(i, i + 40).toString())}`,
  );
}

/** The single offloaded text block of a result, parsed; checks its preview and notice exactly. */
function expectOffloaded(result, original, what = 'this result') {
  const block = result.content.find((b) => b.type === 'text' && parseOffloadNotice(b.text)?.what === what);
  assert.ok(block, `no "${what}" offload notice in ${short(result, 3000)}`);
  const notice = parseOffloadNotice(block.text);
  assert.match(notice.id, /^[A-Za-z0-9_-]{43}$/, `result_id ${notice.id} is not 43 base64url characters`);
  assert.equal(notice.bytes, Buffer.byteLength(original, 'utf8'), 'the notice gives the wrong byte count');
  assert.equal(notice.chars, charCount(original), 'the notice gives the wrong character count');
  assertSameBytes(notice.preview, firstChars(original, 2000), 'the preview (the first 2000 characters)');
  assert.equal(notice.notice, expectedOffloadNotice(original, notice.id, what));
  return notice;
}

/** Names of a folder with long names of 1- to 4-byte characters, so that its listing is large. */
function longNames(count) {
  const names = [];
  for (let i = 0; i < count; i++) {
    names.push(`entry-${String(i).padStart(4, '0')}-é☃𝄞-${'naïve-snow☃-clef𝄞-'.repeat(3)}end`);
  }
  return names.sort();
}

/** list_directory's text and structuredContent for a folder `folder` of empty files `names`. */
function expectedListing(folder, names) {
  const sorted = [...names].sort((a, b) => Buffer.compare(utf8(a), utf8(b)));
  return {
    text: sorted.join('\n'),
    // nlohmann::json orders keys alphabetically; toolmux serializes compactly.
    structured: { entries: sorted.map((name) => ({ name, size: 0, type: 'file' })), path: folder },
  };
}

function folderFiles(folder, names) {
  return Object.fromEntries(names.map((name) => [`${folder}/${name}`, '']));
}

// ---------------------------------------------------------------------------
// Truncation

test('truncation: a text of exactly maxTextChars characters is unchanged; one character over is cut with the marker', async (t) => {
  const { client } = await serveStore(t, { catalog: TRUNCATE });
  // The four starts put each of the 1- to 4-byte characters at the limit.
  for (let start = 0; start < 4; start++) {
    const exact = await client.callTool({ name: 'gen_chars', arguments: { count: 1000, start } });
    assert.notEqual(exact.isError, true, short(exact));
    assert.equal(exact.content.length, 1);
    assertSameBytes(exact.content[0].text, genCharsText(1000, start), `1000 characters from ${start}`);

    const under = await client.callTool({ name: 'gen_chars', arguments: { count: 999, start } });
    assertSameBytes(under.content[0].text, genCharsText(999, start), `999 characters from ${start}`);

    const over = await client.callTool({ name: 'gen_chars', arguments: { count: 1001, start } });
    assert.notEqual(over.isError, true, short(over));
    assert.equal(over.content.length, 1);
    assertSameBytes(
      over.content[0].text,
      genCharsText(1000, start) + truncationMarker(1000, 1001),
      `1001 characters from ${start}`,
    );
  }
});

test('truncation: a long text is cut at exactly maxTextChars characters, never inside a character', async (t) => {
  const { client } = await serveStore(t, { catalog: TRUNCATE });
  // 250000 characters are 625000 bytes, over the default offload threshold: "offload": false keeps them inline.
  const result = await client.callTool({ name: 'gen_chars', arguments: { count: 250000, start: 3 } });
  assert.notEqual(result.isError, true, short(result));
  const text = result.content[0].text;
  assert.ok(!text.includes('\uFFFD'), 'a replacement character: a character was cut');
  assertSameBytes(text, genCharsText(1000, 3) + truncationMarker(1000, 250000), 'the cut text');
});

// ---------------------------------------------------------------------------
// Offloading

test('offload threshold: 1024 bytes stay inline, 1025 bytes are stored (preview is the whole text) and read back', async (t) => {
  const { client } = await serveStore(t, { catalog: OFFLOAD_SMALL });
  // From start 3 (𝄞 a é ☃ ...): 409 characters are 1024 bytes, 410 are 1025.
  assert.equal(Buffer.byteLength(genCharsText(409, 3)), 1024);
  const inline = await client.callTool({ name: 'gen_chars', arguments: { count: 409, start: 3 } });
  assert.notEqual(inline.isError, true, short(inline));
  assertSameBytes(textOf(inline), genCharsText(409, 3), 'the 1024-byte text');

  const original = genCharsText(410, 3);
  const stored = await client.callTool({ name: 'gen_chars', arguments: { count: 410, start: 3 } });
  assert.notEqual(stored.isError, true, short(stored));
  assert.equal(stored.content.length, 1, short(stored));
  const notice = expectOffloaded(stored, original);
  assert.equal(notice.previewChars, null, 'a preview that is the whole text must not say "its first 2000 characters are above"');
  const back = await readStoredResult(assert, client, notice.id);
  assert.equal(back.pages, 1);
  assertSameBytes(back.text, original, 'the text read back');
});

/** Byte offsets of each character of a UTF-8 buffer, and of its end: starts[k] is where character k begins. */
function charStarts(buffer) {
  const starts = new Uint32Array(buffer.length + 1);
  let n = 0;
  for (let i = 0; i < buffer.length; i++) if ((buffer[i] & 0xc0) !== 0x80) starts[n++] = i;
  starts[n] = buffer.length;
  return starts.subarray(0, n + 1);
}

test('offload: a 5 MB result is stored and read back byte for byte, in 20000- and 7777-character pages', async (t) => {
  const { client } = await serveStore(t, { catalog: OFFLOAD });
  const lines = 215000;
  const original = genLinesText(lines);
  const bytes = utf8(original);
  assert.ok(bytes.length > 5_000_000, `the test text is only ${bytes.length} bytes`);
  const starts = charStarts(bytes);
  const total = starts.length - 1;
  const chars = (from, to) => bytes.subarray(starts[from], starts[Math.min(to, total)]).toString('utf8');
  const charBytes = (k) => starts[k + 1] - starts[k];

  const result = await client.callTool({ name: 'gen_lines', arguments: { lines } });
  assert.notEqual(result.isError, true, short(result));
  assert.equal(result.content.length, 1, short(result));
  const notice = expectOffloaded(result, original);
  assert.equal(notice.previewChars, 2000);

  // Whole pages of the default size (max_chars left out: 20000).
  const whole = await readStoredResult(assert, client, notice.id);
  assert.equal(whole.totalChars, total);
  assert.equal(whole.pages, Math.ceil(total / 20000));
  assertSameBytes(whole.text, original, 'the result read back in 20000-character pages');

  // Mixed page sizes (7777 among them), at the start and up to the end, so that pages start and end next to
  // every character size.
  const sizes = [7777, 20000, 1, 12345, 7777, 19999, 3];
  const maxChars = (page) => sizes[page % sizes.length];
  const head = await readStoredResult(assert, client, notice.id, { maxChars, maxPages: 30 });
  assertSameBytes(head.text, chars(0, head.end), 'the first 30 mixed pages');
  const tailFrom = total - 100000;
  const tail = await readStoredResult(assert, client, notice.id, { maxChars, offset: tailFrom });
  assertSameBytes(tail.text, chars(tailFrom, total), 'the mixed pages to the end');
  const boundaries = new Set();
  for (const [from, pages] of [[0, head.pages], [tailFrom, tail.pages]]) {
    let offset = from;
    for (let page = 0; page < pages && offset < total; page++) {
      offset += maxChars(page);
      if (offset < total) boundaries.add(`${charBytes(offset - 1)}|${charBytes(offset)}`);
    }
  }
  for (const size of [2, 3, 4]) {
    assert.ok([...boundaries].some((pair) => pair.startsWith(`${size}|`)), `no page ended just after a ${size}-byte character`);
    assert.ok([...boundaries].some((pair) => pair.endsWith(`|${size}`)), `no page started with a ${size}-byte character`);
  }

  // One page from the middle, at an offset that is not a page boundary.
  const middle = await client.callTool({ name: 'read_tool_result', arguments: { result_id: notice.id, offset: 1234567, max_chars: 7777 } });
  assert.notEqual(middle.isError, true, short(middle));
  assertSameBytes(middle.content[0].text, chars(1234567, 1234567 + 7777), 'the page at offset 1234567');
  assert.deepEqual(middle.structuredContent, {
    result_id: notice.id,
    offset: 1234567,
    returned_chars: 7777,
    total_chars: total,
    next_offset: 1234567 + 7777,
  });

  // The end: an offset equal to the length is an empty last page; past it is an error.
  const atEnd = await client.callTool({ name: 'read_tool_result', arguments: { result_id: notice.id, offset: total } });
  assert.notEqual(atEnd.isError, true, short(atEnd));
  assert.equal(atEnd.content[0].text, '');
  assert.deepEqual(atEnd.structuredContent, { result_id: notice.id, offset: total, returned_chars: 0, total_chars: total });
  const past = await client.callTool({ name: 'read_tool_result', arguments: { result_id: notice.id, offset: total + 1 } });
  assert.equal(past.isError, true, short(past));
  assert.match(textOf(past), /past the end/);
  // max_chars is 1..20000.
  for (const max of [0, 20001]) {
    const bad = await client.callTool({ name: 'read_tool_result', arguments: { result_id: notice.id, max_chars: max } });
    assert.equal(bad.isError, true, short(bad));
    assert.match(textOf(bad), /^Invalid arguments for tool "read_tool_result": .*max_chars/);
  }
});

test('offloading takes precedence over truncation: over the threshold the text is stored, not cut', async (t) => {
  const { client } = await serveStore(t, { catalog: STRUCTURED_CHARS }); // maxTextChars 3000, offload over 50000 bytes
  // 3001 characters (7503 bytes): under the threshold, so cut at 3000.
  const cut = await client.callTool({ name: 'gen_chars', arguments: { count: 3001, start: 2 } });
  assertSameBytes(textOf(cut), genCharsText(3000, 2) + truncationMarker(3000, 3001), '3001 characters');
  // 30000 characters (75000 bytes): over the threshold, so stored whole, even though it is over maxTextChars too.
  const original = genCharsText(30000, 2);
  const stored = await client.callTool({ name: 'gen_chars', arguments: { count: 30000, start: 2 } });
  assert.notEqual(stored.isError, true, short(stored));
  assert.ok(!textOf(stored).includes('[toolmux: truncated'), 'the offloaded text was truncated too');
  const notice = expectOffloaded(stored, original);
  assertSameBytes((await readStoredResult(assert, client, notice.id)).text, original, 'the text read back');
});

// ---------------------------------------------------------------------------
// structuredContent (list_directory has an outputSchema; the SDK validates
// structuredContent against it in callTool, so no exception = valid)

test('structured: a listing under the limits passes whole, and the SDK validates it', async (t) => {
  const names = longNames(60);
  const { client } = await serveStore(t, { catalog: OFFLOAD, files: folderFiles('many', names) });
  const expected = expectedListing('many', names);
  assert.ok(Buffer.byteLength(JSON.stringify(expected.structured)) < 50000);
  const result = await client.callTool({ name: 'list_directory', arguments: { path: 'many' } });
  assert.notEqual(result.isError, true, short(result));
  assert.deepEqual(result.structuredContent, expected.structured);
  assertSameBytes(textOf(result), expected.text, 'the listing');
});

test('structured: over maxTextChars with offloading off, the text is truncated and structuredContent withheld (isError)', async (t) => {
  const names = longNames(20);
  const { client } = await serveStore(t, { catalog: TRUNCATE, files: folderFiles('many', names) });
  const expected = expectedListing('many', names);
  const serialized = JSON.stringify(expected.structured);
  assert.ok(charCount(expected.text) > 1000);
  // callTool does not throw: an isError result needs no structuredContent.
  const result = await client.callTool({ name: 'list_directory', arguments: { path: 'many' } });
  assert.equal(result.isError, true, short(result));
  assert.equal(result.structuredContent, undefined, 'structuredContent over the limit was returned');
  assert.equal(result.content.length, 2, short(result));
  assertSameBytes(
    result.content[0].text,
    codePoints(expected.text).slice(0, 1000).join('') + truncationMarker(1000, charCount(expected.text)),
    'the truncated listing',
  );
  assert.equal(
    result.content[1].text,
    `[toolmux: the structured result is ${Buffer.byteLength(serialized)} bytes, over this server's limit; it was not returned]`,
  );
});

test('structured: over the offload threshold, text and structuredContent are stored; isError with a result_id; both read back', async (t) => {
  const names = longNames(20);
  const { client } = await serveStore(t, { catalog: OFFLOAD_SMALL, files: folderFiles('many', names) });
  const expected = expectedListing('many', names);
  const result = await client.callTool({ name: 'list_directory', arguments: { path: 'many' } });
  assert.equal(result.isError, true, short(result));
  assert.equal(result.structuredContent, undefined);
  assert.equal(result.content.length, 2, short(result));
  const text = expectOffloaded(result, expected.text, 'this result');
  const structured = expectOffloaded(result, JSON.stringify(expected.structured), 'the structured result');
  assert.notEqual(text.id, structured.id);
  assertSameBytes((await readStoredResult(assert, client, text.id)).text, expected.text, 'the stored listing');
  const storedJson = (await readStoredResult(assert, client, structured.id)).text;
  assert.deepEqual(JSON.parse(storedJson), expected.structured);
});

test('structured: over maxTextChars (but under the offload threshold) with offloading on, structuredContent is stored', async (t) => {
  // 50 long names: the listing is over 3000 characters, its JSON under 50000 bytes.
  const names = longNames(50);
  const { client } = await serveStore(t, { catalog: STRUCTURED_CHARS, files: folderFiles('many', names) });
  const expected = expectedListing('many', names);
  const serialized = JSON.stringify(expected.structured);
  assert.ok(charCount(expected.text) > 3000 && Buffer.byteLength(serialized) < 50000);
  const result = await client.callTool({ name: 'list_directory', arguments: { path: 'many' } });
  assert.equal(result.isError, true, short(result));
  assert.equal(result.structuredContent, undefined);
  assertSameBytes(
    result.content[0].text,
    codePoints(expected.text).slice(0, 3000).join('') + truncationMarker(3000, charCount(expected.text)),
    'the truncated listing',
  );
  const block = result.content.find((b) => parseOffloadNotice(b.text)?.what === 'the structured result');
  assert.ok(block, `structuredContent over maxTextChars was not stored, though offloading is on: ${short(result.content.slice(1))}`);
  const notice = expectOffloaded(result, serialized, 'the structured result');
  assert.deepEqual(JSON.parse((await readStoredResult(assert, client, notice.id)).text), expected.structured);
});

// ---------------------------------------------------------------------------
// Result ids: only the session that stored a result can read it

test('result ids: forged, case-changed, padded and foreign ids are refused alike; the owner reads its own', async (t) => {
  const shared = makeTempDir('toolmux-data-');
  const [a, b, c] = await Promise.all([
    serveStore(t, { catalog: OFFLOAD, dataDir: shared }),
    serveStore(t, { catalog: OFFLOAD, dataDir: shared }),
    serveStore(t, { catalog: OFFLOAD }), // a data dir of its own
  ]);
  const original = genLinesText(4000);
  const stored = await a.client.callTool({ name: 'gen_lines', arguments: { lines: 4000 } });
  const { id } = expectOffloaded(stored, original);

  const flipCase = (s) => {
    const i = [...s].findIndex((ch) => ch.toLowerCase() !== ch.toUpperCase());
    const ch = s[i];
    return s.slice(0, i) + (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) + s.slice(i + 1);
  };
  const forged = crypto.randomBytes(32).toString('base64url');
  const refused = async (session, candidate, what) => {
    const result = await session.client.callTool({ name: 'read_tool_result', arguments: { result_id: candidate, offset: 0 } });
    assert.equal(result.isError, true, `${what}: ${short(result)}`);
    assert.ok(textOf(result).startsWith(notFoundPrefix(candidate)), `${what}: ${textOf(result)}`);
    return textOf(result);
  };
  await refused(a, forged, 'a forged id');
  await refused(a, flipCase(id), 'the id with one letter in the other case');
  await refused(a, `${id} `, 'the id with a trailing space');
  await refused(a, ` ${id}`, 'the id with a leading space');
  await refused(a, id.slice(0, -1), 'the id without its last character');
  // Another process on the same data dir (running at the same time), and one on another data dir.
  const foreignSame = await refused(b, id, "another process's id (same data dir)");
  const foreignOther = await refused(c, id, "another process's id (other data dir)");
  const unknown = await refused(b, forged, 'a forged id');
  // The same answer as for an id that never existed, so ids cannot be probed.
  assert.equal(foreignSame.replace(id, 'ID'), unknown.replace(forged, 'ID'));
  assert.equal(foreignOther.replace(id, 'ID'), unknown.replace(forged, 'ID'));

  // The owner still reads it.
  assertSameBytes((await readStoredResult(assert, a.client, id)).text, original, "the owner's result");

  // After the owner exits, a new process on the same data dir (it may get the owner's slot) cannot read it.
  await a.close();
  const d = await serveStore(t, { catalog: OFFLOAD, dataDir: shared });
  await refused(d, id, 'the id of a process that has exited');
});

// ---------------------------------------------------------------------------
// Two processes at once on one data folder

async function twoAtOnce(t, options) {
  const [one, two] = await Promise.all([serveStore(t, options), serveStore(t, options)]);
  const texts = [genLinesText(6000), genLinesText(7000)];
  // Both offload at the same moment: the first offload opens the store.
  const results = await Promise.all([
    one.client.callTool({ name: 'gen_lines', arguments: { lines: 6000 } }),
    two.client.callTool({ name: 'gen_lines', arguments: { lines: 7000 } }),
  ]);
  const ids = results.map((result, i) => expectOffloaded(result, texts[i]).id);
  const [back1, back2] = await Promise.all([readStoredResult(assert, one.client, ids[0]), readStoredResult(assert, two.client, ids[1])]);
  assertSameBytes(back1.text, texts[0], 'the first process read back');
  assertSameBytes(back2.text, texts[1], 'the second process read back');
  // A second round, while both stores are open.
  const again = await Promise.all([
    one.client.callTool({ name: 'gen_chars', arguments: { count: 60000, start: 2 } }),
    two.client.callTool({ name: 'gen_chars', arguments: { count: 60001, start: 1 } }),
  ]);
  const againIds = [expectOffloaded(again[0], genCharsText(60000, 2)).id, expectOffloaded(again[1], genCharsText(60001, 1)).id];
  assertSameBytes((await readStoredResult(assert, one.client, againIds[0])).text, genCharsText(60000, 2), 'round 2, first');
  assertSameBytes((await readStoredResult(assert, two.client, againIds[1])).text, genCharsText(60001, 1), 'round 2, second');
  return { one, two };
}

test('two processes started at once with the same --data-dir both offload and read back (slots 0 and 1)', async (t) => {
  const shared = makeTempDir('toolmux-data-');
  await twoAtOnce(t, { catalog: OFFLOAD, dataDir: shared });
  const slots = fs.readdirSync(path.join(shared, 'results')).sort();
  assert.deepEqual(slots, ['slot-0', 'slot-1']);
});

test('two processes at once with the default data dir ($XDG_STATE_HOME/toolmux) both offload and read back', async (t) => {
  const state = makeTempDir('toolmux-state-');
  await twoAtOnce(t, { catalog: OFFLOAD, dataDir: null, env: { XDG_STATE_HOME: state } });
  const slots = fs.readdirSync(path.join(state, 'toolmux', 'results')).sort();
  assert.deepEqual(slots, ['slot-0', 'slot-1']);
});
