// openvitals dashboard: one page on one device: its lab and field values over time, its audits and report.
import { clear, el, empty, say } from './dom.js';
import { api, get, list } from './api.js';
import { day, fmtPct, range, unix, when, ymd } from './format.js';
import { fmtMetric, LAB_COLUMNS, metricLabel, metricName, METRICS, rating } from './metrics.js';
import { metricCell, table } from './table.js';
import { chart } from './chart.js';
import { busy, segmented, select } from './forms.js';
import { withQuery } from './routes.js';
import { go, isAdmin, link, load, painted, parts } from './app.js';
import { comparePicker } from './view-compare.js';
import { diagnosticsPanel } from './view-diagnostics.js';
import { incidentLink, incidentsOf, openIncidents, regressionList } from './view-events.js';
import { auditDetails, rankedOpportunities, savingsText } from './view-opportunities.js';
import { ratingBar, rumPanel, segQuery } from './view-rum.js';

// ---- page -------------------------------------------------------------------------------
var RANGES = [[7, 'Last 7 days'], [30, 'Last 30 days'], [90, 'Last 90 days'], [365, 'Last year'], ['custom', 'From … to …']];
var ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
// pageRange is the view's date range: from and to (yyyy-MM-dd) when both are real days in
// order, at most 731 days apart as the API allows, else the last days (30 by default).
function pageRange(q) {
  var f = q.from, t = q.to;
  if (ISO_DAY.test(f || '') && ISO_DAY.test(t || '') && !isNaN(Date.parse(f)) && !isNaN(Date.parse(t)) && f <= t && Date.parse(t) - Date.parse(f) <= 731 * 864e5) {
    return { dr: f.replace(/-/g, '') + '-' + t.replace(/-/g, ''), custom: true, days: 0 };
  }
  var days = [7, 30, 90, 365].indexOf(Number(q.days)) >= 0 ? Number(q.days) : 30;
  return { dr: range(days), custom: false, days: days };
}
// pageView: without a device asked for, the page opens on the device of its open regression
// (mobile when both or neither have one), so that the change is what is seen first.
export function pageView(w, pageID, q) {
  var incidents = openIncidents(w).then(function (all) { return incidentsOf(all, pageID); });
  if (q.device !== 'desktop' && q.device !== 'mobile') {
    return incidents.then(function (xs) {
      var on = function (d) { return xs.some(function (x) { return x.devices.indexOf(d) >= 0; }); };
      return devicePageView(w, pageID, Object.assign({}, q, { device: on('desktop') && !on('mobile') ? 'desktop' : 'mobile' }), incidents);
    });
  }
  return devicePageView(w, pageID, q, incidents);
}
function devicePageView(w, pageID, q, incidents) {
  var device = q.device === 'desktop' ? 'desktop' : 'mobile';
  var pr = pageRange(q);
  var days = pr.days, dr = pr.dr, from = dr.slice(0, 8), to = dr.slice(9);
  var base = '/' + w.id + '/pages/' + pageID;
  return load([get(base + '?device=' + device), incidents]).then(function (r) {
    // The top of the view draws when the page's own record is in. The requests of the parts
    // below it start once it is on the screen, all at once; each part draws when its answers
    // are in and those above it are drawn.
    var drawn = painted();
    var timeline = drawn.then(function () {
      return Promise.all([
        get(base + '/timeline?device=' + device + '&date=' + dr),
        get(base + '/network?device=' + device + '&date=' + dr),
        list('/' + w.id + '/annotations?limit=100').catch(function () { return []; }),
        list('/' + w.id + '/pages').catch(function () { return []; })
      ]);
    });
    var rumDist = drawn.then(function () {
      return Promise.all(['lcp', 'inp', 'cls', 'fcp', 'ttfb'].map(function (m) {
        // The page's real users on this device class, for the field table.
        return get('/' + w.id + '/field-testing/distribution' + segQuery({ vital: m, from: isoOf(from), to: isoOf(to), page: pageID, filters: { device: rumDevices(device) } }))
          .then(function (x) { return x.result.views ? x.result : null; }, function () { return null; });
      }));
    });
    var opportunities = drawn.then(function () {
      return Promise.all([
        get(base + '/opportunities?device=' + device).catch(function () { return { result: { list: {} } }; }),
        get('/' + w.id + '/opportunities')
      ]);
    });
    var uxHistory = drawn.then(function () {
      return Promise.all([get(base + '/ux-history?device=' + device).catch(function () { return { result: { page: { periods: [] }, origin: { periods: [] } } }; }),
        timeline.then(function (t) { return t[3]; })]);
    });
    var regressions = drawn.then(function () { return list('/' + w.id + '/regressions?page=' + pageID + '&device=' + device).catch(function () { return []; }); });
    var detail = r[0], lm = detail.latestMetrics, next = parts();
    var here = function (hash) { return withQuery('#/w/' + w.id + '/page/' + pageID, hash); };
    var out = [
      el('p', null, link('#/w/' + w.id + '?device=' + device, '← ' + w.displayName)),
      el('h1', { text: detail.alias || detail.url }),
      el('p', { class: 'sub' }, detail.url + ' · ' + device + (detail.profile ? ' · measured with the test profile ' + detail.profile.name : '')),
      detail.measurement && el('p', { class: 'sub', id: 'measurement', text: detail.measurement.summary + '.' }),
      openRegressions(w, pageID, device, r[1], q)
    ];
    // The range: a preset, or any days from and to (kept in the link, so that it can be shared).
    var rq = pr.custom ? { from: isoOf(from), to: isoOf(to) } : { days: String(days) };
    var rangeSelect = select('days', RANGES.map(function (x) { return [String(x[0]), x[1]]; }), pr.custom ? 'custom' : String(days));
    rangeSelect.id = 'range';
    var fromInput = el('input', { type: 'date', id: 'range-from', value: isoOf(from), max: isoOf(ymd(new Date())) });
    var toInput = el('input', { type: 'date', id: 'range-to', value: isoOf(to), max: isoOf(ymd(new Date())) });
    var rangeError = el('span', { id: 'range-error', class: 'error', role: 'alert' });
    var custom = el('form', { class: 'row daterange', 'aria-label': 'Date range', hidden: !pr.custom, onsubmit: function (e) {
      e.preventDefault();
      var f = fromInput.value, t = toInput.value;
      var bad = !f || !t ? 'Give both days.' : f > t ? 'The range ends before it starts.' : Date.parse(t) - Date.parse(f) > 731 * 864e5 ? 'At most 731 days.' : '';
      rangeError.textContent = bad;
      fromInput.setAttribute('aria-invalid', bad ? 'true' : 'false');
      if (!bad) go(here(Object.assign({ device: device, from: f, to: t }, q.rum ? { rum: q.rum } : {})));
    } }, el('label', { class: 'inline', for: 'range-from' }, 'From', fromInput), el('label', { class: 'inline', for: 'range-to' }, 'to', toInput),
      el('button', { type: 'submit', text: 'Show' }), rangeError);
    rangeSelect.addEventListener('change', function () {
      if (rangeSelect.value === 'custom') { custom.hidden = false; fromInput.focus(); return; }
      go(here({ device: device, days: rangeSelect.value }));
    });
    out.push(el('div', { class: 'row' },
      segmented('Device', ['mobile', 'desktop'], device, function (d) { go(here(Object.assign({ device: d }, rq))); }),
      el('label', { class: 'inline', for: 'range' }, 'Range', rangeSelect), custom));
    if (detail.lastError) {
      out.push(el('p', { class: 'error', role: 'note' }, 'Last error (' + when(detail.lastError.at || detail.lastError.date) + '): ' + (detail.lastError.message || detail.lastError.error || JSON.stringify(detail.lastError))));
    }
    if (lm) {
      out.push(el('h2', { text: 'Latest' }));
      out.push(el('p', { class: 'muted', id: 'latest-what', text: 'Lab (Lighthouse) on ' + device + ': the mean of each metric over the last 3 days with an audit, each day being the median of its runs.' }));
      out.push(el('div', { class: 'stats' }, LAB_COLUMNS.concat(['accessibility_score', 'best_practices_score', 'seo_score', 'validation_errors']).map(function (m) {
        return el('div', { class: 'stat' }, el('b', { class: rating(m, lm[m]), text: fmtMetric(m, lm[m]) }), el('span', { text: metricLabel(m), title: METRICS[m] ? METRICS[m].title : null }));
      })));
    }
    out.push(next(rumDist.then(function (d) { return fieldAgainstLab(detail, d); })));
    out.push(next(uxHistory.then(function (h) { return fieldHistory(h[0].result, h[1], pageID, device); })));
    out.push(next(timeline.then(function (t) {
      return timelines(w, pageID, detail, t[0].result, t[1].result, t[2], t[3], device, from, to);
    })));
    var rumVital = ['lcp', 'inp', 'cls'].indexOf(q.rum) >= 0 ? q.rum : 'lcp';
    out.push(next(drawn.then(function () { return rumPanel(w, { vital: rumVital, from: isoOf(from), to: isoOf(to), page: pageID, filters: { device: rumDevices(device) } }); }).then(function (panel) {
      return [el('h2', { text: 'Real users' }), el('div', { class: 'row' },
        segmented('Real-user metric', ['lcp', 'inp', 'cls'].map(function (m) { return [m, metricLabel(m)]; }), rumVital, function (v) { go(here(Object.assign({ device: device, rum: v }, rq))); }),
        el('span', { class: 'muted', text: 'This page\'s views on ' + (device === 'mobile' ? 'phones and tablets' : 'desktops') + ', from the snippet; the page\'s query parameters must match.' })),
        el('div', { id: 'page-rum' }, panel)];
    })));
    out.push(next(opportunities.then(function (o) { return opportunityList(base, device, o[0].result.list, o[1].result.list, lm); })));
    out.push(next(regressions.then(function (regs) {
      var names = {};
      names[pageID] = detail.alias || detail.url;
      return [el('h2', { text: 'Regressions' }), regs.length ? regressionList(w, regs, names) : empty('No regression or improvement detected on this page and device.')];
    })));
    out.push(next(drawn.then(function () { return diagnosticsPanel(w, pageID, device); })));
    out.push(next(timeline.then(function (t) {
      var dates = t[0].result.map(function (x) { return x.date; });
      return [el('h2', { text: 'Compare two audits' }), comparePicker(w, pageID, device, dates),
        el('h2', { text: 'Lighthouse report' }), reportPicker(w, pageID, device, dates)];
    })));
    return out;
  });
}

