// The settings -> server mapping, under node's own test runner (no VS Code needed).
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandPath, readSettings, serverCommand, serverPayload } from '../settings';

function reader(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

test('unset settings start `preflight lsp` from PATH and override nothing', () => {
  const settings = readSettings(reader({}));
  assert.deepEqual(settings, { path: '', targetGpu: '', select: [], ignore: [] });
  assert.deepEqual(serverPayload(settings), {});
  assert.deepEqual(serverCommand(settings, { home: '/home/u' }), { command: 'preflight', args: ['lsp'] });
});

test('an unset path starts the server shipped in the extension, a set one wins over it', () => {
  const where = { home: '/home/u', bundled: '/ext/server/preflight' };
  assert.equal(serverCommand(readSettings(reader({})), where).command, '/ext/server/preflight');
  assert.equal(serverCommand(readSettings(reader({ path: '~/bin/preflight' })), where).command, '/home/u/bin/preflight');
});

test('select, ignore and targetGpu become initializationOptions', () => {
  const settings = readSettings(
    reader({ path: '/opt/preflight/bin/preflight', targetGpu: 'a100-80gb', select: ['TG001', 'TG003'], ignore: ['TG004'] }),
  );
  assert.deepEqual(serverPayload(settings), { select: ['TG001', 'TG003'], ignore: ['TG004'], targetGpu: 'a100-80gb' });
  assert.equal(serverCommand(settings, { home: '/home/u' }).command, '/opt/preflight/bin/preflight');
});

test('rule codes are trimmed, upper-cased, de-duplicated, in order', () => {
  const settings = readSettings(reader({ select: [' tg003', 'TG001', 'tg003', '', '  '], ignore: ['tg002 '] }));
  assert.deepEqual(serverPayload(settings), { select: ['TG003', 'TG001'], ignore: ['TG002'] });
});

test('values of the wrong type fall back to the defaults', () => {
  const settings = readSettings(reader({ path: 42, targetGpu: ['h100'], select: 'TG001', ignore: [7, 'TG002'] }));
  assert.deepEqual(settings, { path: '', targetGpu: '', select: [], ignore: ['TG002'] });
});

test('a blank path or GPU counts as unset', () => {
  const settings = readSettings(reader({ path: '   ', targetGpu: '  ' }));
  assert.equal(settings.path, '');
  assert.equal(serverCommand(settings, { home: '/home/u' }).command, 'preflight');
  assert.deepEqual(serverPayload(settings), {});
});

test('the path expands ~ and ${workspaceFolder}', () => {
  const where = { home: '/home/u', workspaceFolder: '/src/proj' };
  assert.equal(expandPath('~/bin/preflight', where), '/home/u/bin/preflight');
  assert.equal(expandPath('${workspaceFolder}/build/server/preflight', where), '/src/proj/build/server/preflight');
  assert.equal(expandPath('~other/preflight', where), '~other/preflight');
  assert.equal(expandPath('${workspaceFolder}/preflight', { home: '/home/u' }), '${workspaceFolder}/preflight');
});
