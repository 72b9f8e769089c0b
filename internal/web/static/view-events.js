// openvitals dashboard: incidents (regressions and improvements), annotations, the activity
// feed, test series and channels.
import { clear, el, empty, statusBadge } from './dom.js';
import { api, get, list } from './api.js';
import { day, fmt, fmtPct, when } from './format.js';
import { METRICS } from './metrics.js';
import { table } from './table.js';
import { busy, confirmThen, field, select } from './forms.js';
import { withQuery } from './routes.js';
import { go, isAdmin, link, load, render } from './app.js';
import { compareLink } from './view-compare.js';

// openIncidents answers the website's open regressions ([] when they cannot be read: they are
// a signal beside a view, not what it is about).
export function openIncidents(w) { return list('/' + w.id + '/incidents?state=open&kind=regression').catch(function () { return []; }); }
// incidentsOf are the incidents of a page, on device when given.
export function incidentsOf(incidents, pageID, device) {
  return incidents.filter(function (x) { return x.page === pageID && (!device || x.devices.indexOf(device) >= 0); });
}
// incidentLink is a link to an open incident naming its metrics and since when.
export function incidentLink(w, x, device) {
  return el('a', { class: 'badge bad incident-link', href: '#/w/' + w.id + '/regressions?incident=' + encodeURIComponent(x.id),
    text: 'Open regression: ' + x.metrics.map(metricLabel).join(', ') + (device ? '' : ' (' + x.devices.join(', ') + ')') + ' since ' + x.firstBadDay });
}

