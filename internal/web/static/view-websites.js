// openvitals dashboard: the websites and one website: its pages, budgets and opportunities.
import { el, empty, statusBadge } from './dom.js';
import { api, get, list } from './api.js';
import { day, fmt } from './format.js';
import { categoryLabel, fmtMetric, LAB_COLUMNS, metricName, METRICS, rating } from './metrics.js';
import { metricCell, table } from './table.js';
import { sparkline } from './chart.js';
import { busy, field, segmented } from './forms.js';
import { withQuery } from './routes.js';
import { currentSite, go, isAdmin, link, load } from './app.js';
import { incidentLink, incidentsOf, openIncidents } from './view-events.js';
import { rankedOpportunities, savingsText } from './view-opportunities.js';
import { auditNowButton } from './view-page.js';

// ---- websites ---------------------------------------------------------------------------
export function websitesView() {
  return load([list('/websites')]).then(function (r) {
    var ws = r[0];
    var out = [el('h1', { text: 'Websites' })];
    if (isAdmin()) out.push(addWebsiteForm());
    if (!ws.length) {
      out.push(empty(isAdmin() ? 'No website yet: add one above, then its pages.' : 'No website yet: an admin key can add one.'));
      return out;
    }
    var cards = el('div', { class: 'cards' });
    out.push(cards);
    return Promise.all(ws.map(function (w) {
      return Promise.all([list('/' + w.id + '/pages'), list('/' + w.id + '/budgets'), list('/' + w.id + '/multistep'), openIncidents(w)]).then(function (r) {
        cards.appendChild(websiteCard(w, r[0], r[1], r[2], r[3]));
      }, function (err) { cards.appendChild(el('div', { class: 'card' }, el('h2', null, link('#/w/' + w.id, w.displayName)), el('p', { class: 'error', text: err.message }))); });
    })).then(function () { return out; });
  });
}
// scoreTrend averages the performance score of every page and device per day (the pages
// list's last 30 days).
export function scoreTrend(rows) {
  var byDay = {};
  rows.forEach(function (r) {
    (r.timeline || []).forEach(function (t) {
      if (typeof t.performance_score !== 'number') return;
      var d = byDay[t.date] || (byDay[t.date] = [0, 0]);
      d[0] += t.performance_score; d[1]++;
    });
  });
  var days = Object.keys(byDay).sort();
  return { days: days, values: days.map(function (d) { return Math.round(byDay[d][0] / byDay[d][1]); }) };
}
export function websiteCard(w, rows, budgets, tests, incidents) {
  var pages = {};
  rows.forEach(function (r) { pages[r.id] = true; });
  var exceeded = budgets.filter(function (b) { return b.status === 'exceeded'; }).length;
  var atRisk = budgets.filter(function (b) { return b.status === 'at-risk'; }).length;
  var states = {};
  tests.forEach(function (t) { states[t.state] = (states[t.state] || 0) + 1; });
  var trend = scoreTrend(rows);
  var last = trend.values[trend.values.length - 1];
  return el('section', { class: 'card', 'aria-labelledby': 'site-' + w.id },
    el('h2', { id: 'site-' + w.id }, link('#/w/' + w.id, w.displayName)),
    el('div', { class: 'muted', text: w.domain }),
    el('div', { class: 'muted method', text: 'Measured with ' + (w.method || 'simulated') + ' throttling' + (w.method === 'simulated' ? ' (a model of a slow load; a default test profile can switch it)' : '') }),
    el('div', { class: 'stats' },
      el('div', { class: 'stat' }, el('b', { text: String(Object.keys(pages).length) }), el('span', { text: 'pages' })),
      // Open regressions first among the counts: what someone opening the dashboard looks for.
      el('a', { class: 'stat open-incidents', href: '#/w/' + w.id + '/regressions?state=open' }, el('b', { class: incidents.length ? 'bad' : 'good', text: String(incidents.length) }), el('span', { text: incidents.length === 1 ? 'open regression' : 'open regressions' })),
      el('div', { class: 'stat' }, el('b', { class: exceeded ? 'bad' : '', text: String(exceeded) }), el('span', { text: 'budgets exceeded' })),
      el('div', { class: 'stat' }, el('b', { class: atRisk ? 'warn' : '', text: String(atRisk) }), el('span', { text: 'at risk' })),
      el('div', { class: 'stat wide' }, el('b', { class: rating('performance_score', last), text: fmt(last, 'score') }), el('span', { text: 'performance score: mean of every page on both devices, latest day' }))),
    el('div', null, 'Mean performance score, 30 days ', sparkline(trend.values, 'Mean performance score of every page and device by day: ' + trend.values.join(', ') || 'none')),
    el('div', { class: 'muted' }, tests.length ? 'Multistep: ' + Object.keys(states).map(function (s) { return states[s] + ' ' + s; }).join(', ') : 'No multistep test'));
}
export function addWebsiteForm() {
  var domain = el('input', { name: 'domain', required: true, placeholder: 'example.com' });
  var name = el('input', { name: 'displayName', placeholder: 'Example' });
  var button = el('button', { type: 'submit', text: 'Add website' });
  return el('form', { class: 'row', 'aria-label': 'Add a website', onsubmit: function (e) {
    e.preventDefault();
    var body = { domain: domain.value.trim() };
    if (name.value.trim()) body.displayName = name.value.trim();
    busy(button, function () { return api('POST', '/account/websites', body); }, 'Website added.').then(function (w) { go('#/w/' + w.id + '/settings'); });
  } }, field('Domain', domain), field('Display name', name), button);
}

