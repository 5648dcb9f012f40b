// The MCP registry's server.json schema (packaging/registry/server.schema.json,
// JSON Schema draft-07) compiled with ajv.

import fs from 'node:fs';
import path from 'node:path';

import Ajv from 'ajv';

import { REPO_ROOT } from './helpers.mjs';

export function registryValidator() {
  const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'packaging/registry/server.schema.json'), 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The schema's two formats, checked rather than ignored.
  ajv.addFormat('uri', (s) => URL.canParse(s) && /^[a-z][a-z0-9+.-]*:/i.test(s));
  return ajv.compile(schema);
}
