// openvitals dashboard: real users: vitals, segments, attributions, the report per page and country.
import { el, empty, say } from './dom.js';
import { api, get } from './api.js';
import { fmt, fmtPct } from './format.js';
import { fmtMetric, metricLabel, METRICS, rating } from './metrics.js';
import { metricCell, table } from './table.js';
import { chart } from './chart.js';
import { busy, segmented, select } from './forms.js';
import { withQuery } from './routes.js';
import { go, isAdmin, load, render } from './app.js';

// ---- real users -------------------------------------------------------------------------
var RUM_METRICS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb', 'fid', 'fp', 'dns_time', 'connect_time', 'server_time', 'transfer_time', 'dom_time', 'fully_loaded_time', 'transfer_size', 'dom_size', 'dom_elements'];
// ---- real users -----------------------------------------------------------------------
var VITALS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'];
var SEG_DIMS = {
  device: ['mobile', 'tablet', 'desktop', 'unknown'],
  browser: ['chrome', 'edge', 'firefox', 'safari', 'samsung', 'opera', 'other', 'unknown'],
  os: ['android', 'ios', 'windows', 'macos', 'linux', 'chromeos', 'other', 'unknown'],
  connection: ['4g', '3g', '2g', 'slow-2g', 'unknown'],
  navigation: ['navigate', 'reload', 'back-forward', 'back-forward-cache', 'prerender', 'restore', 'soft', 'unknown']
};
var PART_LABELS = { timeToFirstByte: 'TTFB', resourceLoadDelay: 'Load delay', resourceLoadDuration: 'Load time', elementRenderDelay: 'Render delay',
  inputDelay: 'Input delay', processingDuration: 'Processing', presentationDelay: 'Presentation', duration: 'Script time', time: 'At' };
