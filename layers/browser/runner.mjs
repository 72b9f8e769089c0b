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
//     the device's. The full report (0.5–2 MB) is
//     written to "out", never to stdout, so the protocol stays small. Beside it go what the
//     diagnostics need that the report lacks, from the same load: the DevTools log to
//     "<out>.devtools.json", the main document as the browser received it to
//     "<out>.document.html" (absent when Lighthouse could not read it), and the trace's layout
//     shifts to "<out>.shifts.json" as [{ts (µs, the trace's clock), score (weighted)}], and its
//     visual frames to "<out>.frames.json" as {speedIndex, frames: [{time (ms from navigation
//     start), complete (visual completeness, 0-100), jpeg (base64)}]} (see visualFrames).
//   {"id":3,"op":"validate","html":"<!doctype html>…"}
//     -> {"id":3,"ok":true,"errors":<count of severity-2 messages>,"messages":[{ruleId,message,line}] (first 50)}
//   {"id":4,"op":"html","in":"/abs/report.json","out":"/abs/report.html"}
//     -> {"id":4,"ok":true}: Lighthouse's own HTML report of a JSON report, written to "out".
//   {"id":5,"op":"network","in":"/abs/report.json.devtools.json","har":"/abs/run.har","phases":"/abs/phases.json"}
//     -> {"id":5,"ok":true}: from an audit's DevTools log, a HAR 1.2 (chrome-har) written to "har",
//     and each request's phases written to "phases" as a JSON array in the order of the
//     report's network-requests audit (Lighthouse's own network records, read the same way):
//     [{url, queue, dns, connect, tls, wait, download}] in ms, -1 for a phase not known or not made.
//   {"id":6,"op":"benchmark","port":9222}
//     -> {"id":6,"ok":true,"benchmarkIndex":1234}: Lighthouse's own benchmark of the machine
//     (page-functions' computeBenchmarkIndex, about a second of work) in a blank tab of the
//     Chromium at 127.0.0.1:<port>, the same index a report's environment.benchmarkIndex holds;
//     the audit worker calibrates applied throttling's CPU slowdown from it.
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

// Lighthouse's navigation as its lighthouse() runs it (navigationGather, then Runner.audit),
// with two differences (see gather): the run's cache of computed artifacts stays the runner's,
// so that the frames are read from the Speedline Lighthouse computed for Speed Index, not
// decoded from the trace's screenshots again; and the config is resolved once per device and
// settings, not once per run.
const {_setup, _navigation, _cleanup} = await import('lighthouse/core/gather/navigation-runner.js');
const {finalizeArtifacts} = await import('lighthouse/core/gather/base-artifacts.js');
const {Driver} = await import('lighthouse/core/gather/driver.js');
const {initializeConfig} = await import('lighthouse/core/config/config.js');
const {Runner} = await import('lighthouse/core/runner.js');
const {default: UrlUtils} = await import('lighthouse/core/lib/url-utils.js');
const {default: lighthouseLog} = await import('lighthouse-logger');
const {default: desktopConfig} = await import('lighthouse/core/config/desktop-config.js');
const {userAgents, nonSimulatedSettingsOverrides} = await import('lighthouse/core/config/constants.js');
// Lighthouse raises every wait of a load it does not simulate to at least 5.25 s, and waits for
// the CPU's quiet window only after the network's, so an applied load sat ~10.5 s idle after
// its last request. The audit worker sets an applied load's waits itself (model.AppliedWaits,
// sent in each request's settings and recorded in the report's configSettings), the CPU's off:
// QuietWindow (below) records what the trace's time to interactive (and so TBT) needs instead.
// Lighthouse reads this object each time it builds a config, so zeroing it once lets the
// request's own settings stand.
for (const name of Object.keys(nonSimulatedSettingsOverrides)) nonSimulatedSettingsOverrides[name] = 0;
const {default: BaseGatherer} = await import('lighthouse/core/gather/base-gatherer.js');
const {HtmlValidate} = await import('html-validate');
const {ReportGenerator} = await import('lighthouse/report/generator/report-generator.js');
const {NetworkRecorder} = await import('lighthouse/core/lib/network-recorder.js');
const {harFromMessages} = await import('chrome-har');
const {Speedline} = await import('lighthouse/core/computed/speedline.js');
// Lighthouse's own benchmark, and the puppeteer it drives Chromium with (its dependency).
const {pageFunctions} = await import('lighthouse/core/lib/page-functions.js');
const {default: puppeteer} = await import('puppeteer-core');

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
    // No screenshot of the whole page: it costs 1.1 to 1.7 s a run and a large image in both
    // stored reports, and gives only the thumbnails of elements in Lighthouse's HTML report
    // (openvitals' diagnostics name elements by selector and show the load's own frames).
    disableFullPageScreenshot: true,
  };
  // What the call spends in each of its parts (ms), so that the time outside Lighthouse's own
  // timing.total is accounted for: its config and what is written beside the report.
  const took = {};
  let mark = performance.now();
  const lap = name => {
    const now = performance.now();
    took[name] = Math.round(now - mark);
    mark = now;
  };
  const gathered = await gather(req.url, await resolvedConfig(req.device, config, flags), flags);
  const result = await Runner.audit(gathered.artifacts, gathered.runnerOptions);
  lap('lighthouse');
  if (!result || !result.lhr) throw new Error('audit: Lighthouse returned no result');
  const report = typeof result.report === 'string' ? result.report : JSON.stringify(result.lhr);
  // Write beside the target and rename, so a reader never sees a half-written report.
  const tmp = `${req.out}.${process.pid}.tmp`;
  await writeFile(tmp, report);
  await rename(tmp, req.out);
  // What the diagnostics need beside the report, from the same load (result.artifacts is
  // what the gatherers collected: DevtoolsLog, Trace, MainDocumentContent...).
  const artifacts = result.artifacts ?? {};
  if (Array.isArray(artifacts.DevtoolsLog)) {
    await writeAtomically(`${req.out}.devtools.json`, JSON.stringify(artifacts.DevtoolsLog));
  }
  if (typeof artifacts.MainDocumentContent === 'string') {
    await writeAtomically(`${req.out}.document.html`, artifacts.MainDocumentContent);
  }
  lap('files');
  if (Array.isArray(artifacts.Trace?.traceEvents)) {
    await writeAtomically(`${req.out}.shifts.json`, JSON.stringify(layoutShifts(artifacts.Trace.traceEvents)));
    lap('shifts');
    const frames = await visualFrames(artifacts.Trace, gathered.runnerOptions.computedCache);
    if (frames) await writeAtomically(`${req.out}.frames.json`, JSON.stringify(frames));
    lap('frames');
  }
  const res = {lighthouseVersion: result.lhr.lighthouseVersion, took};
  if (result.lhr.runtimeError) {
    res.runtimeError = {
      code: String(result.lhr.runtimeError.code ?? ''),
      message: String(result.lhr.runtimeError.message ?? ''),
    };
  }
  return res;
}