// ---- regressions and incidents ----------------------------------------------------------
// The sources of regressions, named: field values say whether they are Google's Chrome UX
// Report or this website's own real users.
var SOURCES = { lab: 'lab (Lighthouse)', ux: 'Chrome UX Report', ux_weekly: 'Chrome UX Report, weekly history', rum: 'real users', multistep: 'multistep runs' };
function metricLabel(m) { return METRICS[m] ? METRICS[m].label : m; }
function pct(p) { return fmtPct(p, true); }
// kindBadge shows an improvement as one (it is never "open"), a regression by its state.
function kindBadge(kind, state) {
  if (kind === 'improvement') return el('span', { class: 'badge good', text: 'improvement' });
  if (state === 'resolved') return el('span', { class: 'badge good', text: 'resolved' });
  return statusBadge(state);
}
function subjectLink(w, x, names, device) {
  if (x.page) return link('#/w/' + w.id + '/page/' + x.page + '?device=' + (device || 'mobile'), names[x.page] || x.page);
  if (x.test) return link('#/w/' + w.id + '/multistep/' + x.test, names[x.test] || x.test);
  return 'the website';
}
// regressionList lists single regressions and improvements (a page's); names maps page and
// test ids to what people call them.
export function regressionList(w, regs, names) {
  names = names || {};
  return el('ul', { class: 'regs' }, regs.map(function (g) {
    var what = g.kind === 'improvement' ? 'improved' : 'regressed';
    var li = el('li', null,
      kindBadge(g.kind, g.status === 'recovered' ? 'resolved' : g.status), ' ', el('b', { text: metricLabel(g.metric) + ' ' + what }), ' on ', subjectLink(w, g, names, g.device), g.device ? ' (' + g.device + ')' : '', ': ',
      fmt(g.before.median, g.unit) + ' → ' + fmt(g.after.median, g.unit) + ' (' + pct(g.changePercent) + '), first on ' + g.firstBadDay + ', source: ' + (SOURCES[g.source] || g.source));
    if (g.incident) li.appendChild(el('div', null, link('#/w/' + w.id + '/regressions?incident=' + g.incident, 'Its incident')));
    if (g.comparison) li.appendChild(el('div', null, compareLink(w, g.comparison)));
    return li;
  }));
}
// incidentChart draws the lead regression's daily medians, the first bad day marked and the
// levels before and after dashed; without days (older regressions) the two levels.
function incidentChart(c, kind) {
  var pts = c.points.length ? c.points : [{ day: c.lastGoodDay, value: c.before }, { day: c.firstBadDay, value: c.after }];
  var W = 240, H = 56, vals = pts.map(function (p) { return p.value; }).concat([c.before, c.after]);
  var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals), span = hi - lo || 1;
  var x = function (i) { return pts.length === 1 ? W / 2 : 4 + i * (W - 8) / (pts.length - 1); };
  var y = function (v) { return (H - 4 - (v - lo) * (H - 8) / span).toFixed(1); };
  var first = 0;
  pts.forEach(function (p, i) { if (p.day < c.firstBadDay) first = i + 1; });
  first = Math.min(first, pts.length - 1);
  var split = first > 0 ? (x(first - 1) + x(first)) / 2 : x(0);
  var svg = el('svg:svg', { class: 'incident-chart ' + kind, viewBox: '0 0 ' + W + ' ' + H, role: 'img',
    'aria-label': metricLabel(c.metric) + (c.device ? ' (' + c.device + ')' : '') + ': ' + fmt(c.before, c.unit) + ' before ' + c.firstBadDay + ', ' + fmt(c.after, c.unit) + ' since' });
  svg.appendChild(el('svg:line', { class: 'level', x1: '0', x2: String(split), y1: y(c.before), y2: y(c.before) }));
  svg.appendChild(el('svg:line', { class: 'level', x1: String(split), x2: String(W), y1: y(c.after), y2: y(c.after) }));
  svg.appendChild(el('svg:line', { class: 'mark', x1: String(split), x2: String(split), y1: '0', y2: String(H) }));
  svg.appendChild(el('svg:polyline', { points: pts.map(function (p, i) { return x(i).toFixed(1) + ',' + y(p.value); }).join(' ') }));
  pts.forEach(function (p, i) { svg.appendChild(el('svg:circle', { cx: x(i).toFixed(1), cy: y(p.value), r: '1.8', class: p.day >= c.firstBadDay ? 'after' : 'before' })); });
  return el('figure', { class: 'incident-fig' }, svg, el('figcaption', { class: 'muted', text: metricLabel(c.metric) + (c.device ? ', ' + c.device : '') }));
}
// causeText is what changed in words: its title (which names a phase or an audit) with the
// resource's address and its values before and after; an audit has none to show.
function causeText(c) {
  var where = c.url && c.kind !== 'lcp_phase' && c.kind !== 'audit_failing' ? ' ' + c.url : '';
  var values = c.kind === 'audit_failing' || (!c.before && !c.after) ? '' : ': ' + fmt(c.before, c.unit) + ' → ' + fmt(c.after, c.unit);
  return c.title + where + values;
}
// VERDICTS name an incident's field verdicts (see the API's fieldVerdict).
var VERDICTS = { confirmed_in_field: ['Confirmed in the field', 'bad'], not_seen_in_field: ['Not seen in the field', 'good'],
  no_field_data: ['No field data', 'muted'], not_reproduced_in_lab: ['Not reproduced in the lab', 'muted'] };
