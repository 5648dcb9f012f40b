// Skills (docs/skills.md) through the real SDK client, over stdio and over
// Streamable HTTP: the io.modelcontextprotocol/skills extension declared,
// skills/list and skills/get with each file's digest, the files read as
// resources, folders read with resources/directory/read; an edit of a skill
// reloads it; a skill that leads outside its folder refuses the catalog.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  HttpServer,
  REPO_ROOT,
  connectHttp,
  expectMcpError,
  makeTempDir,
  runCli,
  startClient,
  waitUntil,
} from './helpers.mjs';

const EXAMPLE_SKILLS = path.join(REPO_ROOT, 'examples/skills');
const SKILL = 'skill://release-notes/SKILL.md';
const STYLE = 'skill://release-notes/references/STYLE.md';

/** A catalog in a fresh folder serving a copy of examples/skills; returns its paths. */
function skillsCatalog() {
  const dir = makeTempDir('toolmux-skills-');
  fs.cpSync(EXAMPLE_SKILLS, path.join(dir, 'skills'), { recursive: true });
  const catalog = path.join(dir, 'catalog.json');
  fs.writeFileSync(catalog, JSON.stringify({ tools: [], skills: ['skills'] }));
  return { dir, catalog, skills: path.join(dir, 'skills') };
}

const sha256 = (bytes) => `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;
const request = (client, method, params = {}) => client.request({ method, params }, ResultSchema);

async function servesSkills(client, skills) {
  assert.deepEqual(client.getServerCapabilities().extensions['io.modelcontextprotocol/skills'], {
    directoryRead: true,
  });
  const manifest = fs.readFileSync(path.join(skills, 'release-notes/SKILL.md'));
  const style = fs.readFileSync(path.join(skills, 'release-notes/references/STYLE.md'));

  const listed = await request(client, 'skills/list');
  assert.equal(listed.skills.length, 1);
  const [entry] = listed.skills;
  assert.equal(entry.uri, SKILL);
  assert.equal(entry.frontmatter.name, 'release-notes');
  assert.deepEqual(entry.frontmatter.metadata, { author: 'toolmux', version: '1.0' });
  assert.deepEqual(entry.resources, [
    { uri: SKILL, digest: sha256(manifest), size: manifest.length },
    { uri: STYLE, digest: sha256(style), size: style.length },
  ]);
  assert.deepEqual((await request(client, 'skills/get', { uri: SKILL })).skill, entry);
  await expectMcpError(assert, request(client, 'skills/get', { uri: 'skill://nothing/SKILL.md' }), -32602, /is not the SKILL.md of a skill/);

  const { resources } = await client.listResources();
  const listedManifest = resources.find((r) => r.uri === SKILL);
  assert.deepEqual(
    [listedManifest.name, listedManifest.description, listedManifest.mimeType],
    ['release-notes', entry.frontmatter.description, 'text/markdown'],
  );
  assert.deepEqual((await client.readResource({ uri: STYLE })).contents, [
    { uri: STYLE, mimeType: 'text/markdown', text: style.toString() },
  ]);

  const top = await request(client, 'resources/directory/read', { uri: 'skill://release-notes' });
  assert.deepEqual(
    top.resources.map((r) => [r.uri, r.mimeType]),
    [
      ['skill://release-notes/references', 'inode/directory'],
      [SKILL, 'text/markdown'],
    ],
  );
  await expectMcpError(assert, request(client, 'resources/directory/read', { uri: SKILL }), -32602, /is not a folder of a skill/);
}

test('skills over stdio: listed with digests, read as resources, folders read', async (t) => {
  const { catalog, skills } = skillsCatalog();
  const { client, stderr } = await startClient(t, { args: ['serve', '--data-dir', makeTempDir(), '--catalog', catalog] });
  await servesSkills(client, skills);
  await waitUntil(() => stderr().includes('"event":"serving"'), 5000, 'the serving line');
  const serving = stderr().split('\n').find((l) => l.includes('"event":"serving"'));
  assert.deepEqual(JSON.parse(serving).skills, [
    { name: 'release-notes', description: 'Write the release notes of a version from its merged changes, in the project\'s house style.' },
  ]);
});

test('skills over Streamable HTTP', async (t) => {
  const { catalog, skills } = skillsCatalog();
  const server = await HttpServer.start(t, { catalog });
  const { client } = await connectHttp(t, server.url);
  await servesSkills(client, skills);
});

test('an edit of a skill reloads it; a broken edit keeps the skills loaded before', async (t) => {
  const { catalog, skills } = skillsCatalog();
  const { client } = await startClient(t, { args: ['serve', '--data-dir', makeTempDir(), '--catalog', catalog] });
  const file = path.join(skills, 'release-notes/SKILL.md');
  const describedAs = async () => (await request(client, 'skills/list')).skills[0]?.frontmatter.description;
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^description: .*$/m, 'description: Edited.'));
  await waitUntil(async () => (await describedAs()) === 'Edited.', 10000, 'the edited description');
  fs.writeFileSync(file, '# no frontmatter\n');
  await new Promise((resolve) => setTimeout(resolve, 2500));
  assert.equal(await describedAs(), 'Edited.');
});

test('a skill whose folder leads outside the skills folder refuses the catalog', async () => {
  const { dir, catalog, skills } = skillsCatalog();
  fs.mkdirSync(path.join(dir, 'elsewhere/escape'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'elsewhere/escape/SKILL.md'), '---\nname: escape\ndescription: Escapes.\n---\n');
  fs.symlinkSync(path.join(dir, 'elsewhere/escape'), path.join(skills, 'escape'));
  const { code, stdout } = await runCli(['check', catalog]);
  assert.equal(code, 1);
  assert.match(stdout, /\/skills\/0: skill "escape": its folder is a symbolic link that leads outside \S*skills/);
  fs.rmSync(path.join(skills, 'escape'));
  const ok = await runCli(['check', catalog]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /: ok, 0 command tools \(\d+ tools with the built-ins\), 1 skill\n/);
});

test('tool_search finds skills beside tools, by the words of their name and description', async (t) => {
  const { catalog } = skillsCatalog();
  const { client } = await startClient(t, { args: ['serve', '--data-dir', makeTempDir(), '--catalog', catalog] });
  const found = await client.callTool({ name: 'tool_search', arguments: { query: 'write release notes' } });
  assert.deepEqual(found.structuredContent.skills, [
    {
      uri: SKILL,
      name: 'release-notes',
      description: 'Write the release notes of a version from its merged changes, in the project\'s house style.',
    },
  ]);
  assert.match(found.content[0].text, /Skills matching .*:\n- release-notes: Write the release notes.* \(read skill:\/\/release-notes\/SKILL\.md\)/s);
  const other = await client.callTool({ name: 'tool_search', arguments: { query: 'list files in a folder' } });
  assert.equal(other.structuredContent.skills, undefined);
});