// openRegressions names the page's open regressions on either device at the top of its view,
// each linking to its incident, and to this page on the other device for that device's.
function openRegressions(w, pageID, device, xs, q) {
  if (!xs.length) return null;
  return el('div', { class: 'note-bad', id: 'page-incidents', role: 'note' }, el('b', { text: xs.length === 1 ? 'An open regression of this page' : xs.length + ' open regressions of this page' }),
    el('ul', null, xs.map(function (x) {
      var here = x.devices.indexOf(device) >= 0;
      var others = x.devices.filter(function (d) { return d !== device; });
      return el('li', null, incidentLink(w, x), here ? null : [' ', link(withQuery('#/w/' + w.id + '/page/' + pageID, Object.assign({}, q, { device: others[0] })), 'show ' + others[0])]);
    })));
}

// fieldHistory charts the Chrome UX Report's weekly history of the page and of its origin
// (40 collection periods of 28 days, a week apart, fetched when the page was added) with the
// daily records of the last 30 days beside them.
function fieldHistory(h, pages, pageID, device) {
  var row = pages.filter(function (x) { return x.id === pageID && x.device === device; })[0];
  var daily = {};
  (row ? row.timeline : []).forEach(function (t) { daily[t.date] = t; });
  var byDate = {};
  h.page.periods.forEach(function (p) { byDate[p.date] = byDate[p.date] || {}; byDate[p.date].page = p; });
  h.origin.periods.forEach(function (p) { byDate[p.date] = byDate[p.date] || {}; byDate[p.date].origin = p; });
  Object.keys(daily).forEach(function (d) { if (daily[d].ux_lcp != null || daily[d].ux_inp != null || daily[d].ux_cls != null) { byDate[d] = byDate[d] || {}; byDate[d].daily = daily[d]; } });
  var dates = Object.keys(byDate).sort();
  var out = [el('h2', { text: 'Field history: 40 weeks' })];
  if (!h.page.periods.length && !h.origin.periods.length) {
    out.push(empty(h.page.fetchedAt ? 'The Chrome UX Report has no history for this page or its origin on ' + device + '.' : 'The Chrome UX Report\'s history of this page is fetched when it is added and weekly after: not yet.'));
    return out;
  }
  out.push(el('p', { class: 'muted', text: h.page.periods.length + ' weekly collection periods of this page and ' + h.origin.periods.length + ' of its origin (each the 75th percentile of Chrome users over 28 days, dated by its last day), with the daily records of the last 30 days.' }));
  var col = function (who, m) { return dates.map(function (d) { var x = byDate[d][who]; return x && typeof x[m] === 'number' ? x[m] : null; }); };
  var c = function (title, m) {
    var unit = METRICS[m.slice(3)] ? METRICS[m.slice(3)].unit : '';
    return chart({ title: title, x: dates, spanGaps: true, series: [
      { label: 'This page, weekly', values: col('page', m), unit: unit },
      { label: 'Origin, weekly', values: col('origin', m), unit: unit, dash: true },
      { label: 'This page, daily', values: col('daily', m), unit: unit }] });
  };
  out.push(el('div', { class: 'charts', id: 'field-history' },
    c('Largest Contentful Paint p75 (ms)', 'ux_lcp'),
    c('Interaction to Next Paint p75 (ms)', 'ux_inp'),
    c('Cumulative Layout Shift p75', 'ux_cls')));
  return out;
}