// Resolving Lighthouse's config took 0.25 s of CPU a run on an idle machine and 0.9 to 1.4 s
// (its lh:config mark) in a function's CPU share beside a browser starting: mostly the
// formatting of every audit's title and description, which its validation reads again and
// again. It depends on the device and the settings only, so it is resolved once for each and
// kept (the last few). A run gets its own copy of what a run changes: new gatherer instances
// (a gatherer keeps what it collects), and its own settings, audit options, categories and
// groups (the report is made of them, and its messages are then localized in place).
const MAX_CONFIGS = 8;
const configs = new Map();

async function resolvedConfig(device, config, flags) {
  const {port, hostname, ...settingFlags} = flags;
  const key = JSON.stringify([device, settingFlags]);
  let resolved = configs.get(key);
  if (!resolved) {
    ({resolvedConfig: resolved} = await initializeConfig('navigation', config, flags));
    configs.set(key, resolved);
    if (configs.size > MAX_CONFIGS) configs.delete(configs.keys().next().value);
  }
  return {
    ...resolved,
    artifacts: resolved.artifacts && [
      ...(resolved.settings.throttlingMethod === 'simulate' ? [] : [quietWindowArtifact()]),
      ...resolved.artifacts.map(a => ({...a, gatherer: {...a.gatherer, instance: new a.gatherer.implementation()}})),
    ],
    audits: resolved.audits?.map(a => ({...a, options: structuredClone(a.options)})) ?? null,
    categories: structuredClone(resolved.categories),
    groups: structuredClone(resolved.groups),
    settings: structuredClone(resolved.settings),
  };
}

/** A run's QuietWindow, first of its artifacts: it must wait before the trace stops. */
function quietWindowArtifact() {
  return {id: 'QuietWindow', gatherer: {path: 'openvitals-quiet-window', implementation: QuietWindow, instance: new QuietWindow()}};
}

// gather is Lighthouse 13.5's navigationGather (core/gather/navigation-runner.js) for a URL with
// a resolved config: the same steps, in the same order, in a new tab of the browser at the
// flags' host and port, which it closes.
async function gather(url, resolvedConfig, flags) {
  lighthouseLog.setLevel(flags.logLevel || 'error');
  const computedCache = new Map();
  const runnerOptions = {resolvedConfig, computedCache};
  const gatherFn = async () => {
    const lhBrowser = await puppeteer.connect({browserURL: `http://${flags.hostname}:${flags.port}`, defaultViewport: null});
    const lhPage = await lhBrowser.newPage();
    const context = {
      driver: new Driver(lhPage), lhBrowser, lhPage, page: lhPage, resolvedConfig,
      requestor: UrlUtils.normalizeUrl(url), computedCache,
    };
    const {baseArtifacts} = await _setup(context);
    const artifacts = await _navigation({...context, baseArtifacts});
    await _cleanup(context);
    return finalizeArtifacts(baseArtifacts, artifacts);
  };
  const artifacts = await Runner.gather(gatherFn, runnerOptions);
  return {artifacts, runnerOptions};
}

