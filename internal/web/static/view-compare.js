// openvitals dashboard: two audits of one page on one device side by side: metrics and their
// changes, both filmstrips on one time axis, and the requests that changed.
import { el, empty } from './dom.js';
import { get, keyedImage } from './api.js';
import { fmt, fmtBytes, fmtPct, range } from './format.js';
import { METRICS, phaseLabel } from './metrics.js';
import { table } from './table.js';
import { field } from './forms.js';
import { withQuery } from './routes.js';
import { go, link, load } from './app.js';

var kb = fmtBytes;

function hash(w, q) { return withQuery('#/w/' + w.id + '/compare', q); }
function unitOf(m) { return m.unit === 'points' ? 'score' : m.unit || (METRICS[m.name] ? METRICS[m.name].unit : ''); }
function signed(v, unit) { return v === null ? '–' : (v > 0 ? '+' : v < 0 ? '−' : '') + fmt(Math.abs(v), unit); }

// methods names the sides' measurement methods: one, or both when they differ (their numbers
// then differ by the method too).
function methods(c) {
  var a = c.base.method, b = c.target.method;
  if (!a && !b) return '';
  if (a === b || !a || !b) return ' · ' + (a || b) + ' throttling';
  return ' · ' + a + ' throttling against ' + b + ' throttling: the numbers differ by the method too';
}

// compareView: #/w/{id}/compare?page=&device=&base=&target=
export function compareView(w, q) {
  var device = q.device === 'desktop' ? 'desktop' : 'mobile';
  var base = '/' + w.id + '/pages/' + encodeURIComponent(q.page || '');
  return load([get(withQuery(base + '/compare', { device: device, base: q.base, target: q.target })),
    get(base + '/timeline?device=' + device + '&date=' + range(90)).then(function (r) { return r.result; }, function () { return []; })]).then(function (r) {
    var c = r[0], days = r[1].map(function (t) { return t.date; });
    var out = [el('p', null, link('#/w/' + w.id + '/page/' + c.page.id + '?device=' + device, '← ' + (c.page.alias || c.page.url))),
      el('h1', { text: 'Compare ' + name(c.base) + ' with ' + name(c.target) }),
      el('p', { class: 'sub', text: c.page.url + ' · ' + device + methods(c) }),
      picker(w, c.page.id, device, days, q.base, q.target),
      el('h2', { text: 'Metrics' }), metricsTable(c.metrics)];
    if (!c.loads) {
      out.push(empty('One of these audits kept no diagnostics (filmstrip, requests): only their metrics compare.'));
      return out;
    }
    // Simulated numbers model a slow load from a fast one: the pictures below are the fast
    // loads, so the metrics' change need not show in them. Say so once, above them.
    if (c.base.method === 'simulated' || c.target.method === 'simulated') {
      out.push(el('p', { class: 'method-note', text: 'Simulated throttling: the filmstrips and requests below are the fast loads Lighthouse observed; the metrics above are its simulation of slow ones, so a change in them may show here smaller or not at all. Applied throttling measures and pictures one load.' }));
    }
    return out.concat(loadSections(c.loads, name(c.base), name(c.target)));
  });
}
// loadSections shows what changed in the load: filmstrips, requests, LCP, new shifts.
export function loadSections(l, baseName, targetName) {
  var out = [];
  out.push(el('h2', { text: 'Filmstrips' }), filmstrip(l.filmstrip, baseName, targetName));
  out.push(el('h2', { text: 'Requests that changed' }), l.requests.length ? waterfall(l.requests) : empty('No request was added, removed, grown or slowed.'),
    el('p', { class: 'muted', text: l.unchangedRequests + ' requests did not change beyond the runs\' noise.' }));
  out.push(el('h2', { text: 'Largest contentful paint' }), lcp(l.lcp));
  if (l.layoutShifts.length) {
    out.push(el('h2', { text: 'New layout shifts' }), table([
      { label: 'Elements', cell: function (s) { return s.elements.map(function (e) { return e.selector || e.snippet; }).join(', ') || '–'; } },
      { label: 'Score', n: true, cell: function (s) { return fmt(s.score, '') + (s.baseScore ? ' (was ' + fmt(s.baseScore, '') + ')' : ' (new)'); } },
      { label: 'At', n: true, cell: function (s) { return fmt(s.time, 'ms'); } },
      { label: 'Causes', cell: function (s) { return s.causes.map(function (x) { return x.kind + (x.url ? ' ' + x.url : ''); }).join('; '); } }
    ], l.layoutShifts));
  }
  return out;
}
function name(a) { return a.date || a.test; }

