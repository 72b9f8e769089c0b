// Unit tests of the metrics' names, units and ratings (static/metrics.js) with the names the
// page preloads (static/metric-names.json, generated from internal/metrics).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as M from '../static/metrics.js';

M.setNames(JSON.parse(readFileSync(new URL('../static/metric-names.json', import.meta.url), 'utf8')));

test('every metric has its unit and names', () => {
  assert.equal(M.METRICS.lcp.unit, 'ms');
  assert.equal(M.METRICS.cls.unit, '');
  assert.equal(M.metricLabel('lcp'), 'LCP');
  assert.equal(M.metricName('lcp'), 'Largest Contentful Paint (LCP)');
  assert.equal(M.metricLabel('no_such_metric'), 'no_such_metric');
  assert.equal(M.categoryLabel('best_practices'), M.METRICS.best_practices_score.label);
  assert.ok(M.LAB_COLUMNS.every((f) => M.METRICS[f]), 'a lab column is no metric');
});

test('values are written in their metric\'s unit', () => {
  assert.equal(M.fmtMetric('lcp', 2512.4), '2,512 ms');
  assert.equal(M.fmtMetric('cls', 0.1234), '0.123');
  assert.equal(M.fmtMetric('kb_total', 705), '705 KiB');
  assert.equal(M.fmtMetric('lcp', '2500'), '2,500 ms', 'a budget\'s value given as text');
  assert.equal(M.fmtMetric('lcp', null), '–');
});

test('ratings by the metric\'s thresholds, higher-is-better scores too', () => {
  const lcp = M.METRICS.lcp, score = M.METRICS.performance_score;
  assert.equal(M.rating('lcp', lcp.good), 'good');
  assert.equal(M.rating('lcp', lcp.good + 1), 'warn');
  assert.equal(M.rating('lcp', lcp.poor + 1), 'bad');
  assert.ok(score.higher);
  assert.equal(M.rating('performance_score', score.good), 'good');
  assert.equal(M.rating('performance_score', score.poor - 1), 'bad');
  assert.equal(M.rating('lcp', 'n/a'), '');
  assert.equal(M.rating('no_such_metric', 1), '');
});

test('LCP phases are named', () => {
  const [field] = Object.keys(M.PHASES);
  assert.ok(field, 'no phase in metric-names.json');
  assert.equal(M.phaseLabel(field), M.PHASES[field].label);
  assert.equal(M.phaseLabel('unknown'), 'unknown');
});