// verdictLine is an incident's field verdict with its numbers, or says it is awaited.
function verdictLine(v) {
  if (!v) return el('p', { class: 'verdict muted', text: 'Field verdict: awaited (real users within 7 days, the Chrome UX Report within 28).' });
  var name = VERDICTS[v.verdict] || [v.verdict, ''];
  return el('p', { class: 'verdict', 'data-verdict': v.verdict }, el('span', { class: 'badge ' + name[1], text: name[0] }), ' ', v.summary);
}
// incidentItem is one incident: its changes (metric, device, source), chart, cause and the
// link to the comparison of its last good and first bad day; check, when given, selects it.
function incidentItem(w, x, names, check) {
  var title = (x.kind === 'improvement' ? 'Improvement of ' : 'Regression of ');
  var head = el('div', { class: 'incident-head' }, check || null, kindBadge(x.kind, x.state), ' ',
    el('b', null, title, subjectLink(w, x, names, x.devices[0])),
    ' from ' + x.firstBadDay + ' · ' + x.metrics.map(metricLabel).join(', ') + (x.devices.length ? ' · ' + x.devices.join(', ') : '') +
    ' · ' + x.sources.map(function (s) { return SOURCES[s] || s; }).join(', ') + (x.resolvedDay ? ' · recovered ' + x.resolvedDay : ''));
  // The CSV has the API's numbers, each row's unit in a column of its own.
  var rows = table([
    { label: 'Metric', cell: function (g) { return metricLabel(g.metric); } },
    { label: 'Device', cell: function (g) { return g.device || '–'; } },
    { label: 'Source', cell: function (g) { return SOURCES[g.source] || g.source; } },
    { label: 'Before', n: true, csv: function (g) { return g.before.median; }, cell: function (g) { return fmt(g.before.median, g.unit); } },
    { label: 'After', n: true, csv: function (g) { return g.after.median; }, cell: function (g) { return fmt(g.after.median, g.unit); } },
    { label: 'Unit', csvOnly: true, csv: function (g) { return g.unit; } },
    { label: 'Change', n: true, unit: '%', csv: function (g) { return g.changePercent; }, cell: function (g) { return el('td', { class: 'n ' + (g.kind === 'improvement' ? 'good' : 'bad'), text: pct(g.changePercent) }); } },
    { label: 'Status', cell: function (g) { return g.kind === 'improvement' ? '–' : statusBadge(g.status); } }
  ], x.regressions, null, { stack: true, name: 'incident-' + x.id });
  var side = [incidentChart(x.chart, x.kind)];
  if (x.compare) {
    side.push(el('p', null, el('a', { class: 'compare', href: withQuery('#/w/' + w.id + '/compare', { page: x.compare.page, device: x.compare.device, base: x.compare.base, target: x.compare.target }),
      text: 'Compare ' + x.compare.base + ' with ' + x.compare.target + ' (' + x.compare.device + ')' })));
  }
  var body = [el('div', { class: 'incident-body' }, el('div', { class: 'incident-side' }, side), el('div', { class: 'incident-table' }, rows))];
  body.unshift(verdictLine(x.fieldVerdict));
  var cause = x.cause;
  if (cause.changes.length || cause.annotations.length) {
    body.push(el('h3', { text: 'What changed' }), el('ul', { class: 'cause' },
      cause.changes.slice(0, 5).map(function (c) { return el('li', { text: causeText(c) }); }),
      cause.annotations.map(function (a) { return el('li', { text: 'Annotation ' + day(a.at) + ': ' + a.text }); })));
  }
  return el('li', { class: 'card incident', id: 'incident-' + x.id, 'data-incident': x.id }, head, body);
}
export function regressionsView(w, q) {
  var state = q.state || '', kind = q.kind || '';
  var incidents = q.incident ? get('/' + w.id + '/incidents/' + encodeURIComponent(q.incident)).then(function (x) { return [x]; })
    : list(withQuery('/' + w.id + '/incidents', { state: state, kind: kind }));
  return load([incidents, list('/' + w.id + '/annotations?limit=100'),
    list('/' + w.id + '/settings/pages'), list('/' + w.id + '/multistep')]).then(function (r) {
    var names = {};
    r[2].concat(r[3]).forEach(function (x) { names[x.id] = x.alias || x.url; });
    var s = select('state', [['', 'Any state'], 'open', 'acknowledged', 'resolved'], state);
    s.id = 'inc-state';
    var k = select('kind', [['', 'Regressions and improvements'], ['regression', 'Regressions'], ['improvement', 'Improvements']], kind);
    k.id = 'inc-kind';
    var filter = function () { go(withQuery('#/w/' + w.id + '/regressions', { state: s.value, kind: k.value })); };
    s.addEventListener('change', filter);
    k.addEventListener('change', filter);
    var chosen = {};
    var ack = el('button', { type: 'button', id: 'ack-selected', text: 'Acknowledge selected', disabled: true });
    var count = function () { var n = Object.keys(chosen).filter(function (id) { return chosen[id]; }).length; ack.disabled = n === 0; ack.textContent = n ? 'Acknowledge ' + n + ' selected' : 'Acknowledge selected'; };
    ack.addEventListener('click', function () {
      var ids = Object.keys(chosen).filter(function (id) { return chosen[id]; });
      busy(ack, function () { return api('POST', '/' + w.id + '/incidents/acknowledge', { ids: ids }); }, ids.length + (ids.length === 1 ? ' incident' : ' incidents') + ' acknowledged.').then(render);
    });
    var items = r[0].map(function (x) {
      var check = null;
      if (isAdmin() && x.state === 'open') {
        check = el('input', { type: 'checkbox', class: 'pick', 'aria-label': 'Select this incident', onchange: function () { chosen[x.id] = check.checked; count(); } });
      }
      return incidentItem(w, x, names, check);
    });
    var out = [el('h1', { text: q.incident ? 'Incident' : 'Incidents: regressions and improvements' })];
    if (q.incident) out.push(el('p', null, link('#/w/' + w.id + '/regressions', 'All incidents')));
    else out.push(el('div', { class: 'row' }, el('label', { class: 'inline', for: 'inc-state' }, 'State', s), el('label', { class: 'inline', for: 'inc-kind' }, 'Kind', k),
      isAdmin() && r[0].some(function (x) { return x.state === 'open'; }) ? ack : null));
    out.push(items.length ? el('ul', { class: 'incidents' }, items) : empty('No incident' + (state || kind ? ' of this kind or state.' : ': a change of a page shows here once it lasted three days, all its metrics and devices in one.')));
    out.push(el('h2', { text: 'Annotations' }));
    if (isAdmin()) out.push(annotationForm(w));
    out.push(r[1].length ? table([
      { label: 'When', value: function (a) { return a.at; }, cell: function (a) { return when(a.at); } },
      { label: 'Text', cell: function (a) { return a.url ? el('a', { href: a.url, rel: 'noopener noreferrer', text: a.text }) : a.text; } },
      { label: 'Pages', cell: function (a) { return a.pages.length ? a.pages.join(', ') : 'all'; } }
    ], r[1]) : empty('No annotation: ' + (isAdmin() ? 'note deploys above, and they show on every timeline.' : 'admins note deploys here.')));
    return out;
  });
}
export function annotationForm(w) {
  var text = el('input', { name: 'text', required: true, maxlength: '500', placeholder: 'Deploy v2.3' });
  var b = el('button', { type: 'submit', text: 'Add annotation' });
  return el('form', { class: 'row', 'aria-label': 'Add an annotation', onsubmit: function (e) {
    e.preventDefault();
    busy(b, function () { return api('POST', '/' + w.id + '/annotations', { text: text.value }); }, 'Annotation added.').then(render);
  } }, field('Text', text), b);
}