// ---- website ----------------------------------------------------------------------------
export function websiteView(w, q) {
  var device = q.device === 'desktop' ? 'desktop' : 'mobile';
  return load([list('/' + w.id + '/pages'), list('/' + w.id + '/budgets'), get('/' + w.id + '/opportunities'),
    get('/' + w.id + '/field-testing/pages?timing=lcp+inp+cls').then(function (x) { return x.result.list; }, function () { return {}; }),
    openIncidents(w)]).then(function (r) {
    var rows = r[0].filter(function (x) { return x.device === device; }), budgets = r[1], opps = r[2].result.list;
    rows.forEach(function (x) { x.rum = r[3][pathKey(x.url)]; x.incidents = incidentsOf(r[4], x.id, device); });
    var out = [el('h1', { text: w.displayName }), el('p', { class: 'sub', text: w.domain })];
    var actions = el('div', { class: 'row' }, segmented('Device', ['mobile', 'desktop'], device, function (d) { go(withQuery('#/w/' + w.id, { device: d })); }));
    if (isAdmin() && r[0].length) {
      actions.appendChild(auditNowButton(w));
    }
    out.push(actions);
    out.push(el('h2', { text: 'Pages (' + device + ')' }));
    var other = r[4].filter(function (x) { return x.page && x.devices.indexOf(device) < 0; });
    if (other.length) {
      var otherDevice = device === 'mobile' ? 'desktop' : 'mobile';
      out.push(el('p', { class: 'note-bad', id: 'other-device-incidents' }, other.length + (other.length === 1 ? ' open regression' : ' open regressions') + ' on ' + otherDevice + ' only: ',
        link(withQuery('#/w/' + w.id, { device: otherDevice }), 'show ' + otherDevice)));
    }
    if (rows.length) out.push(el('p', { class: 'muted', id: 'pages-what', text: 'Lab: the mean of the last 3 days with an audit (each day the median Lighthouse run), trend: performance score over 30 days. Field: Chrome UX Report p75 over 28 days. Real users: p75 of the last 30 days, every device.' }));
    if (!rows.length) {
      out.push(empty('No page yet: add the pages to monitor in ' + (isAdmin() ? 'Settings.' : 'Setup.'), link('#/w/' + w.id + '/settings', 'Add pages')));
    } else if (!rows.some(function (x) { return x.latest; })) {
      out.push(empty('No audit yet: ' + (isAdmin() ? 'run one now with "Audit now", or wait for the daily audits.' : 'the daily audits will fill this in.')));
    }
    if (rows.length) out.push(pagesTable(w, rows, device));
    out.push(el('h2', { text: 'Budgets' }));
    out.push(budgets.length ? budgetsTable(budgets) : empty('No budget: ' + (isAdmin() ? 'set one in Settings.' : 'an admin key can set one.')));
    out.push(el('h2', { text: 'Opportunities across the website' }));
    var ids = rankedOpportunities(opps);
    out.push(ids.length ? el('div', { id: 'site-opps' }, table([
      { label: 'Rank', n: true, value: function (id) { return opps[id].rank; }, cell: function (id) { return String(opps[id].rank || ''); } },
      { label: 'Opportunity', value: function (id) { return opps[id].title; }, cell: function (id) { return opps[id].title; } },
      { label: 'Category', value: function (id) { return opps[id].category; }, cell: function (id) { return opps[id].categoryTitle || categoryLabel(opps[id].category); } },
      { label: 'Savings, all pages', value: function (id) { return opps[id].impact; }, cell: function (id) { return savingsText(opps[id]).replace(/^Est\. savings /, ''); } },
      { label: 'Pages', n: true, value: function (id) { return opps[id].pages.length; }, cell: function (id) { return String(opps[id].pages.length); } },
      { label: 'First seen', value: function (id) { return opps[id].startDate; }, cell: function (id) { return day(opps[id].startDate); } },
      { label: 'Where', cell: function (id) { return opps[id].pages.slice(0, 4).map(function (p, i) { return [i ? ', ' : '', link('#/w/' + w.id + '/page/' + p.id + '?device=' + p.device, (p.alias || p.url) + ' (' + p.device + ')')]; }); } }
    ], ids, null, { stack: true })) : empty('No opportunity reported.'));
    return out;
  });
}
// pathKey is a page's key in the real-user reports per page: its path, lower-cased, without
// query or trailing slash.
export function pathKey(url) { var p = String(url).split(/[?#]/)[0].toLowerCase().replace(/\/+$/, ''); return p || '/'; }
export function pagesTable(w, rows, device) {
  var hasUX = rows.some(function (r) { return r.latest && typeof r.latest.ux_lcp === 'number'; });
  var hasSearch = rows.some(function (r) { return r.latest && typeof r.latest.clicks === 'number'; });
  var hasRUM = rows.some(function (r) { return r.rum; });
  var cols = [
    { label: 'Page', value: function (r) { return (r.alias || r.url).toLowerCase(); }, csv: function (r) { return r.url; }, cell: function (r) {
      return el('td', null, link('#/w/' + w.id + '/page/' + r.id + '?device=' + device, r.alias || r.url), el('div', { class: 'muted', text: r.url }),
        r.incidents.map(function (x) { return el('div', null, incidentLink(w, x, device)); }));
    } },
    { label: 'Open regressions', n: true, hidden: true, value: function (r) { return r.incidents.length; }, cell: function (r) { return String(r.incidents.length); } },
    { label: 'Trend', csv: function (r) { return r.timeline.map(function (t) { return t.performance_score === null || t.performance_score === undefined ? '' : t.performance_score; }).join(' '); }, cell: function (r) { return sparkline(r.timeline.map(function (t) { return t.performance_score; }), 'Performance score by day for ' + (r.alias || r.url)); } }
  ];
  // The table fits 1,280 px: the lab metrics read less often start hidden ("Columns" shows them).
  var spare = { fcp: true, ttfb: true, speed_index: true, kb_total: true };
  LAB_COLUMNS.forEach(function (m) {
    cols.push({ label: METRICS[m].label, n: true, unit: unitOf(m), hidden: spare[m], value: function (r) { return r.latest ? r.latest[m] : null; }, cell: function (r) { return metricCell(m, r.latest ? r.latest[m] : null); } });
  });
  cols.push({ label: 'Budgets', n: true, value: function (r) { return r.latest ? r.latest.budgets_exceeded * 100 + r.latest.budgets_at_risk : null; },
    csv: function (r) { return r.latest ? r.latest.budgets_exceeded + ' exceeded, ' + r.latest.budgets_at_risk + ' at risk' : ''; }, cell: function (r) {
    if (!r.latest) return el('td', { class: 'n', text: '–' });
    return el('td', { class: 'n' }, r.latest.budgets_exceeded ? el('span', { class: 'bad', text: r.latest.budgets_exceeded + ' exceeded ' }) : null,
      r.latest.budgets_at_risk ? el('span', { class: 'warn', text: r.latest.budgets_at_risk + ' at risk' }) : null,
      !r.latest.budgets_exceeded && !r.latest.budgets_at_risk ? 'ok' : null);
  } });
  if (hasUX) {
    ['ux_lcp', 'ux_inp', 'ux_cls'].forEach(function (m) {
      cols.push({ label: METRICS[m].label, n: true, unit: unitOf(m), value: function (r) { return r.latest ? r.latest[m] : null; }, cell: function (r) { return metricCell(m, r.latest ? r.latest[m] : null); } });
    });
    cols.push({ label: 'Field vitals', value: function (r) { return r.latest ? r.latest.ux_passed : null; }, cell: function (r) {
      var p = r.latest ? r.latest.ux_passed : null;
      return p === null || p === undefined ? '–' : statusBadge(p ? 'passed' : 'failed');
    } });
  }
  if (hasRUM) {
    // Real users of the page's path, every device (the page view splits them).
    [['lcp', 'Real users LCP'], ['inp', 'Real users INP'], ['cls', 'Real users CLS']].forEach(function (c) {
      cols.push({ label: c[1], n: true, unit: unitOf(c[0]), hidden: hasUX, value: function (r) { return r.rum ? r.rum[c[0]] : null; }, cell: function (r) { return metricCell(c[0], r.rum ? r.rum[c[0]] : null); } });
    });
  }
  if (hasSearch) {
    [['clicks', 'Clicks'], ['impressions', 'Impressions'], ['CTR', 'CTR %'], ['position', 'Position']].forEach(function (c) {
      cols.push({ label: c[1], n: true, hidden: true, value: function (r) { return r.latest ? r.latest[c[0]] : null; }, cell: function (r) { return fmt(r.latest ? r.latest[c[0]] : null, c[0] === 'CTR' ? '' : 'score'); } });
    });
  }
  return el('div', { id: 'pages-table' }, table(cols, rows, null, { name: 'pages-' + device, stack: true }));
}
// unitOf is a metric's unit for a CSV header: none for scores and unitless numbers.
function unitOf(m) { var u = METRICS[m] ? METRICS[m].unit : ''; return u === 'score' ? '' : u; }
// budgetValue is a budget's threshold with the metric's unit.
function budgetValue(b) { return fmtMetric(b.metric, b.value); }
export function budgetsTable(budgets) {
  return table([
    { label: 'Metric', value: function (b) { return b.metric; }, cell: function (b) { return metricName(b.metric); } },
    { label: 'Rule', cell: function (b) { return (b.operator === 'lt' ? 'below ' : 'above ') + budgetValue(b) + (METRICS[b.metric] && METRICS[b.metric].unit === 'score' ? ' (score)' : ''); } },
    { label: 'Device', value: function (b) { return b.device; }, cell: function (b) { return b.device; } },
    { label: 'Status', value: function (b) { return b.status; }, cell: function (b) { return statusBadge(b.status); } },
    { label: 'Pages off it', cell: function (b) {
      return b.pages.length ? b.pages.map(function (p, i) { return [i ? ', ' : '', link('#/w/' + currentSite().id + '/page/' + p.id + '?device=' + p.device, (p.alias || p.id) + ' (' + p.device + ', ' + p.status + ')')]; }) : 'none';
    } }
  ], budgets, null, { stack: true });
}