// fieldAgainstLab is the table of the page's field values from both sources, each named: the
// Chrome UX Report (Google's sample of Chrome users, p75 of 28 days) and this website's own
// real users (the snippet), beside the lab's.
function fieldAgainstLab(detail, dist) {
  var ux = detail.latestUx || {}, lm = detail.latestMetrics, rumDist = {};
  ['lcp', 'inp', 'cls', 'fcp', 'ttfb'].forEach(function (m, i) { if (dist[i]) rumDist[m] = dist[i]; });
  var fieldMetrics = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'].filter(function (m) { return ux[m] || rumDist[m]; });
  if (!fieldMetrics.length) return [];
  return [el('h3', { text: 'Field against lab' }), el('div', { id: 'field-vs-lab' }, table([
    { label: 'Metric', cell: function (m) { return metricName(m); } },
    { label: 'Chrome UX Report p75', n: true, cell: function (m) { return ux[m] ? metricCell(m, ux[m].value) : el('td', { class: 'n', text: '–' }); } },
    { label: 'Chrome UX Report good / NI / poor', cell: function (m) { return ux[m] ? [ux[m].green, ux[m].yellow, ux[m].red].map(function (p) { return fmtPct(p); }).join(' / ') : '–'; } },
    { label: 'Real users p75', n: true, cell: function (m) { return rumDist[m] ? metricCell(m, rumDist[m].value) : el('td', { class: 'n', text: '–' }); } },
    { label: 'Real users good / NI / poor', cell: function (m) { return rumDist[m] ? ratingBar(rumDist[m]) : '–'; } },
    { label: 'Lab, 3-day mean', n: true, cell: function (m) { return metricCell(m, lm ? lm[m] : null); } }
  ], fieldMetrics, detail.latestUx ? 'Chrome UX Report core vitals assessment: ' + (ux.passed ? 'passed' : 'failed') : 'No Chrome UX Report data for this page', { stack: true }))];
}