// ---- events, test series and channels -----------------------------------------------------
// eventLink is the dashboard's view of what an event is about.
function eventLink(w, e) {
  var x = e.subject || {}, base = '#/w/' + w.id;
  if (x.incident) return link(base + '/regressions?incident=' + x.incident, 'incident');
  if (x.channel) return link(base + '/events?channel=' + x.channel, 'channel');
  if (x.page) return link(base + '/page/' + x.page + (x.device ? '?device=' + x.device : ''), 'page');
  if (x.test) return link(base + '/multistep/' + x.test, 'test');
  if (x.budget) return link(base + '/settings', 'budgets');
  return null;
}
// seriesTests lists a test series' tests with their pages, on demand.
function seriesTests(w, x) {
  var holder = el('div');
  var d = el('details', { ontoggle: function () {
    if (!d.open || holder.firstChild) return;
    get('/' + w.id + '/testseries/' + x.id).then(function (sr) {
      var tests = (sr.result && sr.result.list) || [];
      holder.appendChild(tests.length ? el('ul', null, tests.map(function (t) {
        return el('li', null, link('#/w/' + w.id + '/page/' + t.page.id + '?device=' + t.device, t.page.alias || t.page.url), ' (' + t.device + ') ', statusBadge(t.status));
      })) : el('p', { class: 'muted', text: 'No test.' }));
    }, function (err) { holder.appendChild(el('p', { class: 'error', text: err.message })); });
  } }, el('summary', { text: x.count + (x.count === 1 ? ' test' : ' tests') }), holder);
  return d;
}
export function eventsView(w, q) {
  return load([list('/' + w.id + '/events?limit=100'), list('/' + w.id + '/channels'), list('/' + w.id + '/testseries?limit=10').catch(function () { return []; })]).then(function (r) {
    var out = [el('h1', { text: 'Events' })];
    out.push(r[0].length ? table([
      { label: 'When', value: function (e) { return e.occurredAt; }, cell: function (e) { return when(e.occurredAt); } },
      { label: 'Type', value: function (e) { return e.type; }, cell: function (e) { return el('code', { text: e.type }); } },
      { label: 'What', cell: function (e) { return e.summary; } },
      { label: 'About', cell: function (e) { return eventLink(w, e) || ''; } }
    ], r[0]) : empty('No event yet: budget changes, failing tests and regressions show here.'));
    out.push(el('h2', { text: 'Test series from CI' }));
    out.push(r[2].length ? table([
      { label: 'Started', value: function (x) { return x.createdAt; }, cell: function (x) { return when(x.createdAt); } },
      { label: 'Status', value: function (x) { return x.status; }, cell: function (x) { return statusBadge(x.status); } },
      { label: 'Description', cell: function (x) { return x.description || ''; } },
      { label: 'By', cell: function (x) { return x.initiator || ''; } },
      { label: 'Tests', cell: function (x) { return seriesTests(w, x); } },
      { label: 'Failed', n: true, cell: function (x) { return el('td', { class: 'n ' + (x.failed_tests ? 'bad' : ''), text: String(x.failed_tests) }); } }
    ], r[2], 'The 10 newest series') : empty('No test series yet: start one from CI with cmd/ci or POST /' + w.id + '/testseries.'));
    out.push(el('h2', { id: 'channels', text: 'Channels' }));
    if (isAdmin()) out.push(el('details', { class: 'card add-channel' }, el('summary', { text: 'Add a channel' }), channelForm(w, null)));
    out.push(r[1].length ? el('div', { class: 'channels' }, r[1].map(function (c) { return channelCard(w, c, q && q.channel === c.id); }))
      : empty('No channel: ' + (isAdmin() ? 'add a webhook, a Slack incoming webhook or email recipients above.' : 'an admin key can add one.')));
    return out;
  });
}
// The event types a channel can take (the API's EventType; none chosen: all of them).
var EVENT_TYPES = ['budget.status_changed', 'multistep.state_changed', 'multistep.run_failed', 'audit.failing', 'audit.recovered',
  'ux.assessment_changed', 'regression.detected', 'regression.recovered', 'channel.failing', 'channel.recovered'];