// picker chooses two audits of a page: days it has results for (a test's ID may be typed).
function picker(w, pageID, device, days, from, to) {
  var opts = days.slice().reverse();
  var a = el('input', { id: 'cmp-base', list: 'cmp-days', value: from || opts[1] || '', required: true, size: '16' });
  var b = el('input', { id: 'cmp-target', list: 'cmp-days', value: to || opts[0] || '', required: true, size: '16' });
  return el('form', { class: 'row', id: 'compare-picker', 'aria-label': 'Compare two audits', onsubmit: function (e) {
    e.preventDefault();
    go(hash(w, { page: pageID, device: device, base: a.value.trim(), target: b.value.trim() }));
  } }, el('datalist', { id: 'cmp-days' }, opts.map(function (d) { return el('option', { value: d }); })),
  field('Base (day or test)', a), field('Target', b), el('button', { type: 'submit', text: 'Compare' }));
}

// metricsTable shows the watched metrics (those with a unit and a direction) and, behind a
// disclosure, every other value the audits have.
function metricsTable(ms) {
  var watched = ms.filter(function (m) { return m.higherIsWorse !== undefined; });
  var others = ms.filter(function (m) { return m.higherIsWorse === undefined; });
  return el('div', { id: 'compare-metrics' }, metricRows(watched, '± half the interquartile range of each audit\'s Lighthouse runs'),
    others.length ? el('details', null, el('summary', { text: 'Other values (' + others.length + ')' }), metricRows(others)) : null);
}
function metricRows(ms, caption) {
  return table([
    { label: 'Metric', cell: function (m) { return METRICS[m.name] ? METRICS[m.name].label : m.name; } },
    { label: 'Base', n: true, cell: function (m) { return fmt(m.base, unitOf(m)) + spread(m.baseSpread, m); } },
    { label: 'Target', n: true, cell: function (m) { return fmt(m.target, unitOf(m)) + spread(m.targetSpread, m); } },
    { label: 'Change', n: true, value: function (m) { return m.changePercent; }, cell: function (m) {
      var worse = m.higherIsWorse === undefined || !m.change ? '' : (m.change > 0) === m.higherIsWorse ? 'bad' : 'good';
      return el('td', { class: 'n ' + (m.beyondSpread ? worse : 'muted') },
        signed(m.change, unitOf(m)) + (m.changePercent === null ? '' : ' (' + fmtPct(m.changePercent, true) + ')'),
        m.beyondSpread ? '' : m.baseSpread !== null ? ' within noise' : '');
    } }
  ], ms, caption, { stack: true });
}
function spread(s, m) { return s === null ? '' : ' ± ' + fmt(s / 2, unitOf(m)); }

