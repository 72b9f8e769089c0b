// runner.mjs: a long-lived worker process over Lighthouse's and html-validate's Node APIs.
//
// The audit worker (Go, internal/lighthouse.Runner) starts this once and reuses it for every
// audit while it is warm, so no audit pays again for loading Lighthouse's modules (~2 s per CLI
// start here) or for html-validate's first-document setup (~380 ms).
//
// Protocol: JSON lines. One request per line on stdin, each with an "id"; one response per line
// on stdout: {id, ok, error?, ...}. Requests are handled strictly one at a time, in order, because
// two Lighthouse runs at once on one browser fail (TRACING_ALREADY_STARTED) and any concurrent CPU
// load skews TBT.
//
//   {"id":1,"op":"ping"}
//     -> {"id":1,"ok":true}
//   {"id":2,"op":"audit","url":"https://…","port":9222,"device":"desktop"|"mobile","out":"/abs/report.json",
//    "userAgentMark":"…"?}
//     -> {"id":2,"ok":true,"lighthouseVersion":"13.5.0","runtimeError":{"code":…,"message":…}?}
//     Lighthouse attaches to the already-running Chromium at 127.0.0.1:<port> (optional "host"
//     overrides the address); it never launches its own browser. "userAgentMark" is appended to
//     the user agent Lighthouse emulates for the device. An optional "settings" object (Lighthouse's
//     settings by their names: throttling, screenEmulation, emulatedUserAgent...) is merged over
//     the device's. The full report (0.5–2 MB) is written to "out", never to stdout, so the
//     protocol stays small.
//   {"id":3,"op":"validate","html":"<!doctype html>…"}
//     -> {"id":3,"ok":true,"errors":<count of severity-2 messages>,"messages":[{ruleId,message,line}] (first 50)}
//   {"id":4,"op":"html","in":"/abs/report.json","out":"/abs/report.html"}
//     -> {"id":4,"ok":true}: Lighthouse's own HTML report of a JSON report, written to "out".
//
// At start, after both libraries are loaded, one line is printed before any response:
//   {"ready":true,"lighthouseVersion":"13.5.0","htmlValidateVersion":"11.18.0"}
// The process exits when stdin closes. Anything else (Lighthouse's own logging) goes to stderr:
// stdout carries only protocol lines.

import {createInterface} from 'node:readline';
import {writeFile, rename} from 'node:fs/promises';
import {readFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import {dirname, join} from 'node:path';

// Route console.log/info to stderr before loading anything: a stray log line from a dependency on
// stdout would corrupt the protocol.
console.log = console.error;
console.info = console.error;

const require = createRequire(import.meta.url);

/** Reads a package's version from its package.json, which its "exports" may not expose. */
function packageVersion(name) {
  try {
    // Resolve the package's entry point, then walk up to the package.json that names it.
    let dir = dirname(require.resolve(name));
    for (let i = 0; i < 6; i++) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        if (pkg.name === name) return pkg.version;
      } catch {
        // no package.json at this level: keep walking up
      }
      dir = dirname(dir);
    }
  } catch {
    // an ESM-only package may not resolve through require: the version is informative only
  }
  return '';
}

const {default: lighthouse} = await import('lighthouse');
const {default: desktopConfig} = await import('lighthouse/core/config/desktop-config.js');
const {userAgents} = await import('lighthouse/core/config/constants.js');
const {HtmlValidate} = await import('html-validate');
const {ReportGenerator} = await import('lighthouse/report/generator/report-generator.js');

// Preset: "html-validate:standard". It enables only the rules that check conformance with the
// HTML standard (content models, required attributes, duplicate ids, misnested or unclosed
// elements, invalid character references...), which is what "validation errors" means to a user
// comparing with the W3C validator. "html-validate:recommended" adds style and accessibility
// opinions (trailing whitespace, attribute quoting, inline styles, implicit button types...) that
// flag almost every production page tens of times over for things that are not errors, so the
// count would measure coding style rather than validity. "html-validate:document" adds
// document-level rules that mostly duplicate Lighthouse's accessibility and SEO audits.
// A static config (no .htmlvalidate.json lookup on disk) keeps the result independent of the
// directory the worker happens to run in.
const VALIDATE_PRESET = 'html-validate:standard';
const htmlvalidate = new HtmlValidate({root: true, extends: [VALIDATE_PRESET]});

// Warm html-validate once now: its first document costs ~380 ms (rule and element table setup),
// later ones ~30 ms.
await htmlvalidate.validateString('<!doctype html><html lang="en"><head><title>x</title></head><body></body></html>', 'warmup.html');

const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const MAX_MESSAGES = 50;

/** Writes one protocol line. */
function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function errorText(err) {
  if (err instanceof Error) return err.message || String(err);
  return String(err);
}

