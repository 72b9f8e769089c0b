// openvitals dashboard: opportunities (failed Lighthouse audits): their estimated savings and
// their details in Lighthouse's own formats.
import { el } from './dom.js';
import { fmt, fmtBytes } from './format.js';
import { table } from './table.js';

var bytes = fmtBytes;

// MAX_ROWS bounds the rows of a details table; the full report has the rest.
var MAX_ROWS = 20;

// bytes shows a size in the dashboard's binary units, as Lighthouse's own text.
function ms(v) { return typeof v === 'number' ? (Math.abs(v) >= 10000 ? (v / 1000).toFixed(1) + ' s' : fmt(v, 'ms')) : ''; }
// numeric shows a number to its granularity (0.001 for a layout shift score).
function numeric(v, granularity) {
  if (typeof v !== 'number') return '';
  if (granularity && granularity < 1) return v.toFixed(Math.min(4, Math.round(-Math.log10(granularity))));
  return fmt(v, '');
}
// markdown drops Markdown links to their text (the dashboard's CSP keeps it to text).
function markdown(s) { return String(s || '').replace(/\[([^\]]+)\]\([^)]+\)/g, '$1'); }
function label(h) { var l = h.label; return typeof l === 'string' ? l : (l && l.formattedDefault) || ''; }

// savingsText is an opportunity's estimated savings in a few words, '' without any:
// "Est. savings 450 ms, 145 KiB (LCP 450 ms, CLS 0.021)".
export function savingsText(o) {
  var parts = [];
  if (o.savingsMs > 0) parts.push(ms(o.savingsMs));
  if (o.savingsBytes > 0) parts.push(bytes(o.savingsBytes));
  var metrics = Object.keys(o.metricSavings || {}).filter(function (m) { return o.metricSavings[m] > 0; }).sort().map(function (m) {
    return m + ' ' + (m === 'CLS' ? numeric(o.metricSavings[m], 0.001) : ms(o.metricSavings[m]));
  });
  if (!parts.length && !metrics.length) return '';
  return 'Est. savings ' + (parts.length ? parts.join(', ') : '') + (metrics.length ? (parts.length ? ' ' : '') + '(' + metrics.join(', ') + ')' : '');
}
// ranked are a list's ids in its rank order (1 first).
export function rankedOpportunities(list) {
  return Object.keys(list).sort(function (a, b) { return (list[a].rank || 1e9) - (list[b].rank || 1e9) || (a < b ? -1 : 1); });
}

// value shows one value of a details table: a typed object (node, source location, URL,
// code...) or a number or text shown as its column's valueType says.
function value(v, valueType, granularity) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return v.type ? details(v) : el('code', { text: JSON.stringify(v).slice(0, 200) });
  if (typeof v === 'number') {
    switch (valueType) {
      case 'bytes': return bytes(v);
      case 'ms': case 'timespanMs': return ms(v);
      default: return numeric(v, granularity);
    }
  }
  if (valueType === 'code') return el('code', { text: String(v) });
  if (valueType === 'url') return url(String(v));
  return String(v);
}
function url(u) { return el('span', { class: 'url', title: u, text: u }); }

// rowsOf turns items and their subItems into rows: a subitem row shows each column's
// subItemsHeading key (with its own valueType, else the column's).
function tableOf(d) {
  var heads = (d.headings || []).filter(function (h) { return h.key || (h.subItemsHeading && h.subItemsHeading.key); });
  var items = d.items || [];
  if (!heads.length || !items.length) return null;
  var rows = [];
  items.slice(0, MAX_ROWS).forEach(function (it) {
    rows.push({ it: it, sub: false });
    var subs = it.subItems && it.subItems.items || [];
    subs.slice(0, MAX_ROWS).forEach(function (s) { rows.push({ it: s, sub: true }); });
  });
  var t = table(heads.map(function (h) {
    return { label: label(h) || h.key || '', cell: function (r) {
      var key = r.sub ? h.subItemsHeading && h.subItemsHeading.key : h.key;
      if (!key) return '';
      var vt = r.sub ? (h.subItemsHeading.valueType || h.valueType) : h.valueType;
      var g = r.sub ? (h.subItemsHeading.granularity || h.granularity) : h.granularity;
      var c = value(r.it[key], vt, g);
      return el('td', { class: (r.sub ? 'sub ' : '') + (typeof r.it[key] === 'number' ? 'n' : '') || null }, c);
    } };
  }), rows);
  var out = [t];
  if (items.length > MAX_ROWS) out.push(el('p', { class: 'muted', text: (items.length - MAX_ROWS) + ' more rows in the full report.' }));
  return el('div', null, out);
}