// timelines are the page's charts over the range (from and to, yyyyMMdd): each day's lab
// values, the Chrome UX Report's beside them, the document's request and the bytes by type,
// with the website's annotations of the range marked.
function timelines(w, pageID, detail, tl, net, annotations, pages, device, from, to) {
  var out = [];
  if (!detail.latestMetrics && !tl.length) {
    out.push(empty('No audit yet' + (isAdmin() ? ': run one now.' : '.'), isAdmin() ? auditNowButton(w) : null));
  }
  var notes = annotations.filter(function (a) { var d = ymd(new Date(a.at)); return d >= from && d <= to && (!a.pages.length || a.pages.indexOf(pageID) >= 0); });
  var row = pages.filter(function (x) { return x.id === pageID && x.device === device; })[0];
  var uxByDay = {};
  if (row) row.timeline.forEach(function (t) { uxByDay[t.date] = t; });
  var dates = tl.map(function (t) { return t.date; });
  var col = function (m) { return tl.map(function (t) { return t[m]; }); };
  var uxCol = function (m) { return dates.map(function (d) { return uxByDay[d] ? uxByDay[d][m] : null; }); };
  var xr = [unix(isoOf(from)) - 43200, unix(isoOf(to)) + 43200];
  // Annotations are numbered once here; each chart marks them by number.
  notes.forEach(function (a, i) { a.n = i + 1; });
  // One metric per chart where scales differ, its field value beside it: each axis from 0.
  var common = { x: dates, xRange: xr, annotations: notes, sync: 'page' };
  var c = function (spec) { return chart(Object.assign({}, common, spec)); };
  var lab = function (m) { return { label: METRICS[m].label + ' (lab)', values: col(m), unit: METRICS[m].unit }; };
  var crux = function (m) { return { label: METRICS[m].label + ' p75 (Chrome UX Report)', values: uxCol(m), unit: METRICS[m].unit, dash: true }; };
  out.push(el('h2', { text: 'Timelines' }));
  out.push(el('p', { class: 'muted', text: 'Lab values are each day\'s median Lighthouse run; Chrome UX Report values (dashed) are the 75th percentile of Chrome users over 28 days, known for the last 30 days. Hover or tap a chart for a day\'s values in every chart; drag across one to zoom, double-click to zoom out.' }));
  if (notes.length) {
    out.push(el('h3', { text: 'Annotations' }), el('ol', { class: 'notes-list', id: 'annotations' }, notes.map(function (a) { return el('li', { text: day(a.at) + ': ' + a.text }); })));
  }
  out.push(el('div', { class: 'charts' },
    c({ title: 'Lighthouse scores (0–100)', yMax: 100, series: ['performance_score', 'accessibility_score', 'best_practices_score', 'seo_score'].map(function (m) {
      return { label: METRICS[m].label, values: col(m), unit: 'score' }; }) }),
    c({ title: 'Largest Contentful Paint (ms)', series: [lab('lcp'), crux('ux_lcp')] }),
    c({ title: 'First Contentful Paint (ms)', series: [lab('fcp'), crux('ux_fcp')] }),
    c({ title: 'Speed Index (ms)', series: [lab('speed_index')] }),
    c({ title: 'Time To First Byte (ms): the whole request', series: [lab('ttfb'), crux('ux_ttfb')] }),
    c({ title: 'Total Blocking Time (lab) and Interaction to Next Paint (field) (ms)', series: [lab('tbt'), crux('ux_inp')] }),
    c({ title: 'Time To Interactive (ms)', series: [lab('tti')] }),
    c({ title: 'Cumulative Layout Shift (unitless)', yTop: METRICS.cls.poor, series: [lab('cls'), crux('ux_cls')] }),
    c({ title: 'The document\'s request, observed (ms, stacked)', stacked: true, series: [
      { label: 'DNS', values: col('dns_time'), unit: 'ms' },
      { label: 'Connect', values: col('connect_time'), unit: 'ms' },
      { label: 'Server wait', values: col('server_time'), unit: 'ms' },
      { label: 'Download', values: col('transfer_time'), unit: 'ms' },
      { label: 'DOM ready', values: col('dom_ready'), unit: 'ms' }] }),
    c({ title: 'Transfer by type (stacked)', x: net.map(function (n) { return n.date; }), stacked: true,
      series: [['bytes_doc', 'Document'], ['bytes_js', 'JavaScript'], ['bytes_css', 'CSS'], ['bytes_image', 'Images'], ['bytes_font', 'Fonts'], ['bytes_media', 'Media'], ['bytes_other', 'Other']].map(function (b) {
        return { label: b[1], values: net.map(function (n) { return n[b[0]]; }), unit: 'B' };
      }) })));
  out.push(el('p', { class: 'muted', text: 'Lab TTFB is Lighthouse\'s time to the first byte of the document, connection included; the server wait, observed in the same load without throttling, starts once the request is sent: the two differ by DNS and connection time and by the simulated throttling.' }));
  return out;
}

