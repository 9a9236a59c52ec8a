// The extension's command paths against the real server over stdio, with the functions the
// extension itself uses (commands.ts, settings.ts). VS Code cannot run in CI, so this stands in
// for it: what the palette command and the lens send, what the server answers, and what the
// extension would open. PREFLIGHT_SERVER names the executable, PREFLIGHT_EXAMPLE a training
// file with one entry point and a safe fix (tests/editors/vscode_test.sh sets both).
import * as assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { FIX_ALL_KIND, NO_ENTRY_POINT, SHOW_VRAM_REPORT, reportMarkdown, vramJobs, vramReportParams } from '../commands';
import { readSettings, serverCommand, serverPayload } from '../settings';

const server = process.env.PREFLIGHT_SERVER;
const example = process.env.PREFLIGHT_EXAMPLE;
const skip = !server || !example ? 'set PREFLIGHT_SERVER and PREFLIGHT_EXAMPLE (tests/editors/vscode_test.sh does)' : false;

let child: ChildProcess;
let connection: MessageConnection;
let uri = '';
let text = '';

before(async () => {
  if (skip) return;
  // Started the way the extension starts it: the path setting, `lsp`, the settings as
  // initializationOptions.
  const settings = readSettings((key) => ({ path: server, targetGpu: 'a100-80gb' })[key]);
  const command = serverCommand(settings, { home: process.env.HOME ?? '/' });
  child = spawn(command.command, command.args, { stdio: ['pipe', 'pipe', 'inherit'] });
  connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.onRequest(() => null); // workspace/configuration, capability registrations
  connection.listen();
  const file = path.resolve(example!);
  uri = pathToFileURL(file).toString();
  text = fs.readFileSync(file, 'utf8');
  const init = await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(path.dirname(file)).toString(),
    capabilities: { workspace: { applyEdit: true } },
    initializationOptions: serverPayload(settings),
  });
  assert.deepEqual((init as { capabilities: { executeCommandProvider: unknown } }).capabilities.executeCommandProvider, {
    commands: [SHOW_VRAM_REPORT],
  });
  connection.sendNotification('initialized', {});
  connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
});

after(async () => {
  if (skip) return;
  await connection.sendRequest('shutdown');
  connection.sendNotification('exit');
  await new Promise((done) => child.once('exit', done));
  connection.dispose();
});

test('the lens runs showVramReport with its own arguments and the report opens', { skip }, async () => {
  const jobs = vramJobs(await connection.sendRequest('textDocument/codeLens', { textDocument: { uri } }));
  assert.ok(jobs.length >= 1, 'the example has a training entry point');
  const lens = jobs[0];
  assert.match(lens.label, /GiB/);
  assert.match(lens.label, /a100-80gb|A100/i, 'the target GPU from initializationOptions reaches the verdict');
  // vscode-languageclient sends the lens's command as workspace/executeCommand, and the
  // extension's middleware shows what comes back.
  const result = await connection.sendRequest('workspace/executeCommand', {
    command: SHOW_VRAM_REPORT,
    arguments: [lens.argument],
  });
  const markdown = reportMarkdown(result);
  assert.ok(markdown !== undefined, `a report the extension can show, got ${JSON.stringify(result).slice(0, 200)}`);
  assert.match(markdown!, /\*\*.+\*\*/, 'the report names the entry point');
  assert.match(markdown!, /GiB/);
});

test('the palette command asks for the entry point it picked and gets the same report', { skip }, async () => {
  const jobs = vramJobs(await connection.sendRequest('textDocument/codeLens', { textDocument: { uri } }));
  const viaPalette = await connection.sendRequest('workspace/executeCommand', vramReportParams(uri, jobs[0].argument.job));
  const viaLens = await connection.sendRequest('workspace/executeCommand', { command: SHOW_VRAM_REPORT, arguments: [jobs[0].argument] });
  assert.equal(reportMarkdown(viaPalette), reportMarkdown(viaLens));
});

test('an entry point the file does not have answers null, which the extension reports as none', { skip }, async () => {
  const result = await connection.sendRequest('workspace/executeCommand', vramReportParams(uri, 999));
  assert.equal(result, null);
  assert.equal(reportMarkdown(result), undefined);
  assert.match(NO_ENTRY_POINT, /no training entry point/);
});

test('fix all: the source.fixAll.preflight action resolves to edits of this document', { skip }, async () => {
  const lines = text.split('\n').length;
  const actions = (await connection.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: lines, character: 0 } },
    context: { diagnostics: [], only: [FIX_ALL_KIND] },
  })) as Array<{ kind?: string; edit?: unknown; data?: unknown }>;
  const ours = actions.filter((action) => action.kind === FIX_ALL_KIND);
  assert.equal(ours.length, 1, `one fix-all action, got ${JSON.stringify(actions).slice(0, 300)}`);
  // VS Code asks for the edit lazily (codeAction/resolve) when the action has none yet.
  const resolved = (ours[0].edit ? ours[0] : await connection.sendRequest('codeAction/resolve', ours[0])) as {
    edit?: { changes?: Record<string, unknown[]>; documentChanges?: Array<{ textDocument: { uri: string }; edits: unknown[] }> };
  };
  const edits = resolved.edit?.documentChanges?.find((change) => change.textDocument.uri === uri)?.edits ?? resolved.edit?.changes?.[uri];
  assert.ok(edits && edits.length > 0, `edits for ${uri}, got ${JSON.stringify(resolved.edit).slice(0, 300)}`);
});