// QUIET_WINDOW_MS is how long a load that is not simulated is recorded past its last busy moment:
// time to interactive (the end of TBT's window) is the start of the first 5 s after first paint
// with no long task and at most two requests in flight, so the trace must hold 5 s of both;
// Lighthouse's own margin over it is 250 ms.
const QUIET_WINDOW_MS = 5250;

/**
 * The page's first contentful paint and the end of its last long task (ms on its clock), and
 * its clock now: evaluated in Lighthouse's isolated world, which keeps the observer between
 * calls. A long task's entry reaches an observer a task after it ends, so they are read after
 * one more.
 */
function pageQuiet() {
  if (window.__openvitalsLastLongTask === undefined) {
    window.__openvitalsLastLongTask = 0;
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) {
        window.__openvitalsLastLongTask = Math.max(window.__openvitalsLastLongTask, e.startTime + e.duration);
      }
    }).observe({type: 'longtask', buffered: true});
  }
  return new Promise(resolve => setTimeout(() => {
    const fcp = performance.getEntriesByName('first-contentful-paint')[0];
    resolve({now: performance.now(), lastLongTask: window.__openvitalsLastLongTask, fcp: fcp ? fcp.startTime : 0});
  }, 50));
}

/**
 * QuietWindow ends a load that is not simulated as soon as its trace can hold time to
 * interactive: once the page has been QUIET_WINDOW_MS past its first paint, its last long task
 * and its network's last moment with more than two requests in flight. It runs first in the
 * phase that stops the trace, after Lighthouse's own waits (load, first paint and the network's
 * quiet window), which openvitals sets short for such loads, in place of Lighthouse's CPU quiet
 * window: that one counts 5.25 s from the moment it starts watching, after the network's, and so
 * kept every load about 5 s longer than interactive needs (idle time paid for in a function).
 * Its wait is a timing entry of the report (lh:gather:quietWindow).
 */
class QuietWindow extends BaseGatherer {
  meta = {supportedModes: ['navigation']};

  startSensitiveInstrumentation({driver, settings}) {
    this.deadline = Date.now() + (settings.maxWaitForLoad ?? 45000);
    this.quietSince = Date.now();
    this.busy = false;
    this.monitor = driver.networkMonitor;
    this.onRequest = () => {
      if (!this.monitor.is2Idle()) {
        this.busy = true;
      } else if (this.busy) {
        this.busy = false;
        this.quietSince = Date.now();
      }
    };
    this.monitor.on('requeststarted', this.onRequest);
    this.monitor.on('requestfinished', this.onRequest);
  }

  async stopSensitiveInstrumentation({driver}) {
    const mark = {msg: 'Waiting for the quiet window', id: 'lh:gather:quietWindow'};
    lighthouseLog.time(mark);
    try {
      for (;;) {
        const page = await driver.executionContext.evaluate(pageQuiet, {args: [], useIsolation: true});
        const pageQuietFor = page.now - Math.max(page.fcp, page.lastLongTask);
        const networkQuietFor = this.busy ? 0 : Date.now() - this.quietSince;
        const remaining = QUIET_WINDOW_MS - Math.min(pageQuietFor, networkQuietFor);
        if (remaining <= 0) break;
        // A page never quiet (an animation's long tasks, a poll) ends where Lighthouse's
        // longest wait for a load would have ended it.
        if (Date.now() >= this.deadline) break;
        await new Promise(resolve => setTimeout(resolve, Math.min(remaining, this.deadline - Date.now())));
      }
    } catch (err) {
      // The page went away (a crash, a late navigation): Lighthouse reports that itself.
      console.error(`quiet window: ${errorText(err)}`);
    } finally {
      lighthouseLog.timeEnd(mark);
      this.monitor.off('requeststarted', this.onRequest);
      this.monitor.off('requestfinished', this.onRequest);
    }
  }

  getArtifact() {
    return null;
  }
}

// MAX_FRAMES bounds the frames kept of one load: an animated page (a carousel, a spinner)
// paints a new frame every few milliseconds for as long as the trace lasts.
const MAX_FRAMES = 120;