// opportunityList is the latest audit's opportunities (opps), ranked, each with the day the
// website first saw it (siteOpps) and its details fetched when opened.
function opportunityList(base, device, opps, siteOpps, lm) {
  var ids = rankedOpportunities(opps);
  return [el('h2', { text: 'Opportunities' }), ids.length ? el('ul', { class: 'opps' }, ids.map(function (id) {
    var o = opps[id], holder = el('div');
    var first = siteOpps[id] ? day(siteOpps[id].startDate) : '';
    var d = el('details', { ontoggle: function () {
      if (!d.open || holder.firstChild) return;
      holder.appendChild(el('p', { class: 'muted', text: 'Loading…' }));
      get(base + '/opportunities/' + encodeURIComponent(id) + '?device=' + device).then(function (a) {
        clear(holder).appendChild(auditDetails(a));
      }, function (err) { clear(holder).appendChild(el('p', { class: 'error', text: err.message })); });
    } }, el('summary', null, o.title, o.displayValue ? ' — ' + o.displayValue : '', savingsText(o) ? el('span', { class: 'savings', text: ' ' + savingsText(o) }) : '',
      el('span', { class: 'muted', text: ' (' + (o.categoryTitle || o.category) + (first ? ', first seen ' + first : '') + ')' })), holder);
    return el('li', null, d);
  })) : empty(lm ? 'No opportunity in the latest audit.' : 'Opportunities appear after the first audit.')];
}
export function isoOf(ymdString) { return ymdString.slice(0, 4) + '-' + ymdString.slice(4, 6) + '-' + ymdString.slice(6, 8); }
// rumDevices are the real users' device classes of a lab device.
export function rumDevices(device) { return device === 'mobile' ? 'mobile,tablet' : 'desktop'; }
export function auditNowButton(w) {
  var b = el('button', { type: 'button', id: 'audit-now', text: 'Audit now' });
  b.addEventListener('click', function () { busy(b, function () { return api('POST', '/' + w.id + '/audits'); }).then(function (a) { say(a.message || 'Audits queued.'); }); });
  return b;
}
// reportPicker shows the full Lighthouse report of a chosen day in a sandboxed frame.
export function reportPicker(w, pageID, device, dates) {
  if (!dates.length) return empty('The report appears after the first audit.');
  var s = select('day', dates.slice().reverse(), dates[dates.length - 1]);
  s.id = 'report-day';
  var holder = el('div');
  var b = el('button', { type: 'button', text: 'Show the report' });
  b.addEventListener('click', function () {
    busy(b, function () {
      return api('POST', '/' + w.id + '/pages/' + pageID + '/report-link?device=' + device + '&date=' + s.value);
    }).then(function (r) {
      clear(holder).appendChild(el('iframe', { class: 'report', title: 'Lighthouse report of ' + s.value + ' (' + device + ')', sandbox: 'allow-scripts allow-popups', src: r.url, referrerpolicy: 'no-referrer' }));
    });
  });
  return el('div', null, el('div', { class: 'row' }, el('label', { class: 'inline', for: 'report-day' }, 'Day', s), b), holder);
}
