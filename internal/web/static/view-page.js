// openvitals dashboard: one page on one device: its lab and field values over time, its audits and report.
(function (ov) {
  'use strict';
  var LAB_COLUMNS = ov.LAB_COLUMNS;
  var el = ov.el, clear = ov.clear, say = ov.say, empty = ov.empty, api = ov.api, get = ov.get;
  var list = ov.list, isAdmin = ov.isAdmin, METRICS = ov.METRICS, fmt = ov.fmt;
  var fmtMetric = ov.fmtMetric, rating = ov.rating, metricCell = ov.metricCell, day = ov.day;
  var when = ov.when, ymd = ov.ymd, range = ov.range, unix = ov.unix, table = ov.table;
  var chart = ov.chart, field = ov.field, select = ov.select, busy = ov.busy;
  var segmented = ov.segmented, go = ov.go, link = ov.link, withQuery = ov.withQuery, load = ov.load;

  // ---- page -------------------------------------------------------------------------------
  var RANGES = [[7, 'Last 7 days'], [30, 'Last 30 days'], [90, 'Last 90 days'], [365, 'Last year']];
  function pageView(w, pageID, q) {
    var device = q.device === 'desktop' ? 'desktop' : 'mobile';
    var days = Number(q.days) || 30;
    var dr = range(days);
    var base = '/' + w.id + '/pages/' + pageID;
    return load([
      get(base + '?device=' + device),
      get(base + '/timeline?device=' + device + '&date=' + dr),
      get(base + '/network?device=' + device + '&date=' + dr),
      get(base + '/opportunities?device=' + device).catch(function () { return { result: { list: {} } }; }),
      get('/' + w.id + '/opportunities'),
      list('/' + w.id + '/annotations?limit=100').catch(function () { return []; }),
      list('/' + w.id + '/regressions?page=' + pageID + '&device=' + device).catch(function () { return []; }),
      list('/' + w.id + '/pages').catch(function () { return []; })
    ].concat(['lcp', 'inp', 'cls', 'fcp', 'ttfb'].map(function (m) {
      // The page's real users on this device class, for the field table.
      return get('/' + w.id + '/field-testing/distribution' + ov.segQuery({ vital: m, from: isoOf(dr.slice(0, 8)), to: isoOf(dr.slice(9)), page: pageID, filters: { device: rumDevices(device) } }))
        .then(function (x) { return x.result; }, function () { return null; });
    }))).then(function (r) {
      var detail = r[0], tl = r[1].result, net = r[2].result, opps = r[3].result.list, siteOpps = r[4].result.list;
      var rumDist = {};
      ['lcp', 'inp', 'cls', 'fcp', 'ttfb'].forEach(function (m, i) { if (r[8 + i] && r[8 + i].views) rumDist[m] = r[8 + i]; });
      var from = dr.slice(0, 8);
      var notes = r[5].filter(function (a) { return ymd(new Date(a.at)) >= from && (!a.pages.length || a.pages.indexOf(pageID) >= 0); });
      var regs = r[6];
      var row = r[7].filter(function (x) { return x.id === pageID && x.device === device; })[0];
      var uxByDay = {};
      if (row) row.timeline.forEach(function (t) { uxByDay[t.date] = t; });
      var here = function (hash) { return withQuery('#/w/' + w.id + '/page/' + pageID, hash); };
      var out = [
        el('p', null, link('#/w/' + w.id + '?device=' + device, '← ' + w.displayName)),
        el('h1', { text: detail.alias || detail.url }),
        el('p', { class: 'sub' }, detail.url + ' · ' + device + (detail.profile ? ' · measured with the test profile ' + detail.profile.name : ''))
      ];
      var rangeSelect = select('days', RANGES.map(function (x) { return [String(x[0]), x[1]]; }), String(days));
      rangeSelect.id = 'range';
      rangeSelect.addEventListener('change', function () { go(here({ device: device, days: rangeSelect.value })); });
      out.push(el('div', { class: 'row' },
        segmented('Device', ['mobile', 'desktop'], device, function (d) { go(here({ device: d, days: String(days) })); }),
        el('label', { class: 'inline', for: 'range' }, 'Range', rangeSelect)));
      if (detail.lastError) {
        out.push(el('p', { class: 'error', role: 'note' }, 'Last error (' + when(detail.lastError.at || detail.lastError.date) + '): ' + (detail.lastError.message || detail.lastError.error || JSON.stringify(detail.lastError))));
      }
      var lm = detail.latestMetrics;
      if (!lm && !tl.length) {
        out.push(empty('No audit yet' + (isAdmin() ? ': run one now.' : '.'), isAdmin() ? auditNowButton(w) : null));
      }
      if (lm) {
        out.push(el('h2', { text: 'Latest (3-day average)' }));
        out.push(el('div', { class: 'stats' }, LAB_COLUMNS.concat(['accessibility_score', 'best_practices_score', 'seo_score', 'validation_errors']).map(function (m) {
          return el('div', { class: 'stat' }, el('b', { class: rating(m, lm[m]), text: fmtMetric(m, lm[m]) }), el('span', { text: METRICS[m] ? METRICS[m].label : 'HTML errors' }));
        })));
      }
      var ux = detail.latestUx || {};
      var fieldMetrics = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'].filter(function (m) { return ux[m] || rumDist[m]; });
      if (fieldMetrics.length) {
        // Field values from both sources, each named: the Chrome UX Report (Google's sample of
        // Chrome users, p75 of 28 days) and this website's own real users (the snippet).
        out.push(el('h3', { text: 'Field against lab' }));
        out.push(el('div', { id: 'field-vs-lab' }, table([
          { label: 'Metric', cell: function (m) { return m.toUpperCase(); } },
          { label: 'Chrome UX Report p75', n: true, cell: function (m) { return ux[m] ? metricCell(m, ux[m].value) : el('td', { class: 'n', text: '–' }); } },
          { label: 'Chrome UX Report good / NI / poor', cell: function (m) { return ux[m] ? fmt(ux[m].green, '') + ' % / ' + fmt(ux[m].yellow, '') + ' % / ' + fmt(ux[m].red, '') + ' %' : '–'; } },
          { label: 'Real users p75', n: true, cell: function (m) { return rumDist[m] ? metricCell(m, rumDist[m].value) : el('td', { class: 'n', text: '–' }); } },
          { label: 'Real users good / NI / poor', cell: function (m) { return rumDist[m] ? ov.ratingBar(rumDist[m]) : '–'; } },
          { label: 'Lab', n: true, cell: function (m) { return metricCell(m, lm ? lm[m] : null); } }
        ], fieldMetrics, detail.latestUx ? 'Chrome UX Report core vitals assessment: ' + (ux.passed ? 'passed' : 'failed') : 'No Chrome UX Report data for this page')));
      }
      var dates = tl.map(function (t) { return t.date; });
      var col = function (m) { return tl.map(function (t) { return t[m]; }); };
      var uxCol = function (m) { return dates.map(function (d) { return uxByDay[d] ? uxByDay[d][m] : null; }); };
      // Scores are in the pages list's timeline (the timeline endpoint has timings only).
      var scoreDays = row ? row.timeline.filter(function (t) { return ymd(new Date(t.date)) >= from; }) : [];
      var scoreCol = function (m) { return scoreDays.map(function (t) { return t[m]; }); };
      var xr = [unix(dr.slice(0, 4) + '-' + dr.slice(4, 6) + '-' + dr.slice(6, 8)) - 43200, unix(new Date().toISOString()) + 43200];
      out.push(el('h2', { text: 'Timelines' }));
      out.push(el('div', { class: 'charts' },
        chart({ title: 'Scores', x: scoreDays.map(function (t) { return t.date; }), xRange: xr, annotations: notes, series: [
          { label: 'Performance', values: scoreCol('performance_score'), unit: 'score' },
          { label: 'Accessibility', values: scoreCol('accessibility_score'), unit: 'score' },
          { label: 'Best practices', values: scoreCol('best_practices_score'), unit: 'score' },
          { label: 'SEO', values: scoreCol('seo_score'), unit: 'score' }] }),
        chart({ title: 'Loading (ms)', x: dates, xRange: xr, annotations: notes, series: [
          { label: 'LCP', values: col('lcp'), unit: 'ms' },
          { label: 'CrUX LCP p75', values: uxCol('ux_lcp'), unit: 'ms', dash: true },
          { label: 'FCP', values: col('fcp'), unit: 'ms' },
          { label: 'Speed Index', values: col('speed_index'), unit: 'ms' },
          { label: 'TTFB', values: col('ttfb'), unit: 'ms' },
          { label: 'CrUX TTFB p75', values: uxCol('ux_ttfb'), unit: 'ms', dash: true }] }),
        chart({ title: 'Interactivity (ms)', x: dates, xRange: xr, annotations: notes, series: [
          { label: 'TBT', values: col('tbt'), unit: 'ms' },
          { label: 'TTI', values: col('tti'), unit: 'ms' },
          { label: 'CrUX INP p75', values: uxCol('ux_inp'), unit: 'ms', dash: true }] }),
        chart({ title: 'Layout shift', x: dates, xRange: xr, annotations: notes, series: [
          { label: 'CLS', values: col('cls'), unit: '' },
          { label: 'CrUX CLS p75', values: uxCol('ux_cls'), unit: '', dash: true }] }),
        chart({ title: 'Navigation Timing (ms, stacked)', x: dates, xRange: xr, stacked: true, annotations: notes, series: [
          { label: 'DNS', values: col('dns_time'), unit: 'ms' },
          { label: 'Connect', values: col('connect_time'), unit: 'ms' },
          { label: 'Server', values: col('server_time'), unit: 'ms' },
          { label: 'Transfer', values: col('transfer_time'), unit: 'ms' },
          { label: 'DOM ready', values: col('dom_ready'), unit: 'ms' }] }),
        chart({ title: 'Network bytes by type (stacked)', x: net.map(function (n) { return n.date; }), xRange: xr, stacked: true, annotations: notes,
          series: [['bytes_doc', 'Document'], ['bytes_js', 'JavaScript'], ['bytes_css', 'CSS'], ['bytes_image', 'Images'], ['bytes_font', 'Fonts'], ['bytes_media', 'Media'], ['bytes_other', 'Other']].map(function (b) {
            return { label: b[1], values: net.map(function (n) { return n[b[0]]; }), unit: 'B' };
          }) })));
      var rumVital = ['lcp', 'inp', 'cls'].indexOf(q.rum) >= 0 ? q.rum : 'lcp';
      out.push(el('h2', { text: 'Real users' }), el('div', { class: 'row' },
        segmented('Real-user metric', ['lcp', 'inp', 'cls'], rumVital, function (v) { go(here({ device: device, days: String(days), rum: v })); }),
        el('span', { class: 'muted', text: 'This page\'s views on ' + (device === 'mobile' ? 'phones and tablets' : 'desktops') + ', from the snippet; the page\'s query parameters must match.' })));
      return ov.rumPanel(w, { vital: rumVital, from: isoOf(dr.slice(0, 8)), to: isoOf(dr.slice(9)), page: pageID, filters: { device: rumDevices(device) } }).then(function (panel) {
        out.push(el('div', { id: 'page-rum' }, panel));
        return pageRest(out);
      });
      function pageRest(out) {
      // Opportunities with first-seen dates from the website-level list.
      out.push(el('h2', { text: 'Opportunities' }));
      var ids = ov.rankedOpportunities(opps);
      out.push(ids.length ? el('ul', { class: 'opps' }, ids.map(function (id) {
        var o = opps[id], holder = el('div');
        var first = siteOpps[id] ? day(siteOpps[id].startDate) : '';
        var d = el('details', { ontoggle: function () {
          if (!d.open || holder.firstChild) return;
          holder.appendChild(el('p', { class: 'muted', text: 'Loading…' }));
          get(base + '/opportunities/' + encodeURIComponent(id) + '?device=' + device).then(function (a) {
            clear(holder).appendChild(ov.auditDetails(a));
          }, function (err) { clear(holder).appendChild(el('p', { class: 'error', text: err.message })); });
        } }, el('summary', null, o.title, o.displayValue ? ' — ' + o.displayValue : '', ov.savingsText(o) ? el('span', { class: 'savings', text: ' ' + ov.savingsText(o) }) : '',
          el('span', { class: 'muted', text: ' (' + (o.categoryTitle || o.category) + (first ? ', first seen ' + first : '') + ')' })), holder);
        return el('li', null, d);
      })) : empty(lm ? 'No opportunity in the latest audit.' : 'Opportunities appear after the first audit.'));
      out.push(el('h2', { text: 'Regressions' }));
      var names = {};
      names[pageID] = detail.alias || detail.url;
      out.push(regs.length ? ov.regressionList(w, regs, names) : empty('No regression or improvement detected on this page and device.'));
      out.push(ov.diagnosticsPanel(w, pageID, device));
      out.push(el('h2', { text: 'Compare two audits' }), ov.comparePicker(w, pageID, device, dates));
      out.push(el('h2', { text: 'Lighthouse report' }));
      out.push(reportPicker(w, pageID, device, dates));
      return out;
      }
    });
  }
  function isoOf(ymdString) { return ymdString.slice(0, 4) + '-' + ymdString.slice(4, 6) + '-' + ymdString.slice(6, 8); }
  // rumDevices are the real users' device classes of a lab device.
  function rumDevices(device) { return device === 'mobile' ? 'mobile,tablet' : 'desktop'; }
  function auditNowButton(w) {
    var b = el('button', { type: 'button', id: 'audit-now', text: 'Audit now' });
    b.addEventListener('click', function () { busy(b, function () { return api('POST', '/' + w.id + '/audits'); }).then(function (a) { say(a.message || 'Audits queued.'); }); });
    return b;
  }
  // reportPicker shows the full Lighthouse report of a chosen day in a sandboxed frame.
  function reportPicker(w, pageID, device, dates) {
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

  ov.pageView = pageView;
  ov.isoOf = isoOf;
  ov.rumDevices = rumDevices;
  ov.auditNowButton = auditNowButton;
  ov.reportPicker = reportPicker;
}(window.ov));
