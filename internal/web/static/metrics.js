// openvitals dashboard: metrics' and LCP phases' names, units and thresholds, from
// metric-names.json (generated from the one declaration the API's documentation uses too),
// and the values written by them. Pure once the names are in (setNames): no DOM.
import { fmt } from './format.js';

// METRICS are every metric's names, unit and thresholds by field, PHASES the LCP's phases
// (ttfb, loadDelay...): filled by setNames before any view is drawn.
export var METRICS = {}, PHASES = {};

// setNames takes in metric-names.json's document.
export function setNames(n) {
  n.metrics.forEach(function (m) { m.unit = m.unit || ''; METRICS[m.field] = m; });
  n.phases.forEach(function (m) { PHASES[m.field] = m; });
}

// metricLabel is a metric's short name (its field when it has none).
export function metricLabel(f) { return METRICS[f] ? METRICS[f].label : f; }
// phaseLabel is an LCP phase's name ("Load delay").
export function phaseLabel(f) { return PHASES[f] ? PHASES[f].label : f; }
// metricName is a metric's full name with its short one where that is not in it: "Largest
// Contentful Paint (LCP)", or Lighthouse's performance score.
export function metricName(f) {
  var m = METRICS[f];
  if (!m) return f;
  return m.title.toLowerCase().indexOf(m.label.toLowerCase()) >= 0 ? m.title : m.title + ' (' + m.label + ')';
}
// categoryLabel is a Lighthouse category's name (best_practices: Best practices).
export function categoryLabel(c) { return METRICS[c + '_score'] ? METRICS[c + '_score'].label : c; }
// LAB_COLUMNS are the lab values the pages table and a page's summary show first.
export var LAB_COLUMNS = ['performance_score', 'lcp', 'cls', 'tbt', 'fcp', 'ttfb', 'speed_index', 'kb_total'];
// fmtMetric writes a metric's value with its unit (a number given as text, as a budget's, too).
export function fmtMetric(name, v) { var m = METRICS[name]; return fmt(typeof v === 'string' && v !== '' && !isNaN(v) ? Number(v) : v, m ? m.unit : ''); }
// rating is good / warn / bad for a value of a metric with thresholds, else ''.
export function rating(name, v) {
  var m = METRICS[name];
  if (!m || m.good === undefined || typeof v !== 'number') return '';
  if (m.higher) return v >= m.good ? 'good' : v >= m.poor ? 'warn' : 'bad';
  return v <= m.good ? 'good' : v <= m.poor ? 'warn' : 'bad';
}