// problemBox says what the API refused, naming its fields: the rest of the view stays.
export function problemBox(err) {
  var errs = err.errors || [];
  var named = errs.every(function (e) { return err.message.indexOf(e.field) >= 0; });
  return el('p', { class: 'error', role: 'alert', 'data-fields': errs.map(function (e) { return e.field; }).join(' '),
    text: err.message + (named ? '' : ' (' + errs.map(function (e) { return e.field + ': ' + e.message; }).join('; ') + ')') });
}
// segQuery is a real-user report's query string.
export function segQuery(o) {
  var q = ['metric=' + o.vital, 'date=' + o.from.replace(/-/g, '') + '-' + o.to.replace(/-/g, '')];
  Object.keys(o.filters || {}).forEach(function (k) { if (o.filters[k]) q.push(k + '=' + encodeURIComponent(o.filters[k])); });
  if (o.page) q.push('page=' + encodeURIComponent(o.page));
  if (o.by) q.push('by=' + o.by);
  return '?' + q.join('&');
}
export function ratingBar(r) {
  var g = r.ratings.good.percent, ni = r.ratings.needsImprovement.percent, p = r.ratings.poor.percent;
  return el('div', { class: 'ratings', role: 'img', 'aria-label': 'Good ' + g + ' %, needs improvement ' + ni + ' %, poor ' + p + ' %' },
    [['good', g], ['warn', ni], ['bad', p]].map(function (x) {
      // Through the CSSOM: the page's policy refuses style attributes.
      var seg = el('span', { class: x[0], title: x[1] + ' %', text: x[1] >= 8 ? Math.round(x[1]) + ' %' : '' });
      seg.style.width = x[1] + '%';
      return seg;
    }));
}
export function attributionTable(metric, kind, rows) {
  var cols = [];
  var name = { elements: 'Element', targets: 'Target', scripts: 'Script', entities: 'Entity', softNavigationStarts: 'Interaction' }[kind];
  cols.push({ label: name, cell: function (r) {
    if (kind === 'scripts') return [r.entity + ': ', el('code', { text: (r.url || '(inline)') + (r.function ? ' ' + r.function + '()' : '') })];
    if (kind === 'entities') return r.entity;
    return [el('code', { text: r.element || r.target || '(unknown)' }), r.url ? el('div', { class: 'muted', text: r.url }) : null, r.type ? ' (' + r.type + ')' : ''];
  } });
  cols.push({ label: 'Slow views', n: true, value: function (r) { return r.slowViews; }, cell: function (r) { return fmt(r.slowViews, 'score') + ' (' + fmt(r.slowPercent, '') + ' %)'; } });
  cols.push({ label: 'Views', n: true, value: function (r) { return r.views; }, cell: function (r) { return fmt(r.views, 'score'); } });
  cols.push({ label: 'p75 ' + metric.toUpperCase(), n: true, value: function (r) { return r.value; }, cell: function (r) { return metricCell(metric, r.value); } });
  // The parts in the order they happen (the API's objects have no order).
  var parts = rows.length && rows[0].parts ? Object.keys(PART_LABELS).filter(function (p) { return p in rows[0].parts; }) : [];
  if (parts.length > 1) cols.push({ label: 'Mean: ' + parts.map(function (p) { return PART_LABELS[p] || p; }).join(' + '), cell: function (r) {
    return parts.map(function (p) { return fmt(r.parts[p], metric === 'cls' ? 'ms' : METRICS[metric].unit); }).join(' + ') + ' = ' + fmtMetric(metric, r.mean);
  } });
  else if (parts.length) cols.push({ label: 'Mean ' + (PART_LABELS[parts[0]] || parts[0]), n: true, cell: function (r) { return fmt(r.parts[parts[0]], 'ms'); } });
  // Stacked on a phone: an element's selector and the phases' sum are wide.
  return table(cols, rows, null, { stack: true });
}
// navigationBox tells hard loads from a single-page app's soft navigations, the share of back
// and forward navigations the back/forward cache restored (and why it did not), and the
// prerendered views, from the vital's breakdown by navigation and the cache's reasons.
function navigationBox(vital, seg, reasons) {
  var rows = {};
  seg.list.forEach(function (x) { rows[x.key] = x; });
  var views = function (keys) { return keys.reduce(function (n, k) { return n + (rows[k] ? rows[k].views : 0); }, 0); };
  var label = vital.toUpperCase();
  var stat = function (id, keys, text) {
    var n = views(keys), one = keys.length === 1 && rows[keys[0]];
    return el('div', { class: 'stat', id: id }, el('b', { text: fmt(n, 'score') }),
      el('span', { text: text + (one && n ? ', p' + seg.percentile + ' ' + label + ' ' + fmtMetric(vital, one.value) : '') }));
  };
  var hard = ['navigate', 'reload', 'back-forward', 'back-forward-cache', 'prerender', 'restore', 'unknown'];
  var restored = views(['back-forward-cache']), back = restored + views(['back-forward']);
  var box = el('div', { id: 'rum-navigations' }, el('h3', { text: 'Navigations: page loads, single-page app routes, back/forward cache, prerender' }),
    el('div', { class: 'stats' },
      stat('rum-hard', hard, 'page loads (hard navigations)'),
      stat('rum-soft', ['soft'], 'soft navigations (route changes)'),
      el('div', { class: 'stat', id: 'rum-bfcache' }, el('b', { text: back ? fmtPct(100 * restored / back) : '–' }),
        el('span', { text: back ? 'of ' + fmt(back, 'score') + ' back/forward navigations restored from the cache' : 'no back/forward navigation' })),
      stat('rum-prerender', ['prerender'], 'prerendered')));
  if (reasons && reasons.length) {
    box.appendChild(el('div', { id: 'rum-bfcache-reasons' }, el('h4', { text: 'Why the back/forward cache did not restore the page' }), table([
      { label: 'Reason', value: function (r) { return r.reason; }, cell: function (r) { return el('code', { text: r.reason }); } },
      { label: 'Navigations', n: true, value: function (r) { return r.views; }, cell: function (r) { return fmt(r.views, 'score'); } },
      { label: 'p' + seg.percentile + ' TTFB', n: true, value: function (r) { return r.value; }, cell: function (r) { return metricCell('ttfb', r.value); } }
    ], reasons)));
  }
  return box;
}
// rumPanel draws a vital of real users: its trend, ratings, distribution, breakdown and top
// attributions, for the website (filtered) or one monitored page. A refused query shows its
// problem in place.
export function rumPanel(w, o) {
  var q = segQuery(o), base = '/' + w.id + '/field-testing/';
  var wantAttr = ['lcp', 'inp', 'cls'].indexOf(o.vital) >= 0;
  return Promise.all([
    get(base + 'trend' + q),
    get(base + 'distribution' + segQuery(Object.assign({}, o, { by: '' }))),
    o.by ? get(base + 'segments' + q) : null,
    wantAttr ? get(base + 'attributions' + segQuery(Object.assign({}, o, { by: '' }))).catch(function (err) { return { problem: err }; }) : null,
    // Hard and soft views, the back/forward cache and prerender: left out where the filters
    // cannot be answered so.
    get(base + 'segments' + segQuery(Object.assign({}, o, { by: 'navigation' }))).catch(function () { return null; }),
    get(base + 'attributions' + segQuery(Object.assign({}, o, { vital: 'ttfb', by: '' }))).catch(function () { return null; })
  ]).then(function (r) {
    var trend = r[0].result, dist = r[1].result, out = [];
    var label = o.vital.toUpperCase(), unit = METRICS[o.vital].unit;
    if (!dist.views) return [empty('No real-user view of ' + label + ' in this range' + (o.page ? ' for this page' : '') + '.')];
    var dates = trend.days.map(function (d) { return d.date; });
    var series = [{ label: 'p' + trend.percentile + ' ' + label + ' (real users)', values: trend.days.map(function (d) { return d.value; }), unit: unit }];
    (trend.series || []).slice(0, 5).forEach(function (s) { series.push({ label: s.key, values: s.days.map(function (d) { return d.value; }), unit: unit, dash: true }); });
    // The histogram from its first bucket with views to its last.
    var firstBar = dist.histogram.findIndex(function (b) { return b.views > 0; });
    var lastBar = dist.histogram.length - 1 - dist.histogram.slice().reverse().findIndex(function (b) { return b.views > 0; });
    var bars = dist.histogram.slice(firstBar, lastBar + 1);
    out.push(el('div', { class: 'stats' },
      el('div', { class: 'stat' }, el('b', { class: rating(o.vital, dist.value), text: fmtMetric(o.vital, dist.value) }), el('span', { text: 'p' + dist.percentile + ' ' + label + ', real users' })),
      el('div', { class: 'stat' }, el('b', { text: fmt(dist.views, 'score') }), el('span', { text: 'page views' })),
      el('div', { class: 'stat wide' }, ratingBar(dist), el('span', { text: 'good / needs improvement / poor' }))));
    out.push(el('div', { class: 'charts' },
      chart({ title: 'p' + trend.percentile + ' ' + label + ' per day' + (o.by ? ' by ' + o.by : ''), x: dates, series: series }),
      chart({ title: 'Good / needs improvement / poor per day (%)', x: dates, stacked: true, series: [['good', 'Good', 'good'], ['needsImprovement', 'Needs improvement', 'warn'], ['poor', 'Poor', 'bad']].map(function (k) {
        return { label: k[1], values: trend.days.map(function (d) { return d.views ? d.ratings[k[0]].percent : null; }), unit: '', colour: k[2] };
      }) }),
      chart({ title: 'Distribution of ' + label, categories: bars.map(function (b) { return b.to ? fmt(b.from, unit === 'ms' ? 'score' : '') + '–' + fmt(b.to, unit === 'ms' ? 'score' : '') : '≥ ' + fmt(b.from, unit === 'ms' ? 'score' : ''); }), categoryLabel: label, bars: true,
        series: [{ label: 'Page views', values: bars.map(function (b) { return b.views; }), unit: 'score' }] })));
    if (r[2]) {
      var seg = r[2].result;
      out.push(el('h3', { text: label + ' by ' + seg.by }), el('div', { id: 'rum-segments' }, table([
        { label: seg.by, value: function (x) { return x.key; }, cell: function (x) { return x.key; } },
        { label: 'Page views', n: true, value: function (x) { return x.views; }, cell: function (x) { return fmt(x.views, 'score'); } },
        { label: 'Share', n: true, value: function (x) { return x.percent; }, cell: function (x) { return fmtPct(x.percent); } },
        { label: 'p' + seg.percentile + ' ' + label, n: true, value: function (x) { return x.value; }, cell: function (x) { return metricCell(o.vital, x.value); } },
        { label: 'Good / NI / poor', cell: function (x) { return ratingBar(x); } }
      ], seg.list)));
    }
    if (r[4]) out.push(navigationBox(o.vital, r[4].result, r[5] && r[5].result.notRestoredReasons));
    if (r[3] && r[3].problem) out.push(el('h3', { text: 'Why: top attributions' }), problemBox(r[3].problem));
    else if (r[3]) {
      var at = r[3].result;
      var box = el('div', { id: 'rum-attributions' }, el('h3', { text: 'Why: top attributions (ranked by slow views)' }));
      [['elements', 'LCP elements'], ['targets', o.vital === 'cls' ? 'Elements the largest shift moved' : 'Interaction targets'], ['scripts', 'Scripts of the interactions\' long animation frames'], ['entities', 'By third party'],
        ['softNavigationStarts', 'Interactions that started soft navigations (LCP of the routes they led to)']].forEach(function (k) {
        if (at[k[0]] && at[k[0]].length) box.appendChild(el('div', { class: 'attr-' + k[0] }, el('h4', { text: k[1] }), attributionTable(o.vital, k[0], at[k[0]])));
      });
      if (box.childNodes.length === 1) box.appendChild(empty('No attribution in this range.'));
      // Lists whose tables do not keep a filter (scripts by navigation): said, not hidden.
      Object.keys(at.leftOut || {}).sort().forEach(function (k) {
        box.appendChild(el('p', { class: 'muted left-out', text: 'Not shown with these filters: ' + at.leftOut[k] + '.' }));
      });
      out.push(box);
    }
    return out;
  }, function (err) { return [problemBox(err)]; });
}
// rumView: the website's real users, any vital, filtered by segments and broken down by one;
// then the report per page and country, and the snippet.
export function rumView(w, q) {
  // Any range of days: from and to (yyyy-MM-dd), the last days (7 by default) without them.
  var isoDay = function (d) { return d.toISOString().slice(0, 10); };
  var days = Number(q.days) || 7;
  var valid = /^\d{4}-\d{2}-\d{2}$/;
  var to = valid.test(q.to || '') ? q.to : isoDay(new Date());
  var from = valid.test(q.from || '') ? q.from : isoDay(new Date(Date.parse(to) - (days - 1) * 864e5));
  var vital = VITALS.indexOf(q.vital) >= 0 ? q.vital : 'lcp';
  var filters = {};
  ['group', 'country'].concat(Object.keys(SEG_DIMS)).forEach(function (d) { if (q[d]) filters[d] = q[d]; });
  return load([get('/' + w.id + '/field-testing/settings')]).then(function (res) {
    var groups = res[0].groups;
    var here = function (o) { return withQuery('#/w/' + w.id + '/rum', Object.assign({}, q, o)); };
    var inputs = {};
    var pick = function (name, values, label) {
      var s = select(name, [['', 'any']].concat(values.map(function (v) { return [v, v]; })), filters[name] || '');
      s.id = 'rum-' + name;
      inputs[name] = s;
      return el('label', { for: s.id }, label, s);
    };
    var country = el('input', { id: 'rum-country', name: 'country', value: filters.country || '', size: '8', placeholder: 'DE,FR', 'aria-describedby': 'rum-country-error' });
    var countryError = el('span', { id: 'rum-country-error', class: 'error', 'aria-live': 'polite' });
    var by = select('seg', [['', 'nothing']].concat(['group', 'device', 'browser', 'os', 'connection', 'navigation', 'country'].map(function (d) { return [d, d]; })), q.seg || '');
    by.id = 'rum-by';
    var vitalSelect = select('vital', VITALS.map(function (v) { return [v, METRICS[v].label]; }), vital);
    vitalSelect.id = 'rum-vital';
    var fromInput = el('input', { id: 'rum-seg-from', type: 'date', value: from, max: to });
    var toInput = el('input', { id: 'rum-seg-to', type: 'date', value: to });
    var form = el('form', { class: 'row filters', 'aria-label': 'Real users', novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      // Checked here, in place: a typo is pointed at, the view stays.
      var c = country.value.trim().toUpperCase();
      var bad = c && !/^[A-Z]{2}(,[A-Z]{2})*$/.test(c);
      country.setAttribute('aria-invalid', bad ? 'true' : 'false');
      countryError.textContent = bad ? 'Two-letter country codes, separated by commas.' : '';
      if (bad) { country.focus(); return; }
      var o = { vital: vitalSelect.value, seg: by.value, country: c, from: fromInput.value, to: toInput.value, days: '' };
      Object.keys(inputs).forEach(function (k) { o[k] = inputs[k].value; });
      go(here(o));
    } },
      el('label', { for: 'rum-vital' }, 'Metric', vitalSelect),
      groups.length ? pick('group', ['(none)'].concat(groups.map(function (g) { return g.name; })), 'Page group') : null,
      pick('device', SEG_DIMS.device, 'Device'), pick('browser', SEG_DIMS.browser, 'Browser'), pick('os', SEG_DIMS.os, 'OS'),
      pick('connection', SEG_DIMS.connection, 'Connection'), pick('navigation', SEG_DIMS.navigation, 'Navigation'),
      el('label', { for: 'rum-country' }, 'Country', country, countryError),
      el('label', { for: 'rum-by' }, 'Break down by', by),
      el('label', { for: 'rum-seg-from' }, 'From', fromInput), el('label', { for: 'rum-seg-to' }, 'To', toInput),
      el('button', { type: 'submit', text: 'Show' }));
    return Promise.all([rumPanel(w, { vital: vital, from: from, to: to, filters: filters, by: q.seg }), pageCountryReport(w, q, from, to)]).then(function (parts) {
      var out = [el('h1', { text: 'Real users' }), el('p', { class: 'sub', text: 'Page views measured in visitors\' browsers by the openvitals snippet (web-vitals), not the Chrome UX Report.' }), form];
      var panel = el('div', { id: 'rum-panel' }, parts[0]);
      // The fields a refused report names are marked in the form above it.
      panel.querySelectorAll('[data-fields]').forEach(function (box) {
        box.getAttribute('data-fields').split(' ').forEach(function (f) {
          var input = form.querySelector('#rum-' + (f === 'by' ? 'by' : f === 'metric' ? 'vital' : f));
          if (input) input.setAttribute('aria-invalid', 'true');
        });
      });
      out.push(panel);
      out = out.concat(parts[1]);
    // The RUM entry of the deployment (its function URL, with no request price), else this origin.
    var entry = (document.querySelector('meta[name="openvitals-rum"]') || {}).content || location.origin + '/';
    var snippet = '<script async src="' + entry.replace(/\/?$/, '/') + 'rum/' + w.id + '.js"></script>';
      var code = el('pre', null, el('code', { id: 'snippet', text: snippet }));
      var copy = el('button', { type: 'button', class: 'secondary', text: 'Copy the snippet', onclick: function () {
        navigator.clipboard.writeText(snippet).then(function () { say('Snippet copied.'); }, function () { say('Select the snippet and copy it.'); });
      } });
      out.push(el('h2', { text: 'Snippet' }), el('p', { text: 'Put this in the <head> of every page; custom variables: (window.openvitals = window.openvitals || []).push(["set", "name", 42]).' }), code, copy);
      if (isAdmin()) out.push(rumSettingsForm(w, res[0]));
      return out;
    });
  });
}
// rumSettingsForm edits the page groups (one "name = pattern" a line), the sample rate and
// whether other lab agents count.
export function rumSettingsForm(w, set) {
  var ta = el('textarea', { id: 'rum-groups', name: 'groups', placeholder: 'Products = /product/*\nBlog = /blog/*' }, set.groups.map(function (g) { return g.name + ' = ' + g.pattern; }).join('\n'));
  var rate = el('input', { id: 'rum-rate', name: 'sampleRate', type: 'number', min: '0.001', max: '1', step: 'any', value: String(set.sampleRate) });
  var lab = el('input', { id: 'rum-lab', name: 'excludeLabAgents', type: 'checkbox', checked: set.excludeLabAgents });
  var msg = el('p', { class: 'error', id: 'rum-settings-error', 'aria-live': 'polite' });
  var b = el('button', { type: 'submit', text: 'Save' });
  return el('details', null, el('summary', { text: 'Page groups, sampling and lab agents' }), el('form', { 'aria-label': 'Real-user settings', onsubmit: function (e) {
    e.preventDefault();
    var groups = ta.value.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).map(function (l) {
      var i = l.indexOf('=');
      return i < 0 ? { name: l, pattern: l } : { name: l.slice(0, i).trim(), pattern: l.slice(i + 1).trim() };
    });
    msg.textContent = '';
    busy(b, function () { return api('PUT', '/' + w.id + '/field-testing/settings', { groups: groups, sampleRate: Number(rate.value), excludeLabAgents: lab.checked }); }, 'Settings saved.')
      .then(render, function (err) { msg.textContent = problemBox(err).textContent; });
  } }, el('label', { for: 'rum-groups' }, 'Page groups, matched in order (name = pattern, * for any characters)', ta),
    el('label', { for: 'rum-rate' }, 'Sample rate (1, 0.5, 0.25, 0.1 …)', rate),
    el('label', { class: 'inline', for: 'rum-lab' }, lab, 'Leave out other lab agents (synthetic monitors, headless browsers)'), msg, b));
}
export function pageCountryReport(w, q, from, to) {
  var dim = q.by === 'countries' ? 'countries' : 'pages';
  var metric = q.metric && /^[A-Za-z0-9_]{1,64}$/.test(q.metric) ? q.metric : 'lcp';
  var dates = from.replace(/-/g, '') + '-' + to.replace(/-/g, '');
  return get('/' + w.id + '/field-testing/' + dim + '?timing=' + encodeURIComponent(metric) + '&date=' + dates).then(function (r) {
    var items = r.result.list, keys = Object.keys(items).sort(function (a, b) { return items[b].count - items[a].count; });
    var here = function (o) { return withQuery('#/w/' + w.id + '/rum', Object.assign({}, q, { by: dim, metric: metric, from: from, to: to }, o)); };
    var m = el('input', { id: 'rum-metric', name: 'metric', value: metric, list: 'rum-metrics', size: '16' });
    var fromInput = el('input', { id: 'rum-from', type: 'date', name: 'from', value: from, max: to, required: true });
    var toInput = el('input', { id: 'rum-to', type: 'date', name: 'to', value: to, required: true });
    var form = el('form', { class: 'row', 'aria-label': 'Report per page or country', onsubmit: function (e) { e.preventDefault(); go(here({ metric: m.value.trim(), from: fromInput.value, to: toInput.value })); } },
      segmented('Per', ['pages', 'countries'], dim, function (d) { go(here({ by: d })); }),
      el('label', { for: 'rum-metric' }, 'Timing metric or custom variable', m),
      el('datalist', { id: 'rum-metrics' }, RUM_METRICS.map(function (x) { return el('option', { value: x }); })),
      el('label', { for: 'rum-from' }, 'From', fromInput),
      el('label', { for: 'rum-to' }, 'To', toInput),
      el('button', { type: 'submit', text: 'Show' }));
    var unit = metric === 'cls' ? '' : /size/.test(metric) ? 'B' : /elements/.test(metric) ? '' : METRICS[metric] || /time|^(lcp|fcp|fp|fid|inp|ttfb)$/.test(metric) ? 'ms' : '';
    var out = [el('h2', { text: 'Per page and country' }), form];
    if (!keys.length) out.push(empty('No page view in this range: add the snippet below to your pages.'));
    else {
      var top = keys.slice(0, 20);
      out.push(el('div', { class: 'charts' }, chart({ title: 'p75 ' + metricLabel(metric) + ' per ' + (dim === 'pages' ? 'page' : 'country') + ' (top ' + top.length + ' by views)', categories: top, categoryLabel: dim === 'pages' ? 'Page' : 'Country', bars: true,
        series: [{ label: 'p75 ' + metricLabel(metric), values: top.map(function (k) { return items[k][metric]; }), unit: unit }] })));
      out.push(el('div', { id: 'rum-table' }, table([
        { label: dim === 'pages' ? 'Page' : 'Country', value: function (k) { return k; }, cell: function (k) { return k; } },
        { label: 'Page views', n: true, value: function (k) { return items[k].count; }, cell: function (k) { return fmt(items[k].count, 'score'); } },
        { label: 'Share', n: true, value: function (k) { return items[k].percent; }, cell: function (k) { return fmtPct(items[k].percent); } },
        { label: 'p75 ' + metricLabel(metric), n: true, value: function (k) { return items[k][metric]; }, cell: function (k) { return metricCell(metric, items[k][metric]); } }
      ], keys, r.result.count + ' page views in all')));
    }
    return out;
  }, function (err) { return [el('h2', { text: 'Per page and country' }), problemBox(err)]; });
}