// channelForm creates a channel (c null) or changes c: its target is asked again only to
// change it, as the API never shows it whole.
function channelForm(w, c) {
  var kind = c ? null : select('kind', [['webhook', 'Webhook'], ['slack', 'Slack incoming webhook'], ['email', 'Email']], 'webhook');
  var name = el('input', { name: 'name', required: true, maxlength: '100', value: c ? c.name : '', placeholder: 'Ops alerts' });
  var url = el('input', { name: 'url', type: 'url', placeholder: c ? 'unchanged' : 'https://hooks.example.com/openvitals', required: !c });
  var rcpt = el('textarea', { name: 'recipients', rows: '2', placeholder: c ? 'unchanged' : 'ops@example.com, one or more' });
  var urlField = field('URL', url), rcptField = field('Recipients', rcpt);
  var isEmail = function () { return (c ? c.kind : kind.value) === 'email'; };
  var show = function () { urlField.hidden = isEmail(); rcptField.hidden = !isEmail(); url.required = !c && !isEmail(); };
  if (kind) kind.addEventListener('change', show);
  show();
  var boxes = EVENT_TYPES.map(function (t) {
    return el('label', { class: 'inline check' }, el('input', { type: 'checkbox', name: 'events', value: t, checked: c && c.events.indexOf(t) >= 0 }), t);
  });
  var digest = el('input', { type: 'checkbox', name: 'digest', checked: c && c.digest });
  var secretBox = el('div');
  var b = el('button', { type: 'submit', text: c ? 'Save' : 'Add channel' });
  return el('form', { class: 'channel-form', 'aria-label': c ? 'Change channel ' + c.name : 'Add a channel', onsubmit: function (e) {
    e.preventDefault();
    var body = { name: name.value, digest: digest.checked,
      events: boxes.map(function (l) { return l.firstChild; }).filter(function (i) { return i.checked; }).map(function (i) { return i.value; }) };
    if (!c) body.kind = kind.value;
    if (isEmail() && rcpt.value.trim()) body.recipients = rcpt.value.split(/[\s,;]+/).filter(Boolean);
    if (!isEmail() && url.value.trim()) body.url = url.value.trim();
    busy(b, function () { return api(c ? 'PUT' : 'POST', '/' + w.id + '/channels' + (c ? '/' + c.id : ''), body); }, c ? 'Channel saved.' : 'Channel added.').then(function (saved) {
      if (saved && saved.secret) {
        // A webhook's signing secret is shown this once: the view stays until it is copied.
        clear(secretBox).appendChild(el('p', { class: 'secret' }, 'Signing secret of ' + saved.name + ' (shown once): ', el('code', { text: saved.secret }), ' ',
          el('button', { type: 'button', class: 'secondary', text: 'Done', onclick: render })));
        return;
      }
      render();
    }, function () { /* said */ });
  } }, el('div', { class: 'row' }, field('Name', name), kind ? field('Kind', kind) : null, urlField, rcptField),
    el('fieldset', null, el('legend', { text: 'Events (none: all)' }), boxes),
    el('label', { class: 'inline check' }, digest, 'One daily digest instead of a message per event'), el('div', null, b), secretBox);
}
function channelCard(w, c, open) {
  var holder = el('div'), asked = false;
  // loadDeliveries asks once (opening the card, and its opening from a link, both call it).
  var loadDeliveries = function () {
    if (asked) return;
    asked = true;
    list('/' + w.id + '/channels/' + c.id + '/deliveries').then(function (ds) {
      clear(holder).appendChild(ds.length ? table([
        { label: 'At', cell: function (x) { return when(x.at); } },
        { label: 'Event', cell: function (x) { return x.eventType; } },
        { label: 'Attempt', n: true, cell: function (x) { return String(x.attempt); } },
        { label: 'HTTP', n: true, cell: function (x) { return x.statusCode ? String(x.statusCode) : '–'; } },
        { label: 'Latency', n: true, cell: function (x) { return fmt(x.latencyMs, 'ms'); } },
        { label: 'Error', cell: function (x) { return x.error || ''; } }
      ], ds) : el('p', { class: 'muted', text: 'No delivery yet.' }));
    }, function (err) { holder.appendChild(el('p', { class: 'error', text: err.message })); });
  };
  var d = el('details', { open: open || null, ontoggle: function () { if (d.open) loadDeliveries(); } },
    el('summary', null, el('b', { text: c.name }), ' (' + c.kind + ') ', statusBadge(c.status),
      c.status === 'failing' ? ' ' + c.failures + ' failed deliveries in a row' : '',
      ' · ' + (c.url || c.recipients || '') + ' · ' + (c.events.length ? c.events.join(', ') : 'all events') + (c.digest ? ' · daily digest' : '')), holder);
  var box = el('div', { class: 'card channel', id: 'channel-' + c.id, 'data-channel': c.id }, d);
  if (open) loadDeliveries();
  if (isAdmin()) {
    var t = el('button', { type: 'button', class: 'secondary', text: 'Send a test' });
    t.addEventListener('click', function () {
      busy(t, function () { return api('POST', '/' + w.id + '/channels/' + c.id + '/test'); }, 'Test queued: open the channel for its delivery.').then(function () { asked = false; if (d.open) loadDeliveries(); }, function () {});
    });
    var edit = el('details', { class: 'edit' }, el('summary', { text: 'Change' }), channelForm(w, c));
    var del = el('button', { type: 'button', class: 'secondary danger', text: 'Delete', onclick: confirmThen('Delete the channel ' + c.name + ' and its deliveries?', function () {
      busy(del, function () { return api('DELETE', '/' + w.id + '/channels/' + c.id); }, 'Channel deleted.').then(render, function () {});
    }) });
    box.appendChild(el('div', { class: 'row' }, t, del));
    box.appendChild(edit);
  }
  return box;
}