// tree shows a network dependency tree (network-tree: url, navStartToEndTime, transferSize)
// or a critical request chain (criticalrequestchain: request.url, times in seconds) nested.
function tree(chains, depth) {
  var ids = Object.keys(chains || {});
  if (!ids.length || depth > 30) return null;
  return el('ul', { class: 'tree' }, ids.map(function (id) {
    var n = chains[id], r = n.request || n;
    var end = typeof n.navStartToEndTime === 'number' ? n.navStartToEndTime : typeof r.endTime === 'number' && typeof r.startTime === 'number' ? (r.endTime - r.startTime) * 1000 : null;
    return el('li', { class: n.isLongest ? 'longest' : null },
      url(r.url || ''), ' ',
      el('span', { class: 'muted', text: [end === null ? '' : ms(end), typeof r.transferSize === 'number' ? bytes(r.transferSize) : ''].filter(Boolean).join(', ') }),
      tree(n.children, depth + 1));
  }));
}

// details shows any Lighthouse details object (or a typed value inside one).
function details(d) {
  if (!d || typeof d !== 'object') return null;
  switch (d.type) {
    case 'table': case 'opportunity': return tableOf(d);
    case 'list': return el('div', { class: 'lh-list' }, (d.items || []).map(details));
    case 'list-section': return el('section', { class: 'lh-section' }, d.title ? el('h4', { text: d.title }) : null,
      d.description ? el('p', { class: 'muted', text: markdown(d.description) }) : null, details(d.value));
    case 'network-tree': return el('div', null,
      d.longestChain && typeof d.longestChain.duration === 'number' ? el('p', { text: 'Longest chain: ' + ms(d.longestChain.duration) }) : null, tree(d.chains, 0));
    case 'criticalrequestchain': return el('div', null,
      d.longestChain ? el('p', { text: 'Longest chain: ' + ms(d.longestChain.duration) + ', ' + d.longestChain.length + ' requests, ' + bytes(d.longestChain.transferSize) }) : null, tree(d.chains, 0));
    case 'node': // its label (an image's alt text, a text's start), its HTML and its selector, each once
      var said = [d.snippet];
      var part = function (v, mk) { if (!v || said.indexOf(v) >= 0 || said.indexOf('<' + v + '>') >= 0) return null; said.push(v); return mk(v); };
      return el('span', { class: 'node' }, d.snippet ? el('code', { text: d.snippet }) : null,
        part(d.nodeLabel, function (v) { return el('span', { text: ' ' + v }); }),
        part(d.selector, function (v) { return el('span', { class: 'muted', text: ' ' + v }); }));
    case 'source-location': return url((d.url || '') + (typeof d.line === 'number' ? ':' + (d.line + 1) + ':' + (d.column || 0) : ''));
    case 'url': return url(String(d.value || ''));
    case 'link': return el('a', { href: /^https?:/.test(d.url || '') ? d.url : null, rel: 'noopener noreferrer', target: '_blank', text: d.text || d.url || '' });
    case 'text': return String(d.value === undefined ? '' : d.value);
    case 'code': return el('code', { text: String(d.value === undefined ? '' : d.value) });
    case 'numeric': return numeric(d.value, d.granularity);
    case 'ms': return ms(d.value);
    case 'bytes': return bytes(d.value);
    case 'checklist': return el('ul', { class: 'checklist' }, Object.keys(d.items || {}).map(function (k) {
      var c = d.items[k];
      return el('li', { class: c.value ? 'good' : 'bad' }, (c.value ? '✓ ' : '✗ ') + (c.label || k));
    }));
    default: return null; // screenshot, filmstrip, treemap-data, debugdata: nothing to read here
  }
}

// auditDetails shows a Lighthouse audit in its own format: description, display value,
// estimated savings and its details, whatever their type.
export function auditDetails(a) {
  var out = el('div', { class: 'audit' });
  if (a.description) out.appendChild(el('p', { text: markdown(a.description) }));
  if (a.displayValue) out.appendChild(el('p', null, el('b', { text: a.displayValue })));
  var d = details(a.details);
  out.appendChild(d || el('p', { class: 'muted', text: 'Lighthouse gives no details for this audit.' }));
  return out;
}
