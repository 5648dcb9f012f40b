// packaging/registry/server.json, toolmux's entry for the MCP registry: valid
// against the registry's schema (2025-12-11, kept in packaging/registry/), and
// of the project's version (CMakeLists.txt). scripts/package-mcpb.sh writes a
// copy with the bundle's SHA-256; tests/packaging/mcpb.sh checks that one.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { projectVersion, REPO_ROOT } from './helpers.mjs';
import { registryValidator } from './registry_schema.mjs';

const SERVER_JSON = path.join(REPO_ROOT, 'packaging/registry/server.json');
const server = JSON.parse(fs.readFileSync(SERVER_JSON, 'utf8'));

test('server.json is valid against the registry schema 2025-12-11', () => {
  const validate = registryValidator();
  assert.ok(validate(server), JSON.stringify(validate.errors, null, 2));
  assert.equal(server.$schema, 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
});

test('the schema refuses a server.json that breaks it', () => {
  const validate = registryValidator();
  const broken = structuredClone(server);
  broken.name = 'toolmux'; // no namespace: the pattern needs "namespace/name"
  broken.description = 'x'.repeat(101); // at most 100 characters
  assert.equal(validate(broken), false);
  const where = validate.errors.map((e) => e.instancePath).sort();
  assert.deepEqual(where, ['/description', '/name']);
});

test("server.json's versions are the project's (CMakeLists.txt)", () => {
  const version = projectVersion();
  assert.equal(server.version, version);
  const bundle = server.packages.find((p) => p.registryType === 'mcpb');
  assert.ok(bundle, 'no mcpb package');
  assert.equal(bundle.version, version);
  assert.ok(bundle.identifier.endsWith(`/v${version}/toolmux-${version}-linux-x64.mcpb`), bundle.identifier);
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'packaging/mcpb/manifest.json'), 'utf8'));
  assert.equal(manifest.version, version, 'packaging/mcpb/manifest.json');
});
