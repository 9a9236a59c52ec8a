// The VS Code client for `preflight lsp`: starts the server on Python files, keeps its
// settings in sync, and adds two commands. Diagnostics, quick fixes, hovers and the VRAM
// code lens all come from the server through vscode-languageclient.
import * as os from 'os';
import * as vscode from 'vscode';
import {
  ConfigurationRequest,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { readSettings, serverCommand, serverPayload, PreflightSettings } from './settings';

const CLIENT_ID = 'preflight';
const SHOW_VRAM_REPORT = 'preflight.showVramReport'; // executed by the server
const FIX_ALL_KIND = vscode.CodeActionKind.SourceFixAll.append('preflight');

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
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

async function start(): Promise<void> {
  const settings = currentSettings();
  const executable = serverCommand(settings, {
    home: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  });
  const serverOptions: ServerOptions = { command: executable.command, args: executable.args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
    ],
    initializationOptions: serverPayload(settings),
    synchronize: { configurationSection: 'preflight' },
    middleware: { workspace: { configuration: answerConfiguration } },
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

async function showVramReport(): Promise<void> {
  const document = activePythonDocument();
  if (!document || !client) return;
  const report: unknown = await client.sendRequest(ExecuteCommandRequest.type, {
    command: SHOW_VRAM_REPORT,
    arguments: [document.uri.toString()],
  });
  const text = reportMarkdown(report);
  if (text === undefined) return; // the server showed it itself (window/showDocument or a message)
  const shown = await vscode.workspace.openTextDocument({ language: 'markdown', content: text });
  await vscode.window.showTextDocument(shown, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}

// The server answers with markdown, either as a string or as MarkupContent.
function reportMarkdown(report: unknown): string | undefined {
  if (typeof report === 'string') return report;
  if (report && typeof report === 'object' && typeof (report as { value?: unknown }).value === 'string')
    return (report as { value: string }).value;
  return undefined;
}
