// The extension's settings and what they become on the wire. Kept free of the `vscode`
// module so the mapping runs (and is unit-tested) under plain node.

/** The `preflight.*` settings the extension reads itself, validated and normalised
 *  (`path` is '' when unset: see serverCommand).
 *  (`preflight.trace.server` is read by vscode-languageclient, keyed by the client id.) */
export interface PreflightSettings {
  path: string;
  targetGpu: string;
  select: string[];
  ignore: string[];
}

/** What the server reads from `initializationOptions` and from the `preflight` section of
 *  `workspace/configuration`. An empty setting is left out, so it does not override the
 *  project's pyproject.toml / .preflight.toml. */
export interface ServerOptionsPayload {
  select?: string[];
  ignore?: string[];
  targetGpu?: string;
}

/** Returns the raw value of one `preflight.*` setting (undefined when unset). */
export type SettingReader = (key: string) => unknown;

/** Where `${workspaceFolder}` and `~` in `preflight.path` point, and the server shipped
 *  inside the extension (set only when the platform package holds one). */
export interface PathContext {
  home: string;
  workspaceFolder?: string;
  bundled?: string;
}

/** Looked up on PATH when `preflight.path` is empty and the extension ships no server. */
export const DEFAULT_EXECUTABLE = 'preflight';

export function readSettings(read: SettingReader): PreflightSettings {
  return {
    path: stringSetting(read('path')),
    targetGpu: stringSetting(read('targetGpu')),
    select: ruleCodes(read('select')),
    ignore: ruleCodes(read('ignore')),
  };
}

export function serverPayload(settings: PreflightSettings): ServerOptionsPayload {
  const payload: ServerOptionsPayload = {};
  if (settings.select.length > 0) payload.select = settings.select;
  if (settings.ignore.length > 0) payload.ignore = settings.ignore;
  if (settings.targetGpu !== '') payload.targetGpu = settings.targetGpu;
  return payload;
}

/** The command line that starts the server: `<path> lsp`, with `~/` and
 *  `${workspaceFolder}` expanded so a per-project build can be named. An empty path means the
 *  server inside the extension (linux-x64 package), else `preflight` on PATH. */
export function serverCommand(settings: PreflightSettings, where: PathContext): { command: string; args: string[] } {
  if (settings.path === '') return { command: where.bundled ?? DEFAULT_EXECUTABLE, args: ['lsp'] };
  return { command: expandPath(settings.path, where), args: ['lsp'] };
}

export function expandPath(path: string, where: PathContext): string {
  let expanded = path;
  if (where.workspaceFolder !== undefined) expanded = expanded.split('${workspaceFolder}').join(where.workspaceFolder);
  if (expanded === '~' || expanded.startsWith('~/')) expanded = where.home + expanded.slice(1);
  return expanded;
}

function stringSetting(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

// Codes are case-insensitive for the server too; upper-casing and de-duplicating here keeps
// what the server logs identical to what the user sees in `preflight rules`.
function ruleCodes(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const codes: string[] = [];
  for (const item of value) {
    const code = stringSetting(item).toUpperCase();
    if (code !== '' && !codes.includes(code)) codes.push(code);
  }
  return codes;
}