/**
 * The load's visual frames, from the trace's screenshots as Lighthouse reads them for Speed
 * Index (its Speedline artifact: speedline-core from the navigation's time origin): each
 * distinct frame once, the first a blank one at navigation start, with its time (ms from
 * navigation start) and visual completeness (0 to 100, speedline's histogram progress), and
 * the Speed Index of those frames. null when the trace holds no screenshot.
 */
async function visualFrames(trace, computedCache) {
  let line;
  try {
    line = await Speedline.request(trace, {computedCache});
  } catch (err) {
    console.error(`frames: ${errorText(err)}`);
    return null;
  }
  let frames = line.frames.map(f => ({
    time: Math.max(0, Math.round((f.getTimeStamp() - line.beginning) * 10) / 10),
    complete: Math.round(f.getProgress() * 10) / 10,
    jpeg: f.getImage().toString('base64'),
  }));
  if (frames.length > MAX_FRAMES) {
    // Keep the first, the last and those whose completeness moved the most since the one kept
    // before: what a person sees change.
    const kept = [frames[0]];
    const step = 100 / (MAX_FRAMES - 2);
    for (const f of frames.slice(1, -1)) {
      if (Math.abs(f.complete - kept[kept.length - 1].complete) >= step) kept.push(f);
      if (kept.length === MAX_FRAMES - 1) break;
    }
    kept.push(frames[frames.length - 1]);
    frames = kept;
  }
  return {speedIndex: Math.round(line.speedIndex), frames};
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

/**
 * The trace's layout shifts that count (no recent input): when (ts, µs) and their score as
 * Lighthouse weighs them. The report's layout-shifts audit lists the same shifts without times.
 */
function layoutShifts(events) {
  const out = [];
  for (const e of events) {
    if (e.name !== 'LayoutShift') continue;
    const d = e.args?.data;
    if (!d || d.had_recent_input) continue;
    out.push({ts: e.ts, score: d.weighted_score_delta ?? d.score ?? 0});
  }
  return out;
}

/** Writes beside the target and renames, so a reader never sees a half-written file. */
async function writeAtomically(path, data) {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/** A span in ms between two ResourceTiming offsets, -1 when either is unset (negative). */
function span(start, end) {
  return start >= 0 && end >= 0 && end >= start ? end - start : -1;
}

// network turns the median run's DevTools log into a HAR and the requests' phases: done for
// the kept run only, as the HTML report is.
async function network(req) {
  for (const k of ['in', 'har', 'phases']) {
    if (typeof req[k] !== 'string' || req[k] === '') throw new Error(`network: ${k} is required`);
  }
  const log = JSON.parse(readFileSync(req.in, 'utf8'));
  const har = harFromMessages(log, {includeTextFromResponseBody: false});
  har.log.creator = {name: 'openvitals', version: '1', comment: `Lighthouse ${packageVersion('lighthouse')}, chrome-har`};
  await writeAtomically(req.har, JSON.stringify(har));
  const records = NetworkRecorder.recordsFromLogs(log);
  const phases = records.map((r) => {
    const t = r.timing;
    const out = {url: r.url, queue: -1, dns: -1, connect: -1, tls: -1, wait: -1, download: -1};
    if (t) {
      // Offsets in t are ms from t.requestTime (s); queueing is from the renderer's start to
      // the first network step.
      const first = [t.dnsStart, t.connectStart, t.sendStart].find((v) => v >= 0) ?? 0;
      out.queue = Math.max(0, t.requestTime * 1000 + first - r.rendererStartTime);
      out.dns = span(t.dnsStart, t.dnsEnd);
      out.connect = span(t.connectStart, t.connectEnd);
      out.tls = span(t.sslStart, t.sslEnd);
      out.wait = span(t.sendStart, t.receiveHeadersEnd);
    }
    if (r.networkEndTime >= 0 && r.responseHeadersEndTime >= 0) {
      out.download = Math.max(0, r.networkEndTime - r.responseHeadersEndTime);
    }
    return out;
  });
  await writeAtomically(req.phases, JSON.stringify(phases));
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

// benchmark measures the machine as Lighthouse does before a run, in a tab of its own that it
// closes; the browser stays as it was (disconnect, not close).
async function benchmark(req) {
  if (!Number.isInteger(req.port) || req.port <= 0) throw new Error('benchmark: port must be a positive integer');
  const browser = await puppeteer.connect({browserURL: `http://127.0.0.1:${req.port}`, defaultViewport: null});
  try {
    const page = await browser.newPage();
    try {
      const index = await page.evaluate(pageFunctions.computeBenchmarkIndex);
      return {benchmarkIndex: index};
    } finally {
      await page.close();
    }
  } finally {
    await browser.disconnect();
  }
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
      case 'network': res = await network(req); break;
      case 'benchmark': res = await benchmark(req); break;
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
