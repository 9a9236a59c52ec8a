// The VS Code client for `preflight lsp`: starts the server on Python files (the one shipped
// in the linux-x64 package unless `preflight.path` names another), keeps its settings in sync,
// and adds two commands. Diagnostics, quick fixes, hovers and the VRAM code lens all come
// from the server through vscode-languageclient; what the commands send and read is in
// commands.ts, which the protocol test drives against the real server.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CodeLensRequest,
  ConfigurationRequest,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  ServerOptions,
} from 'vscode-languageclient/node';
import { FIX_ALL_KIND as FIX_ALL, NO_ENTRY_POINT, SHOW_VRAM_REPORT, reportMarkdown, vramJobs, vramReportParams } from './commands';
import { readSettings, serverCommand, serverPayload, PreflightSettings } from './settings';

const CLIENT_ID = 'preflight';
const FIX_ALL_KIND = vscode.CodeActionKind.Empty.append(FIX_ALL);
/** Where the linux-x64 package keeps the server, relative to the extension. */
const BUNDLED_SERVER = path.join('server', 'preflight');

let client: LanguageClient | undefined;
let extensionPath = '';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionPath = context.extensionPath;
  context.subscriptions.push(
    vscode.commands.registerCommand('preflight.vramReport', showVramReport),
    vscode.commands.registerCommand('preflight.fixAll', fixAll),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      // The other settings reach the running server through workspace/configuration.
      if (event.affectsConfiguration('preflight.path')) await restart();
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}

function currentSettings(): PreflightSettings {
  const config = vscode.workspace.getConfiguration('preflight');
  return readSettings((key) => config.get(key));
}

// The platform package's server, when this is one. A .vsix is a zip: make sure the file kept
// its executable bit on the way.
function bundledServer(): string | undefined {
  const file = path.join(extensionPath, BUNDLED_SERVER);
  if (!fs.existsSync(file)) return undefined;
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    fs.chmodSync(file, 0o755);
  }
  return file;
}

async function start(): Promise<void> {
  const settings = currentSettings();
  const executable = serverCommand(settings, {
    home: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    bundled: bundledServer(),
  });
  const serverOptions: ServerOptions = { command: executable.command, args: executable.args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
    ],
    initializationOptions: serverPayload(settings),
    synchronize: { configurationSection: 'preflight' },
    middleware: { workspace: { configuration: answerConfiguration }, executeCommand: showCommandResult },
  };
  client = new LanguageClient(CLIENT_ID, 'preflight', serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    client = undefined;
    const choice = await vscode.window.showErrorMessage(
      `preflight: could not start \`${executable.command} lsp\` (${String(error)}). ` +
        'Install preflight or set "preflight.path" to the executable.',
      'Open Settings',
    );
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'preflight.path');
  }
}

async function restart(): Promise<void> {
  await deactivate();
  await start();
}

// The server pulls the `preflight` section; answer it with the same normalised payload as
// initializationOptions, so both routes carry identical shapes.
const answerConfiguration: ConfigurationRequest.MiddlewareSignature = (params, token, next) => {
  const items = params.items;
  if (!items.some((item) => item.section === 'preflight')) return next(params, token);
  const payload = serverPayload(currentSettings());
  return items.map((item) => (item.section === 'preflight' ? payload : null));
};

// vscode-languageclient runs the server's commands (the VRAM lens) and drops their answer;
// the report it answers with is opened beside the editor.
const showCommandResult: Middleware['executeCommand'] = async (command, args, next) => {
  const result: unknown = await next(command, args);
  if (command === SHOW_VRAM_REPORT) await showReport(result);
  return result;
};

function activePythonDocument(): vscode.TextDocument | undefined {
  const document = vscode.window.activeTextEditor?.document;
  if (document?.languageId === 'python') return document;
  void vscode.window.showInformationMessage('preflight: open a Python file first.');
  return undefined;
}

async function fixAll(): Promise<void> {
  const document = activePythonDocument();
  if (!document) return;
  const whole = new vscode.Range(0, 0, document.lineCount, 0);
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      document.uri,
      whole,
      FIX_ALL_KIND.value,
      1, // resolve the action, in case the server fills in its edit lazily
    )) ?? [];
  const ours = actions.filter((action) => action.kind !== undefined && FIX_ALL_KIND.contains(action.kind));
  if (ours.length === 0) {
    void vscode.window.showInformationMessage('preflight: no safe fixes in this file.');
    return;
  }
  for (const action of ours) {
    if (action.edit) await vscode.workspace.applyEdit(action.edit);
    if (action.command) await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  }
}

// The palette command: the file's entry points are its VRAM lenses; with several, the user
// picks one.
async function showVramReport(): Promise<void> {
  const document = activePythonDocument();
  if (!document || !client) return;
  const uri = document.uri.toString();
  const jobs = vramJobs(await client.sendRequest(CodeLensRequest.type, { textDocument: { uri } }));
  if (jobs.length === 0) {
    void vscode.window.showInformationMessage(NO_ENTRY_POINT);
    return;
  }
  let job = jobs[0];
  if (jobs.length > 1) {
    const picked = await vscode.window.showQuickPick(
      jobs.map((j) => ({ label: `line ${j.line + 1}`, description: j.label, job: j })),
      { placeHolder: 'Which training entry point?' },
    );
    if (!picked) return;
    job = picked.job;
  }
  await showReport(await client.sendRequest(ExecuteCommandRequest.type, vramReportParams(uri, job.argument.job)));
}

async function showReport(result: unknown): Promise<void> {
  const text = reportMarkdown(result);
  if (text === undefined) {
    void vscode.window.showInformationMessage(NO_ENTRY_POINT);
    return;
  }
  const shown = await vscode.workspace.openTextDocument({ language: 'markdown', content: text });
  await vscode.window.showTextDocument(shown, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}
