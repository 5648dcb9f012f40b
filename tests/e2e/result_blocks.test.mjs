// Result limits that see the whole result, through the real SDK client over
// stdio: a large image, 200 text blocks each under the offload threshold, and
// large embedded resources. Each response stays within maxResponseBytes, and
// what was taken out of it reads back byte for byte, with read_tool_result and
// as a resource toolmux://results/<id>.
//
// The server is the example built on the library API
// (examples/conformance-server), whose tools large_image, many_text_blocks and
// large_embedded_resource return results as large as asked; patternBytes and
// blockText build the same content here to compare with.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EXAMPLE_BIN, genCharsText, limitsCatalog, makeTempDir, readStoredResult, short, startClient } from './helpers.mjs';

const DEFAULT_MAX_RESPONSE_BYTES = 1048576;
const SMALL = limitsCatalog('response_small.catalog.json'); // maxResponseBytes 100000
const SMALL_NO_OFFLOAD = limitsCatalog('response_small_no_offload.catalog.json'); // the same, offload false

/** What large_image and a binary large_embedded_resource hold: byte i is (7i + i/256) mod 256. */
function patternBytes(n) {
  const bytes = Buffer.alloc(n);
  for (let i = 0; i < n; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
  return bytes;
}

/** Block j of many_text_blocks. */
const blockText = (j, chars) => `block ${j}\n${genCharsText(chars, j % 4)}`;

async function serveExample(t, catalog) {
  const args = ['serve', '--data-dir', makeTempDir('toolmux-data-')];
  if (catalog) args.push('--catalog', catalog);
  return startClient(t, { command: EXAMPLE_BIN, args });
}

/** Calls a tool; returns its result and the bytes of that result as the server sent it. */
async function call(session, name, args) {
  const result = await session.client.callTool({ name, arguments: args });
  const request = session.sent.findLast((m) => m.method === 'tools/call');
  const response = session.received.find((m) => m.id === request.id && 'result' in m);
  return { result, bytes: Buffer.byteLength(JSON.stringify(response.result)) };
}

function namedId(text) {
  const match = /result_id "([A-Za-z0-9_-]{43})"/.exec(text);
  assert.ok(match, `no result_id in ${short(text)}`);
  return match[1];
}

/** The stored result `id` as the resource toolmux://results/<id>: its one contents item. */
async function readAsResource(client, id) {
  const uri = `toolmux://results/${id}`;
  const read = await client.readResource({ uri });
  assert.equal(read.contents.length, 1);
  assert.equal(read.contents[0].uri, uri);
  return read.contents[0];
}

const readBack = async (client, id) => (await readStoredResult(assert, client, id)).text;

test('a large image block is stored: a short notice in the response, the bytes read back exactly', async (t) => {
  const session = await serveExample(t);
  const original = patternBytes(3_000_000);
  const { result, bytes } = await call(session, 'large_image', { bytes: 3_000_000 });
  assert.notEqual(result.isError, true, short(result));
  assert.ok(bytes < 1000, `the response carries ${bytes} bytes`);
  assert.equal(result.content.length, 1, short(result));
  assert.equal(result.content[0].type, 'text');
  const id = namedId(result.content[0].text);
  assert.equal(
    result.content[0].text,
    `[toolmux: an image (image/png, 3000000 bytes) is too large to show here. It is stored as result_id "${id}": ` +
      `call read_tool_result with {"result_id": "${id}", "offset": 0}, then with each page's next_offset, ` +
      `to read its base64 data (4000000 characters, up to 20000 a page), or read the resource toolmux://results/${id}.]`,
  );

  assert.ok(Buffer.from(await readBack(session.client, id), 'base64').equals(original), 'the data read back with read_tool_result');
  const resource = await readAsResource(session.client, id);
  assert.equal(resource.mimeType, 'image/png');
  assert.ok(Buffer.from(resource.blob, 'base64').equals(original), 'the image read back as a resource');
  const listed = (await session.client.listResources()).resources.find((r) => r.uri === `toolmux://results/${id}`);
  assert.equal(listed?.mimeType, 'image/png');
});

test('200 text blocks each under the threshold: the response stays within maxResponseBytes, the rest reads back', async (t) => {
  const session = await serveExample(t);
  const chars = 16000; // about 40,000 bytes a block, under the 50,000-byte offload threshold
  const expected = Array.from({ length: 200 }, (_, j) => ({ type: 'text', text: blockText(j, chars) }));
  assert.ok(expected.every((b) => Buffer.byteLength(b.text) < 50000));
  const { result, bytes } = await call(session, 'many_text_blocks', { count: 200, chars });
  assert.notEqual(result.isError, true, short(result));
  assert.ok(bytes <= DEFAULT_MAX_RESPONSE_BYTES, `the response carries ${bytes} bytes`);
  const kept = result.content.length - 1;
  assert.ok(kept >= 20, `only ${kept} blocks were kept`);
  assert.deepEqual(result.content.slice(0, kept), expected.slice(0, kept), 'the blocks kept, whole and in order');

  const notice = result.content[kept].text;
  const restBytes = expected.slice(kept).reduce((sum, b) => sum + Buffer.byteLength(JSON.stringify(b)), 0);
  const id = namedId(notice);
  assert.equal(
    notice,
    `[toolmux: this result is ${Buffer.byteLength(JSON.stringify({ content: expected, isError: false }))} bytes, ` +
      `more than the 1048576 bytes a response may carry here, so blocks ${kept + 1} to 200 (${200 - kept} blocks, ${restBytes} bytes) ` +
      `are not shown. They are stored as result_id "${id}", a JSON array of MCP content blocks: ` +
      `call read_tool_result with {"result_id": "${id}", "offset": 0}, then with each page's next_offset, ` +
      `to read it whole (up to 20000 characters a page), or read the resource toolmux://results/${id}.]`,
  );
  const stored = await readBack(session.client, id);
  assert.deepEqual(JSON.parse(stored), expected.slice(kept), 'the rest, read back with read_tool_result');
  const resource = await readAsResource(session.client, id);
  assert.equal(resource.mimeType, 'application/json');
  assert.equal(resource.text, stored, 'the rest, read back as a resource');
});

test('a large embedded resource is stored, blob or text, and reads back exactly', async (t) => {
  const session = await serveExample(t);
  const blob = patternBytes(2_000_000);
  const binary = await call(session, 'large_embedded_resource', { size: 2_000_000, binary: true });
  assert.notEqual(binary.result.isError, true, short(binary.result));
  assert.ok(binary.bytes < 1000, `the response carries ${binary.bytes} bytes`);
  assert.equal(binary.result.content.length, 1);
  const blobId = namedId(binary.result.content[0].text);
  assert.equal(
    binary.result.content[0].text,
    `[toolmux: an embedded resource "test://large-resource" (application/octet-stream, 2000000 bytes) is too large to show here. ` +
      `It is stored as result_id "${blobId}": call read_tool_result with {"result_id": "${blobId}", "offset": 0}, ` +
      `then with each page's next_offset, to read its base64 blob (2666668 characters, up to 20000 a page), ` +
      `or read the resource toolmux://results/${blobId}.]`,
  );
  assert.ok(Buffer.from(await readBack(session.client, blobId), 'base64').equals(blob), 'the blob read back with read_tool_result');
  const asBlob = await readAsResource(session.client, blobId);
  assert.equal(asBlob.mimeType, 'application/octet-stream');
  assert.ok(Buffer.from(asBlob.blob, 'base64').equals(blob), 'the blob read back as a resource');

  const text = genCharsText(300000, 0); // 750,000 bytes
  const textual = await call(session, 'large_embedded_resource', { size: 300000, binary: false });
  assert.ok(textual.bytes < 1000, `the response carries ${textual.bytes} bytes`);
  const textNotice = textual.result.content[0].text;
  assert.match(textNotice, /^\[toolmux: an embedded resource "test:\/\/large-resource" \(text\/plain, 750000 bytes\) is too large/);
  assert.match(textNotice, /to read its text \(300000 characters, up to 20000 a page\)/);
  const textId = namedId(textNotice);
  assert.equal(await readBack(session.client, textId), text, 'the text read back with read_tool_result');
  const asText = await readAsResource(session.client, textId);
  assert.equal(asText.mimeType, 'text/plain');
  assert.equal(asText.text, text, 'the text read back as a resource');
});

test('maxResponseBytes from the catalog file bounds the response; small results pass as they are', async (t) => {
  const session = await serveExample(t, SMALL);
  const expected = Array.from({ length: 50 }, (_, j) => ({ type: 'text', text: blockText(j, 2000) }));
  const { result, bytes } = await call(session, 'many_text_blocks', { count: 50, chars: 2000 });
  assert.ok(bytes <= 100000, `the response carries ${bytes} bytes`);
  const kept = result.content.length - 1;
  assert.deepEqual(result.content.slice(0, kept), expected.slice(0, kept));
  assert.match(result.content[kept].text, new RegExp(`more than the 100000 bytes a response may carry here, so blocks ${kept + 1} to 50 `));
  assert.deepEqual(JSON.parse(await readBack(session.client, namedId(result.content[kept].text))), expected.slice(kept));

  // The conformance fixture of every kind of block, far under the limits: unchanged.
  const mixed = await call(session, 'test_multiple_content_types', {});
  assert.deepEqual(mixed.result.content.map((b) => b.type), ['text', 'image', 'resource']);
  assert.equal(mixed.result.content[1].data.length, 96);
  assert.equal(mixed.result.content[2].resource.text, '{"test":"data","value":123}');
});

test('with offloading off, a text block that does not fit is cut, the rest left out, and the notice says so', async (t) => {
  const session = await serveExample(t, SMALL_NO_OFFLOAD);
  const { result, bytes } = await call(session, 'many_text_blocks', { count: 50, chars: 2000 });
  assert.ok(bytes <= 100000, `the response carries ${bytes} bytes`);
  const whole = result.content.length - 2;
  for (let j = 0; j < whole; j++) assert.equal(result.content[j].text, blockText(j, 2000));
  const cut = result.content[whole].text;
  const marker = cut.indexOf('\n[toolmux: truncated: showing the first ');
  assert.ok(marker > 0, short(cut));
  assert.ok(blockText(whole, 2000).startsWith(cut.slice(0, marker)), 'the cut block is the beginning of the block');
  assert.match(
    result.content[whole + 1].text,
    new RegExp(`so block ${whole + 1} was cut and blocks ${whole + 2} to 50 \\(${50 - whole - 1} blocks, \\d+ bytes\\) were left out\\.\\]$`),
  );

  const image = await call(session, 'large_image', { bytes: 200000 });
  assert.ok(image.bytes <= 100000, `the response carries ${image.bytes} bytes`);
  assert.equal(image.result.content.length, 1);
  assert.match(
    image.result.content[0].text,
    /^\[toolmux: this result is \d+ bytes, more than the 100000 bytes a response may carry here, so block 1 \(an image, image\/png, 200000 bytes\) was left out\.\]$/,
  );
});