// filmstrip shows both loads' frames on one axis: a column per slot, a row per load.
function filmstrip(f, baseName, targetName) {
  if (!f.slots.length) return empty('Neither load recorded frames.');
  var mark = function (marks, t) {
    return ['fcp', 'lcp'].filter(function (k) { return marks[k] !== undefined && marks[k] > t - f.step && marks[k] <= t; }).join(' ').toUpperCase();
  };
  var row = function (label, key, marks) {
    return el('tr', null, el('th', { scope: 'row', text: label }), f.slots.map(function (s) {
      var fr = s[key], m = mark(marks, s.time);
      var td = el('td', { class: 'frame' + (s[key + 'Changed'] ? ' changed' : '') + (m ? ' marked' : '') });
      if (fr) td.appendChild(fr.url ? keyedImage(fr.url, { width: '72', alt: label + ' at ' + fmt(s.time, 'ms') }) : el('span', { class: 'muted', text: fmt(fr.time, 'ms') }));
      if (m) td.appendChild(el('span', { class: 'badge', text: m }));
      return td;
    }));
  };
  return el('div', { class: 'scroll cmp-film', tabindex: '0', role: 'region', 'aria-label': 'Filmstrips, every ' + fmt(f.step, 'ms') },
    el('table', null, el('thead', null, el('tr', null, el('th', { text: 'Time' }), f.slots.map(function (s) { return el('th', { class: 'n', text: (s.time / 1000).toFixed(1) + ' s' }); }))),
      el('tbody', null, row(baseName, 'base', f.baseMarks), row(targetName, 'target', f.targetMarks))));
}
// waterfall lists the changed requests with both loads' bars on one time axis.
function waterfall(reqs) {
  var end = Math.max.apply(null, reqs.map(function (r) { return Math.max(r.base ? r.base.end : 0, r.target ? r.target.end : 0); })) || 1;
  var bar = function (t, cls) {
    var svg = el('svg:svg', { class: 'wf', viewBox: '0 0 200 6', preserveAspectRatio: 'none', 'aria-hidden': 'true' });
    if (t) svg.appendChild(el('svg:rect', { class: cls, x: (t.start / end * 200).toFixed(1), width: Math.max(1, (t.end - t.start) / end * 200).toFixed(1), y: '0', height: '6' }));
    return svg;
  };
  return table([
    { label: 'Change', value: function (r) { return r.kind; }, cell: function (r) { return el('span', { class: 'badge ' + (r.kind === 'removed' ? 'good' : 'bad'), text: r.kind }); } },
    { label: 'Request', cell: function (r) {
      return el('span', { class: 'url', title: r.url }, r.url.replace(/^https?:\/\//, '').slice(0, 80), ' ', el('span', { class: 'muted', text: r.resourceType + (r.renderBlocking ? ', render-blocking' : '') + (r.thirdParty ? ', ' + (r.entity || 'third party') : '') }));
    } },
    { label: 'Size', n: true, value: function (r) { return r.sizeChange; }, cell: function (r) { return (r.base ? kb(r.base.transferSize) : '–') + ' → ' + (r.target ? kb(r.target.transferSize) : '–') + ' (' + signed(r.sizeChange, 'B') + ')'; } },
    { label: 'Time', n: true, value: function (r) { return r.timeChange; }, cell: function (r) { return signed(r.timeChange, 'ms'); } },
    { label: 'Base / target (0 – ' + fmt(end, 'ms') + ')', cell: function (r) { return el('div', null, bar(r.base, 'b'), bar(r.target, 't')); } }
  ], reqs, 'Requests added, removed, grown or slowed', { stack: true });
}

function lcp(c) {
  var el0 = function (x) { return x ? (x.selector || x.snippet || 'an element') + (x.imageUrl ? ' (' + x.imageUrl + ')' : '') + ' at ' + fmt(x.time, 'ms') : 'none'; };
  return el('div', null, el('p', null, c.elementChanged ? el('b', { text: 'The element changed: ' }) : 'The same element: ', el0(c.base), ' → ', el0(c.target)),
    c.phases.length ? table([
      { label: 'Phase', cell: function (p) { return phaseLabel(p.name); } },
      { label: 'Base', n: true, cell: function (p) { return fmt(p.base, 'ms'); } },
      { label: 'Target', n: true, cell: function (p) { return fmt(p.target, 'ms'); } },
      { label: 'Change', n: true, cell: function (p) { return el('td', { class: 'n ' + (p.change > 0 ? 'bad' : 'good'), text: signed(p.change, 'ms') }); } }
    ], c.phases, 'Phases that changed by 50 ms or more') : el('p', { class: 'muted', text: 'No phase changed by 50 ms or more.' }));
}

// comparePicker is the page view's way in: two of its days compared.
export function comparePicker(w, pageID, device, days) {
  return days.length > 1 ? picker(w, pageID, device, days) : empty('Two audits are needed to compare them.');
}
// compareLink links a regression to the comparison of its last good and first bad day.
export function compareLink(w, c) {
  return c ? el('a', { class: 'compare', href: hash(w, { page: c.page, device: c.device, base: c.base, target: c.target }), text: 'Compare ' + c.base + ' with ' + c.target }) : null;
}
