import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_TOOL_NAMES, pythonSignature } from '../../env/actions/tool-names.js';
import { listTools } from '../../env/tools/registry.js';

test('the parser knows exactly the tools the registry lists, in the same order', () => {
  assert.deepEqual(KNOWN_TOOL_NAMES, listTools().map((tool) => tool.name));
});

test('every argument a Python call maps to is a parameter of that tool in the registry', () => {
  for (const tool of listTools()) {
    const signature = pythonSignature(tool.name);
    assert.ok(signature, tool.name);
    const keys = [...signature.positional, ...Object.values(signature.keywords)].flatMap((t) => (t.kind === 'argument' ? [t.key] : []));
    for (const key of keys) assert.ok(key in tool.parameters.properties, `${tool.name}: ${key} is not among ${Object.keys(tool.parameters.properties).join(', ')}`);
    for (const required of tool.parameters.required) assert.ok(keys.includes(required), `${tool.name}: required ${required} cannot be written in Python`);
  }
});