async function audit(req) {
  if (typeof req.url !== 'string' || req.url === '') throw new Error('audit: url is required');
  if (!Number.isInteger(req.port) || req.port <= 0) throw new Error('audit: port must be a positive integer');
  if (typeof req.out !== 'string' || req.out === '') throw new Error('audit: out is required');
  let config;
  if (req.device === 'desktop') {
    config = desktopConfig;
  } else if (req.device === 'mobile') {
    // Lighthouse's defaults are the mobile settings (Moto G Power emulation, slow 4G, 4x CPU).
    config = undefined;
  } else {
    throw new Error(`audit: device must be "desktop" or "mobile", got ${JSON.stringify(req.device)}`);
  }
  const flags = {
    // The user agent Lighthouse emulates for the device, followed by the mark openvitals' RUM
    // snippet and collect endpoint recognize, so that the audit is not counted as a real user.
    ...(typeof req.userAgentMark === 'string' && req.userAgentMark !== ''
      ? {emulatedUserAgent: `${userAgents[req.device]} ${req.userAgentMark}`}
      : {}),
    // A test profile's settings; Lighthouse merges flags deeply over its config's settings.
    ...(req.settings && typeof req.settings === 'object' ? req.settings : {}),
    port: req.port,
    hostname: typeof req.host === 'string' && req.host !== '' ? req.host : '127.0.0.1',
    output: 'json',
    logLevel: 'error',
    // Leaves out the agentic-browsing category Lighthouse 13 added; saves its gatherers too.
    onlyCategories: CATEGORIES,
  };
  const result = await lighthouse(req.url, flags, config);
  if (!result || !result.lhr) throw new Error('audit: Lighthouse returned no result');
  const report = typeof result.report === 'string' ? result.report : JSON.stringify(result.lhr);
  // Write beside the target and rename, so a reader never sees a half-written report.
  const tmp = `${req.out}.${process.pid}.tmp`;
  await writeFile(tmp, report);
  await rename(tmp, req.out);
  const res = {lighthouseVersion: result.lhr.lighthouseVersion};
  if (result.lhr.runtimeError) {
    res.runtimeError = {
      code: String(result.lhr.runtimeError.code ?? ''),
      message: String(result.lhr.runtimeError.message ?? ''),
    };
  }
  return res;
}

// html renders a stored JSON report as Lighthouse's own HTML report (its viewer script and the
// JSON in one file), for the median run only: rendering is cheap, storing every run's is not.
async function html(req) {
  if (typeof req.in !== 'string' || req.in === '') throw new Error('html: in is required');
  if (typeof req.out !== 'string' || req.out === '') throw new Error('html: out is required');
  const lhr = JSON.parse(readFileSync(req.in, 'utf8'));
  const tmp = `${req.out}.${process.pid}.tmp`;
  await writeFile(tmp, ReportGenerator.generateReportHtml(lhr));
  await rename(tmp, req.out);
  return {};
}

async function validate(req) {
  if (typeof req.html !== 'string') throw new Error('validate: html must be a string');
  const report = await htmlvalidate.validateString(req.html, 'document.html');
  let errors = 0;
  const messages = [];
  for (const result of report.results) {
    for (const m of result.messages) {
      if (m.severity !== 2) continue;
      errors++;
      if (messages.length < MAX_MESSAGES) messages.push({ruleId: m.ruleId, message: m.message, line: m.line});
    }
  }
  return {errors, messages};
}

async function handle(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (err) {
    send({id: null, ok: false, error: `bad request line: ${errorText(err)}`});
    return;
  }
  const id = req && typeof req === 'object' ? req.id ?? null : null;
  try {
    let res;
    switch (req.op) {
      case 'ping': res = {}; break;
      case 'audit': res = await audit(req); break;
      case 'validate': res = await validate(req); break;
      case 'html': res = await html(req); break;
      default: throw new Error(`unknown op ${JSON.stringify(req.op)}`);
    }
    send({id, ok: true, ...res});
  } catch (err) {
    send({id, ok: false, error: errorText(err)});
  }
}

// Lighthouse occasionally leaves a rejected promise behind (a protocol call racing a closed tab).
// Log it rather than let Node's default kill the process mid-queue; the request it belonged to
// has already been answered or will fail on its own.
process.on('unhandledRejection', (reason) => {
  console.error('runner: unhandled rejection:', reason);
});

// One request at a time, in arrival order.
let queue = Promise.resolve();
const rl = createInterface({input: process.stdin, crlfDelay: Infinity});
rl.on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(() => handle(line));
});
rl.on('close', () => {
  queue.then(() => process.exit(0));
});

send({ready: true, lighthouseVersion: packageVersion('lighthouse'), htmlValidateVersion: packageVersion('html-validate')});
