// What the extension's commands send to the server and read back. Kept free of the `vscode`
// module so the same functions run under plain node against the real server
// (src/test/server.test.ts), since VS Code itself cannot run in CI.

/** The server's command: the full VRAM report of one training entry point. */
export const SHOW_VRAM_REPORT = 'preflight.showVramReport';
/** The code-action kind of the server's "apply every safe fix" action. */
export const FIX_ALL_KIND = 'source.fixAll.preflight';

/** The argument `preflight.showVramReport` takes (server/lsp/vram.cpp): the document and the
 *  index of the entry point in it; the code lens adds the version it was computed for. */
export interface VramReportArgument {
  uri: string;
  job: number;
  version?: number;
}

/** One entry point the file's code lenses offer, for the palette's pick list. */
export interface VramJob {
  /** The lens title (peak estimate and verdict), shown in the pick list. */
  label: string;
  /** Zero-based line of the entry point. */
  line: number;
  argument: VramReportArgument;
}

/** The parts of an LSP CodeLens this module reads. */
interface LensLike {
  range?: { start?: { line?: unknown } };
  command?: { title?: unknown; command?: unknown; arguments?: unknown };
}

/** The executeCommand parameters for entry point `job` of `uri`. */
export function vramReportParams(uri: string, job = 0): { command: string; arguments: [VramReportArgument] } {
  return { command: SHOW_VRAM_REPORT, arguments: [{ uri, job }] };
}

/** The entry points among a file's code lenses, in the order the server numbers them. */
export function vramJobs(lenses: unknown): VramJob[] {
  if (!Array.isArray(lenses)) return [];
  const jobs: VramJob[] = [];
  for (const lens of lenses as LensLike[]) {
    const command = lens?.command;
    if (command?.command !== SHOW_VRAM_REPORT || !Array.isArray(command.arguments)) continue;
    const argument = command.arguments[0] as Partial<VramReportArgument> | undefined;
    if (typeof argument?.uri !== 'string' || typeof argument.job !== 'number') continue;
    const line = typeof lens.range?.start?.line === 'number' ? lens.range.start.line : 0;
    jobs.push({ label: typeof command.title === 'string' ? command.title : '', line, argument: argument as VramReportArgument });
  }
  return jobs;
}

/** The report's markdown. The server answers `{entryPoint, markdown, report, ...}`, or null
 *  when the file has no such entry point; a plain string or MarkupContent is read too. */
export function reportMarkdown(result: unknown): string | undefined {
  if (typeof result === 'string') return result;
  if (!result || typeof result !== 'object') return undefined;
  const fields = result as { markdown?: unknown; value?: unknown };
  if (typeof fields.markdown === 'string') return fields.markdown;
  if (typeof fields.value === 'string') return fields.value;
  return undefined;
}

/** What to tell the user when there is no report to show. */
export const NO_ENTRY_POINT = 'preflight: this file has no training entry point with a VRAM estimate (no code lens).';
