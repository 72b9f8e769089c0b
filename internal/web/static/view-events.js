// openvitals dashboard: regressions, annotations, the activity feed and channels.
(function (ov) {
  'use strict';
  var el = ov.el, say = ov.say, empty = ov.empty, key = ov.key, api = ov.api, list = ov.list;
  var isAdmin = ov.isAdmin, METRICS = ov.METRICS, fmt = ov.fmt, day = ov.day, when = ov.when;
  var statusBadge = ov.statusBadge, table = ov.table, field = ov.field, select = ov.select;
  var busy = ov.busy, go = ov.go, link = ov.link, withQuery = ov.withQuery, load = ov.load;
  var render = ov.render;

  // ---- regressions ------------------------------------------------------------------------
  // regressionList lists regressions and improvements; names maps page and test ids to what
  // people call them.
  // The sources of regressions, named: field values say whether they are Google's Chrome UX
  // Report or this website's own real users.
  var SOURCES = { lab: 'lab (Lighthouse)', ux: 'Chrome UX Report', rum: 'real users', multistep: 'multistep runs' };
  function regressionList(w, regs, names) {
    names = names || {};
    return el('ul', { class: 'regs' }, regs.map(function (g) {
      var m = METRICS[g.metric] ? METRICS[g.metric].label : g.metric;
      var what = g.kind === 'improvement' ? 'improved' : 'regressed';
      var subject = g.page ? link('#/w/' + w.id + '/page/' + g.page + '?device=' + (g.device || 'mobile'), names[g.page] || g.page) : g.test ? link('#/w/' + w.id + '/multistep/' + g.test, names[g.test] || g.test) : 'the website';
      var badge = statusBadge(g.status);
      if (g.kind === 'improvement' && g.status === 'open') badge.className = 'badge good';
      var li = el('li', null,
        badge, ' ', el('b', { text: m + ' ' + what }), ' on ', subject, g.device ? ' (' + g.device + ')' : '', ': ',
        fmt(g.before.median, g.unit) + ' → ' + fmt(g.after.median, g.unit) + ' (' + (g.changePercent > 0 ? '+' : '') + g.changePercent.toFixed(1) + ' %), first on ' + g.firstBadDay + ', source: ' + (SOURCES[g.source] || g.source));
      var cause = g.cause || { changes: [], annotations: [] };
      if (cause.changes.length || cause.annotations.length) {
        li.appendChild(el('ul', null,
          cause.changes.slice(0, 5).map(function (c) { return el('li', { text: c.title + (c.url ? ' ' + c.url : '') + ': ' + fmt(c.before, c.unit) + ' → ' + fmt(c.after, c.unit) }); }),
          cause.annotations.map(function (a) { return el('li', { text: 'Annotation ' + day(a.at) + ': ' + a.text }); })));
      }
      if (g.comparison) li.appendChild(el('div', null, ov.compareLink(w, g.comparison)));
      if (isAdmin() && g.status === 'open') {
        var b = el('button', { type: 'button', class: 'secondary', text: 'Acknowledge' });
        b.addEventListener('click', function () { busy(b, function () { return api('PUT', '/' + w.id + '/regressions/' + g.id, { status: 'acknowledged' }); }, 'Acknowledged.').then(render); });
        li.appendChild(el('div', null, b));
      }
      return li;
    }));
  }
  function regressionsView(w, q) {
    var status = q.status || '';
    return load([list('/' + w.id + '/regressions' + (status ? '?status=' + status : '')), list('/' + w.id + '/annotations?limit=100'),
      list('/' + w.id + '/settings/pages'), list('/' + w.id + '/multistep')]).then(function (r) {
      var names = {};
      r[2].concat(r[3]).forEach(function (x) { names[x.id] = x.alias || x.url; });
      var s = select('status', [['', 'Any status'], 'open', 'recovered', 'acknowledged'], status);
      s.id = 'reg-status';
      s.addEventListener('change', function () { go(withQuery('#/w/' + w.id + '/regressions', { status: s.value })); });
      var out = [el('h1', { text: 'Regressions and improvements' }), el('div', { class: 'row' }, el('label', { class: 'inline', for: 'reg-status' }, 'Status', s)),
        r[0].length ? regressionList(w, r[0], names) : empty('No regression detected' + (status ? ' with this status.' : ': changes show here once they last three days.')),
        el('h2', { text: 'Annotations' })];
      if (isAdmin()) out.push(annotationForm(w));
      out.push(r[1].length ? table([
        { label: 'When', value: function (a) { return a.at; }, cell: function (a) { return when(a.at); } },
        { label: 'Text', cell: function (a) { return a.url ? el('a', { href: a.url, rel: 'noopener noreferrer', text: a.text }) : a.text; } },
        { label: 'Pages', cell: function (a) { return a.pages.length ? a.pages.join(', ') : 'all'; } }
      ], r[1]) : empty('No annotation: ' + (isAdmin() ? 'note deploys above, and they show on every timeline.' : 'admins note deploys here.')));
      return out;
    });
  }
  function annotationForm(w) {
    var text = el('input', { name: 'text', required: true, maxlength: '500', placeholder: 'Deploy v2.3' });
    var b = el('button', { type: 'submit', text: 'Add annotation' });
    return el('form', { class: 'row', 'aria-label': 'Add an annotation', onsubmit: function (e) {
      e.preventDefault();
      busy(b, function () { return api('POST', '/' + w.id + '/annotations', { text: text.value }); }, 'Annotation added.').then(render);
    } }, field('Text', text), b);
  }

  // ---- events and channels ----------------------------------------------------------------
  function eventsView(w) {
    return load([list('/' + w.id + '/events?limit=100'), list('/' + w.id + '/channels'), list('/' + w.id + '/testseries?limit=10').catch(function () { return []; })]).then(function (r) {
      var out = [el('h1', { text: 'Events' })];
      out.push(r[0].length ? table([
        { label: 'When', value: function (e) { return e.occurredAt; }, cell: function (e) { return when(e.occurredAt); } },
        { label: 'Type', value: function (e) { return e.type; }, cell: function (e) { return el('code', { text: e.type }); } },
        { label: 'What', cell: function (e) { return e.summary; } }
      ], r[0]) : empty('No event yet: budget changes, failing tests and regressions show here.'));
      out.push(el('h2', { text: 'Test series from CI' }));
      out.push(r[2].length ? table([
        { label: 'Started', value: function (x) { return x.createdAt; }, cell: function (x) { return when(x.createdAt); } },
        { label: 'Status', value: function (x) { return x.status; }, cell: function (x) { return statusBadge(x.status); } },
        { label: 'Description', cell: function (x) { return x.description || ''; } },
        { label: 'By', cell: function (x) { return x.initiator || ''; } },
        { label: 'Tests', n: true, cell: function (x) { return String(x.count); } },
        { label: 'Failed', n: true, cell: function (x) { return el('td', { class: 'n ' + (x.failed_tests ? 'bad' : ''), text: String(x.failed_tests) }); } }
      ], r[2], 'The 10 newest series') : empty('No test series yet: start one from CI with cmd/ci or POST /' + w.id + '/testseries.'));
      out.push(el('h2', { text: 'Channels' }));
      out.push(r[1].length ? el('div', null, r[1].map(function (c) {
        var holder = el('div');
        var d = el('details', { ontoggle: function () {
          if (!d.open || holder.firstChild) return;
          list('/' + w.id + '/channels/' + c.id + '/deliveries').then(function (ds) {
            holder.appendChild(ds.length ? table([
              { label: 'At', cell: function (x) { return when(x.at); } },
              { label: 'Event', cell: function (x) { return x.eventType; } },
              { label: 'Attempt', n: true, cell: function (x) { return String(x.attempt); } },
              { label: 'HTTP', n: true, cell: function (x) { return x.statusCode ? String(x.statusCode) : '–'; } },
              { label: 'Latency', n: true, cell: function (x) { return fmt(x.latencyMs, 'ms'); } },
              { label: 'Error', cell: function (x) { return x.error || ''; } }
            ], ds) : el('p', { class: 'muted', text: 'No delivery yet.' }));
          }, function (err) { holder.appendChild(el('p', { class: 'error', text: err.message })); });
        } }, el('summary', null, c.name + ' (' + c.kind + ') ', statusBadge(c.status), ' ' + (c.url || c.recipients || '') + ' · ' + (c.events.length ? c.events.join(', ') : 'all events') + (c.digest ? ' · daily digest' : '')), holder);
        var box = el('div', { class: 'card' }, d);
        if (isAdmin()) {
          var t = el('button', { type: 'button', class: 'secondary', text: 'Send a test' });
          t.addEventListener('click', function () { busy(t, function () { return api('POST', '/' + w.id + '/channels/' + c.id + '/test'); }, 'Test queued: see its delivery below.'); });
          box.appendChild(t);
        }
        return box;
      })) : empty('No channel: ' + (isAdmin() ? 'add one with POST /' + w.id + '/channels (webhook, Slack or email).' : 'an admin key can add one.')));
      return out;
    });
  }

  ov.regressionList = regressionList;
  ov.regressionsView = regressionsView;
  ov.annotationForm = annotationForm;
  ov.eventsView = eventsView;
}(window.ov));
