// Validates preflight's SARIF output against the SARIF 2.1.0 JSON schema (ctest:
// cli_sarif_schema; see sarif_schema.cmake for where the schema and ajv come from).
// Usage: node sarif_schema_check.js SCHEMA PREFLIGHT_EXE SOURCE_DIR GOLDEN_DIR
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const Ajv = require('ajv');

const [schemaPath, exe, sourceDir, goldenDir] = process.argv.slice(2);
const ajv = new Ajv({ schemaId: 'id', allErrors: true, format: 'full' });
ajv.addMetaSchema(require('ajv/lib/refs/json-schema-draft-04.json'));
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, 'utf8')));

let failures = 0;
function check(name, text, wantValid = true) {
  let log;
  try {
    log = JSON.parse(text);
  } catch (e) {
    console.error(`FAIL ${name}: not JSON: ${e.message}`);
    failures++;
    return null;
  }
  const valid = validate(log);
  if (valid !== wantValid) {
    console.error(`FAIL ${name}: expected ${wantValid ? 'valid' : 'invalid'}`);
    if (!valid) console.error(JSON.stringify(validate.errors, null, 2));
    failures++;
  } else {
    console.log(`ok   ${name} (${wantValid ? 'valid' : 'rejected as expected'})`);
  }
  return log;
}

function preflight(args, cwd) {
  const r = spawnSync(exe, ['check', '--format', 'sarif', ...args], { cwd, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 1) {
    console.error(`FAIL preflight ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    failures++;
  }
  return r.stdout;
}

// A scratch project with what the examples lack: astral characters before a span, a path
// that needs percent-encoding, an unused suppression, a syntax error.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'preflight-sarif-'));
try {
  fs.mkdirSync(path.join(scratch, 'data dir'));
  fs.writeFileSync(path.join(scratch, 'data dir', 'tr\u00e4in,1.py'),
    'import torch\n' +
    'def evaluate(model, loader):\n' +
    '    model.eval()\n' +
    '    s = "\u{1F680}"; out = [model(x) for x in loader]  # noqa: TG003\n' +
    '    return out\n');
  fs.writeFileSync(path.join(scratch, 'broken.py'), 'def f(:\n    pass\n');
  fs.writeFileSync(path.join(scratch, 'clean.py'), 'x = 1  # preflight: ignore\n');

  check('examples/', preflight(['examples'], sourceDir));
  check('scratch project', preflight(['--report-unused-ignores', '.'], scratch));
  check('absolute paths', preflight([scratch], sourceDir));
  const clean = check('clean file', preflight(['clean.py'], scratch));
  if (clean && clean.runs[0].results.length !== 0) {
    console.error('FAIL clean file: expected no results');
    failures++;
  }
  for (const name of fs.readdirSync(goldenDir).filter((n) => n.endsWith('.sarif')))
    check(`golden ${name}`, fs.readFileSync(path.join(goldenDir, name), 'utf8'));

  // The validator is live: a log with a wrong level and an unknown property is rejected.
  const broken = JSON.parse(preflight(['examples'], sourceDir));
  broken.runs[0].results[0].level = 'fatal';
  broken.runs[0].results[0].severity = 'high';
  check('mutated log', JSON.stringify(broken), false);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
