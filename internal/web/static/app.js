// openvitals dashboard: a small hash-routed page over the REST interface. The API key is kept
// in sessionStorage (gone with the tab, never in a URL) or, when the person asks for it, in
// localStorage (every tab of this browser, until signing out), and sent as a Bearer token.
(function () {
  'use strict';
  // Every view's file adds its views to ov and takes from it what it shares with the others.
  var ov = window.ov = {};

  var KEY = 'openvitals.key';
  var main = document.getElementById('main');
  var nav = document.getElementById('nav');
  var who = document.getElementById('who');
  var statusBox = document.getElementById('status');
  var me = null; // {account, role} of the key
  var charts = []; // uPlot instances of the current view, resized with the window
  var renderSeq = 0; // a view started later wins over a slower earlier one

  // ---- DOM ------------------------------------------------------------------------------
  // el(tag, props, ...children): props may hold class, text, on<event>, attributes; children
  // are nodes, strings, arrays or null.
  function el(tag, props) {
    var e = tag.indexOf('svg:') === 0 ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (k) {
        var v = props[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'text') e.textContent = v;
        else if (k === 'class') e.setAttribute('class', v);
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else if (k === 'value') e.value = v;
        else if (k === 'checked') e.checked = !!v;
        else e.setAttribute(k, v === true ? '' : v);
      });
    }
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function append(parent, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(parent, x); }); return; }
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
  function say(msg) {
    statusBox.textContent = msg;
    clearTimeout(say.t);
    say.t = setTimeout(function () { statusBox.textContent = ''; }, 6000);
  }
  // hush removes a toast: it was about the view that is left.
  function hush() { clearTimeout(say.t); statusBox.textContent = ''; }
  function empty(text, action) { return el('div', { class: 'empty' }, el('p', { text: text }), action || null); }

  // ---- API --------------------------------------------------------------------------------
  function key() { return sessionStorage.getItem(KEY) || localStorage.getItem(KEY); }
  function forgetKey() { sessionStorage.removeItem(KEY); localStorage.removeItem(KEY); }

  // ApiError carries a problem+json answer's status and text.
  function ApiError(status, detail, errors) { this.status = status; this.message = detail; this.errors = errors || []; }
  ApiError.prototype = Object.create(Error.prototype);

  function api(method, path, body, raw) {
    var opts = { method: method, headers: { Authorization: 'Bearer ' + key() } };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (res) {
      if (res.ok) {
        if (raw) return res;
        return res.status === 204 ? null : res.json();
      }
      return res.text().then(function (t) {
        var p = {};
        try { p = JSON.parse(t); } catch (e) { /* not problem+json */ }
        if (res.status === 401 && path !== '/account') {
          signOut('Your key is no longer accepted: sign in again.');
        }
        throw new ApiError(res.status, p.detail || p.message || (res.status + ' ' + res.statusText), p.errors);
      });
    });
  }
  // keyedImage is an <img> of an image the API serves: fetched with the key (an <img> cannot
  // send it) and shown from a blob: URL. props are the image's attributes, alt among them.
  function keyedImage(url, props) {
    var img = el('img', props);
    api('GET', url, undefined, true).then(function (res) { return res.blob(); }).then(function (b) {
      img.src = URL.createObjectURL(b);
    }, function () { img.alt = props.alt + ' (not available)'; });
    return img;
  }
  var get = function (path) { return api('GET', path); };
  function list(path) { return get(path).then(function (r) { return r.result.list; }); }
  function isAdmin() { return me && me.role === 'admin'; }
  // openIncidents answers the website's open regressions ([] when they cannot be read: they are
  // a signal beside a view, not what it is about).
  function openIncidents(w) { return list('/' + w.id + '/incidents?state=open&kind=regression').catch(function () { return []; }); }
  // incidentsOf are the incidents of a page, on device when given.
  function incidentsOf(incidents, pageID, device) {
    return incidents.filter(function (x) { return x.page === pageID && (!device || x.devices.indexOf(device) >= 0); });
  }
  // incidentLink is a link to an open incident naming its metrics and since when.
  function incidentLink(w, x, device) {
    return el('a', { class: 'badge bad incident-link', href: '#/w/' + w.id + '/regressions?incident=' + encodeURIComponent(x.id),
      text: 'Open regression: ' + x.metrics.map(metricLabel).join(', ') + (device ? '' : ' (' + x.devices.join(', ') + ')') + ' since ' + x.firstBadDay });
  }

  // ---- formatting -------------------------------------------------------------------------
  // METRICS: every metric's names, unit and thresholds by field, and PHASES the LCP's phases
  // (ttfb, loadDelay...), from metric-names.json (generated from the one declaration the API's
  // documentation uses too): data the page preloads beside the script, read before any view.
  var METRICS = {}, PHASES = {};
  var names = fetch(document.getElementById('ov-names').href).then(function (r) { return r.json(); }).then(function (n) {
    n.metrics.forEach(function (m) { m.unit = m.unit || ''; METRICS[m.field] = m; });
    n.phases.forEach(function (m) { PHASES[m.field] = m; });
  });
  // metricLabel is a metric's short name (its field when it has none).
  function metricLabel(f) { return METRICS[f] ? METRICS[f].label : f; }
  // phaseLabel is an LCP phase's name ("Load delay").
  function phaseLabel(f) { return PHASES[f] ? PHASES[f].label : f; }
  // metricName is a metric's full name with its short one where that is not in it: "Largest
  // Contentful Paint (LCP)", or Lighthouse's performance score.
  function metricName(f) {
    var m = METRICS[f];
    if (!m) return f;
    return m.title.toLowerCase().indexOf(m.label.toLowerCase()) >= 0 ? m.title : m.title + ' (' + m.label + ')';
  }
  // categoryLabel is a Lighthouse category's name (best_practices: Best practices).
  function categoryLabel(c) { return METRICS[c + '_score'] ? METRICS[c + '_score'].label : c; }
  // LAB_COLUMNS are the lab values the pages table and a page's summary show first.
  var LAB_COLUMNS = ['performance_score', 'lcp', 'cls', 'tbt', 'fcp', 'ttfb', 'speed_index', 'kb_total'];
  // The units policy and CSV cells are format.js's (pure, unit-tested with Node).
  var F = window.ovFormat, fmt = F.fmt, fmtBytes = F.fmtBytes, fmtPct = F.fmtPct, axisValue = F.axisValue, csvCell = F.csvCell;
  // fmtMetric writes a metric's value with its unit (a number given as text, as a budget's, too).
  function fmtMetric(name, v) { var m = METRICS[name]; return fmt(typeof v === 'string' && v !== '' && !isNaN(v) ? Number(v) : v, m ? m.unit : ''); }
  // rating is good / warn / bad for a value of a metric with thresholds, else ''.
  function rating(name, v) {
    var m = METRICS[name];
    if (!m || m.good === undefined || typeof v !== 'number') return '';
    if (m.higher) return v >= m.good ? 'good' : v >= m.poor ? 'warn' : 'bad';
    return v <= m.good ? 'good' : v <= m.poor ? 'warn' : 'bad';
  }
  function metricCell(name, v) { return el('td', { class: 'n ' + rating(name, v), text: fmtMetric(name, v) }); }
  function day(s) { return s ? String(s).slice(0, 10) : ''; }
  function when(s) { return s ? new Date(s).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC' : ''; }
  function ymd(d) { return d.toISOString().slice(0, 10).replace(/-/g, ''); }
  // range is the date parameter for the last n days (today included).
  function range(n) {
    var to = new Date(), from = new Date(Date.now() - (n - 1) * 864e5);
    return ymd(from) + '-' + ymd(to);
  }
  // unix is a day (yyyy-MM-dd: its start, UTC) or a timestamp in seconds, as uPlot's x.
  function unix(date) { var d = String(date); return Date.parse(d.length > 10 ? d : d + 'T00:00:00Z') / 1000; }
  function statusBadge(s) {
    var cls = { ok: 'good', up: 'good', completed: 'good', active: 'good', recovered: 'good', passed: 'good',
      'at-risk': 'warn', flaky: 'warn', testing: 'muted', queued: 'muted', acknowledged: 'muted', off: 'muted',
      exceeded: 'bad', down: 'bad', failed: 'bad', open: 'bad', failing: 'bad' }[s] || '';
    return el('span', { class: 'badge ' + cls, text: s || '–' });
  }

  // ---- tables -----------------------------------------------------------------------------
  // table(columns, rows, caption, opts): columns are {label, value(row) for sorting (and a
  // numeric column's CSV), cell(row) -> td, n: numeric, unit: of the CSV's numbers, csv(row):
  // the CSV's value (else a numeric column's value, else the cell's text), hidden: shown only
  // when asked for, csvOnly: in the CSV alone (as a unit column)}; headers with a value sort the rows, announced with aria-sort. opts: {name:
  // the CSV file's name and the key of the columns someone chose to see, stack: on a narrow
  // screen each row is a block of labelled values}. Every table has a CSV button.
  table.n = 0;
  function table(columns, rows, caption, opts) {
    opts = opts || {};
    columns = columns.filter(Boolean); // a column may be left out (null), as admin actions for a viewer
    var name = opts.name || (caption || columns[0].label).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    var shown = columns.map(function (c) { return !c.hidden && !c.csvOnly; });
    var chosen = opts.name && localStorage.getItem('openvitals.columns.' + opts.name);
    if (chosen) {
      try { chosen = JSON.parse(chosen); columns.forEach(function (c, i) { if (c.hidden && chosen.indexOf(c.label) >= 0) shown[i] = true; }); } catch (e) { /* ignored */ }
    }
    var tbody = el('tbody'), theadRow = el('tr');
    var sortBy = -1, dir = 1;
    var heads = columns.map(function (c, i) {
      var th = el('th', { scope: 'col', class: c.n ? 'n' : null });
      if (c.value) {
        th.appendChild(el('button', { class: 'sort', type: 'button', text: c.label, onclick: function () {
          dir = sortBy === i ? -dir : (c.n ? -1 : 1);
          sortBy = i;
          heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
          th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
          fill();
        } }));
      } else th.textContent = c.label;
      return th;
    });
    function sorted() {
      var rs = rows.slice();
      if (sortBy >= 0) {
        var f = columns[sortBy].value;
        rs.sort(function (a, b) {
          var x = f(a), y = f(b);
          if (x === y) return 0;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * dir;
        });
      }
      return rs;
    }
    // The header row is rebuilt only when the columns change: sorting keeps the focus on its button.
    function fillHead() {
      clear(theadRow);
      heads.forEach(function (h, i) { if (shown[i]) theadRow.appendChild(h); });
    }
    function fill() {
      clear(tbody);
      sorted().forEach(function (r) {
        tbody.appendChild(el('tr', null, columns.map(function (c, i) {
          if (!shown[i]) return null;
          var v = c.cell(r);
          var td = v && v.tagName === 'TD' ? v : el('td', { class: c.n ? 'n' : null }, v);
          if (opts.stack) td.setAttribute('data-label', c.label);
          return td;
        })));
      });
    }
    fillHead();
    fill();
    // A region of its own, focusable, so that a table wider than the screen scrolls by keyboard.
    // The caption sits beside the table's tools, outside the region that scrolls, so that a
    // narrow screen shows all of it; it still names the table.
    var captionID = caption ? 'caption-' + (++table.n) : null;
    var box = el('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption || (columns[0].label + ' table') }, el('table', { class: opts.stack ? 'stack' : null, 'aria-labelledby': captionID }, el('thead', null, theadRow), tbody));
    var tools = el('div', { class: 'tabletools' }, caption ? el('p', { class: 'muted caption', id: captionID, text: caption }) : null, el('button', { type: 'button', class: 'secondary small csv', text: 'CSV', 'aria-label': 'Download ' + (caption || columns[0].label + ' table') + ' as CSV', onclick: function () { download(name + '.csv', wrap.csv()); } }));
    if (columns.some(function (c) { return c.hidden; })) {
      tools.appendChild(el('details', { class: 'columns' }, el('summary', { text: 'Columns' }), el('div', { class: 'menu' }, columns.map(function (c, i) {
        if (c.csvOnly) return null;
        return el('label', { class: 'inline' }, el('input', { type: 'checkbox', checked: shown[i], onchange: function () {
          shown[i] = this.checked;
          if (opts.name) localStorage.setItem('openvitals.columns.' + opts.name, JSON.stringify(columns.filter(function (c, j) { return c.hidden && shown[j]; }).map(function (c) { return c.label; })));
          fillHead();
          fill();
        } }), c.label);
      }))));
    }
    var wrap = el('div', { class: 'tablebox' }, tools, box);
    // csv: every column (hidden ones too) in the rows' order on screen; numbers as the API gave
    // them, the unit in the header.
    wrap.csv = function () {
      var lines = [columns.map(function (c) { return csvCell(c.label + (c.unit ? ' (' + c.unit + ')' : '')); }).join(',')];
      sorted().forEach(function (r) {
        lines.push(columns.map(function (c) {
          if (c.csv) return csvCell(c.csv(r));
          if (c.n && c.value) return csvCell(c.value(r));
          var cell = c.cell(r);
          return csvCell(cell && cell.tagName === 'TD' ? cell.textContent : el('td', null, cell).textContent);
        }).join(','));
      });
      return lines.join('\r\n') + '\r\n';
    };
    return wrap;
  }
  function download(filename, text) {
    var a = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/csv' })), download: filename });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  function sparkline(values, label) {
    var pts = values.filter(function (v) { return typeof v === 'number'; });
    var svg = el('svg:svg', { class: 'spark', viewBox: '0 0 90 24', role: 'img', 'aria-label': label });
    if (!pts.length) return el('span', { class: 'muted', text: '–' });
    if (pts.length === 1) { svg.appendChild(el('svg:circle', { cx: '45', cy: '12', r: '2.5', class: 'dot' })); return svg; }
    var lo = Math.min.apply(null, pts), hi = Math.max.apply(null, pts), span = hi - lo || 1;
    var xs = pts.map(function (v, i) { return (i * 88 / (pts.length - 1) + 1).toFixed(1) + ',' + (22 - (v - lo) * 20 / span).toFixed(1); });
    svg.appendChild(el('svg:polyline', { points: xs.join(' ') }));
    return svg;
  }

  // ---- charts -----------------------------------------------------------------------------
  function palette() {
    var cs = getComputedStyle(document.documentElement);
    var out = [];
    for (var i = 1; i <= 8; i++) out.push(cs.getPropertyValue('--c' + i).trim());
    var v = function (n) { return cs.getPropertyValue('--' + n).trim(); };
    return { series: out, fg: v('fg'), muted: v('muted'), line: v('line'), good: v('good'), warn: v('warn'), bad: v('bad') };
  }

  // chart draws a time series (or, with categories, bars over categories) with uPlot, and
  // puts the same numbers in a table behind a disclosure for screen readers and copying.
  // spec: {title, x: [dates] or categories: [labels], series: [{label, values, unit, dash}],
  // stacked, bars, annotations: [{at, text, n}], height, xRange, yMax, yTop, sync}.
  // Every metric here is non-negative: the y axis starts at zero (yMax: its top, as 100 for a
  // score or percent; yTop: the least top, as where poor begins), so that a change looks as
  // big as it is. Annotations are markers on the
  // x axis, their number (n) and text on hover and focus; the view lists them once. Charts of
  // one sync key share a crosshair, and each shows the day's values under it.
  function chart(spec) {
    var fig = el('figure', { class: 'chart' });
    var plot = el('div', { class: 'plot', role: 'img', 'aria-label': spec.title + ': chart; its numbers are in the table below' });
    // The annotation markers are buttons: beside the image, not in it (an image has no controls).
    var box = el('div', { class: 'plotbox' }, plot);
    var readout = el('p', { class: 'readout muted', 'aria-hidden': 'true' });
    fig.appendChild(el('figcaption', { text: spec.title }));
    fig.appendChild(box);
    var xs = spec.categories ? spec.categories.map(function (_, i) { return i; }) : spec.x.map(unix);
    var series = spec.series.filter(function (s) { return s.values.some(function (v) { return typeof v === 'number'; }); });
    var unit = series.length ? series[0].unit : '';
    // numbers table
    var rows = (spec.categories || spec.x).map(function (x, i) { return { x: x, i: i }; });
    var cols = [{ label: spec.categories ? (spec.categoryLabel || 'Key') : 'Date', cell: function (r) { return spec.categories ? r.x : day(r.x) + (String(r.x).length > 10 ? String(r.x).slice(10, 16).replace('T', ' ') : ''); } }].concat(series.map(function (s) {
      return { label: s.label, n: true, unit: s.unit && s.unit !== 'score' ? s.unit : '', value: function (r) { return s.values[r.i]; }, cell: function (r) { return fmt(s.values[r.i], s.unit); } };
    }));
    fig.appendChild(el('details', null, el('summary', { text: 'Numbers of ' + spec.title }), table(cols, rows)));
    if (series.length) {
      fig.insertBefore(el('ul', { class: 'legend' }, series.map(function (s, i) {
        var sw = el('span', { class: 'swatch' + (s.dash ? ' dashed' : '') });
        // The scheme's own variable: a swatch follows a change of colour scheme by itself.
        var colour = 'var(--' + (s.colour || 'c' + (i % 8 + 1)) + ')';
        sw.style.borderColor = colour;
        if (!s.dash) sw.style.background = colour;
        return el('li', null, sw, s.label);
      })), box);
      fig.insertBefore(readout, box);
    }
    if (!series.length || xs.length === 0) {
      clear(plot).appendChild(el('p', { class: 'muted', text: 'No data in this range.' }));
      plot.removeAttribute('role');
      return fig;
    }
    var data = [xs];
    var acc = xs.map(function () { return null; });
    var stackedValues = series.map(function (s) {
      if (!spec.stacked) return s.values.map(function (v) { return typeof v === 'number' ? v : null; });
      acc = acc.map(function (a, i) { return typeof s.values[i] === 'number' ? (a || 0) + s.values[i] : a; });
      return acc.slice();
    });
    // A stacked chart draws its totals first, so that each smaller sum is filled over them.
    var order = series.map(function (_, i) { return i; });
    if (spec.stacked) order.reverse();
    order.forEach(function (i) { data.push(stackedValues[i]); });
    var notes = (spec.annotations || []).map(function (a) { return { t: unix(a.at), a: a }; });
    function showValues(u) {
      var i = u.cursor.idx;
      if (i === null || i === undefined) { readout.textContent = '\u00a0'; return; }
      readout.textContent = (spec.categories ? spec.categories[i] : day(new Date(xs[i] * 1000).toISOString())) + ': ' +
        series.map(function (s) { return s.label + ' ' + fmt(s.values[i], s.unit); }).join(' · ');
    }
    readout.textContent = '\u00a0';
    // options are uPlot's, in the colours of the scheme in use (read again when it changes).
    function options(pal) {
      var uSeries = [{}];
      order.forEach(function (i) {
        var s = series[i], colour = s.colour ? pal[s.colour] : pal.series[i % 8];
        var o = { label: s.label, stroke: colour, width: 2, points: { show: xs.length < 40 } };
        if (s.dash) o.dash = [6, 4];
        // A weekly series among daily dates is one line across the days it has no value for.
        if (spec.spanGaps) o.spanGaps = true;
        if (spec.stacked) o.fill = colour;
        if (spec.bars) { o.fill = colour; o.paths = uPlot.paths.bars({ size: [0.6, 60] }); o.points = { show: false }; }
        uSeries.push(o);
      });
      return {
        width: 400, height: spec.height || 220,
        series: uSeries,
        cursor: { sync: spec.sync ? { key: spec.sync } : undefined, drag: { x: true, y: false } },
        scales: { x: spec.categories ? { time: false, range: function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } }
          : { time: true },
          y: { range: function (u, lo, hi) { return [0, spec.yMax || Math.max(hi * 1.08, spec.yTop || 0) || 1]; } } },
        axes: [
          { stroke: pal.muted, grid: { stroke: pal.line, width: 1 }, ticks: { stroke: pal.line },
            // Many categories: every few are labelled, so that labels do not run into each other.
            values: spec.categories ? function (u, vals) { var every = Math.ceil(spec.categories.length / 6); return vals.map(function (v) { return Number.isInteger(v) && v % every === 0 && spec.categories[v] !== undefined ? String(spec.categories[v]).slice(0, 18) : ''; }); } : undefined,
            splits: spec.categories ? function () { return xs; } : undefined },
          { stroke: pal.muted, grid: { stroke: pal.line, width: 1 }, ticks: { stroke: pal.line }, size: 64,
            values: function (u, vals) { return vals.map(function (v) { return axisValue(v, unit); }); } }
        ],
        legend: { show: false },
        hooks: {
          setCursor: [showValues],
          draw: [function (u) {
            if (spec.bars) zeroBars(u, pal.bad);
            if (!notes.length) return;
            var ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = pal.fg;
            ctx.setLineDash([4, 4]);
            ctx.lineWidth = 1;
            notes.forEach(function (n) {
              var x = u.valToPos(n.t, 'x', true);
              if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
              ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
            });
            ctx.restore();
            placeNotes(u);
          }]
        }
      };
    }
    // zeroBars draws a bar at 0 (as a day of no successful run) as a short stub in the colour
    // of bad values: a bar of no height would be a line on the axis no one sees.
    function zeroBars(u, colour) {
      // About as wide as uPlot's bars: 60 % of a step (a day, a category).
      var ctx = u.ctx, w = Math.max(4, 0.6 * Math.abs(u.valToPos(spec.categories ? 1 : 86400, 'x', true) - u.valToPos(0, 'x', true)));
      ctx.save();
      ctx.fillStyle = colour;
      for (var k = 1; k < u.data.length; k++) {
        u.data[k].forEach(function (v, i) {
          if (v !== 0) return;
          var x = u.valToPos(xs[i], 'x', true), y = u.valToPos(0, 'y', true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
          ctx.fillRect(x - w / 2, y - 6, w, 6);
        });
      }
      ctx.restore();
    }
    // The markers sit over the plot, outside uPlot's (hidden) tree and the image, as buttons a
    // keyboard reaches.
    var marks = el('div', { class: 'notes' });
    notes.forEach(function (n) {
      var label = 'Annotation ' + (n.a.n || '') + ', ' + day(n.a.at) + ': ' + n.a.text;
      n.el = el('button', { type: 'button', class: 'note', 'aria-label': label }, String(n.a.n || '•'), el('span', { class: 'tip', 'aria-hidden': 'true', text: day(n.a.at) + ': ' + n.a.text }));
      marks.appendChild(n.el);
    });
    function placeNotes(u) {
      var o = u.over.getBoundingClientRect(), p = box.getBoundingClientRect();
      notes.forEach(function (n) {
        var x = u.valToPos(n.t, 'x');
        n.el.hidden = !(x >= 0 && x <= o.width);
        n.el.style.left = (o.left - p.left + x) + 'px';
        n.el.style.top = (o.top - p.top) + 'px';
        n.el.classList.toggle('right', x > o.width / 2);
      });
    }
    var entry = { el: plot, u: null };
    // draw makes the chart at the plot's width in the scheme's colours; a change of scheme
    // makes it again.
    entry.draw = function () {
      if (entry.u) entry.u.destroy();
      var opts = options(palette());
      opts.width = Math.max(280, plot.clientWidth);
      var u = entry.u = new uPlot(opts, data, plot);
      // The range asked for, not the data's: a page audited for a week shows a week of a month.
      if (spec.xRange) u.setScale('x', { min: spec.xRange[0], max: spec.xRange[1] });
      u.root.setAttribute('aria-hidden', 'true');
      plot.uplot = u; // for the dashboard's tests: its scales
      if (notes.length) { box.appendChild(marks); placeNotes(u); }
    };
    later(plot, function () {
      entry.draw();
      charts.push(entry);
    });
    return fig;
  }
  // later draws charts once their figure is in the page, at its width: a view built of several
  // requests adds it a few frames later (a figure never added is given up after some seconds).
  // One chart a frame, so that a view of ten charts is ten short tasks, not one long one that
  // would hold up a tap.
  var pending = [], pumping = false;
  function later(plot, draw) {
    pending.push({ plot: plot, draw: draw, frames: 0 });
    if (!pumping) { pumping = true; requestAnimationFrame(pump); }
  }
  function pump() {
    for (var i = 0; i < pending.length; i++) {
      if (pending[i].plot.isConnected) { pending.splice(i, 1)[0].draw(); break; }
    }
    pending = pending.filter(function (j) { return ++j.frames < 600; });
    if (pending.length) requestAnimationFrame(pump); else pumping = false;
  }
  // Charts draw on a canvas in the colours they were made with: a change of the system's colour
  // scheme while the page is open makes them again in the new ones.
  if (window.matchMedia) {
    var scheme = window.matchMedia('(prefers-color-scheme: dark)');
    var redraw = function () { charts.forEach(function (c) { if (c.el.isConnected) c.draw(); }); };
    if (scheme.addEventListener) scheme.addEventListener('change', redraw); else if (scheme.addListener) scheme.addListener(redraw);
  }
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { if (c.el.isConnected) c.u.setSize({ width: Math.max(280, c.el.clientWidth), height: c.u.height }); });
  });

  // ---- forms ------------------------------------------------------------------------------
  function field(label, input) { return el('label', null, label, input); }
  function select(name, options, value) {
    return el('select', { name: name }, options.map(function (o) {
      var v = Array.isArray(o) ? o[0] : o, t = Array.isArray(o) ? o[1] : o;
      return el('option', { value: v, selected: v === value ? true : null, text: t });
    }));
  }
  // busy runs action with button disabled, says what happened, and shows a refusal's message.
  function busy(button, action, done) {
    button.disabled = true;
    return Promise.resolve().then(action).then(function (r) {
      button.disabled = false;
      if (done) say(done);
      return r;
    }, function (err) {
      button.disabled = false;
      var msg = err.message + (err.errors && err.errors.length ? ': ' + err.errors.map(function (e) { return e.field + ' ' + e.message; }).join('; ') : '');
      say(msg);
      throw err;
    });
  }
  function confirmThen(text, action) { return function () { if (window.confirm(text)) action.apply(this, arguments); }; }
  // segmented is a row of buttons of which one is pressed; an option is a value or [value, text].
  function segmented(label, options, value, onchange) {
    var group = el('div', { class: 'seg', role: 'group', 'aria-label': label });
    options.forEach(function (o) {
      var v = Array.isArray(o) ? o[0] : o, t = Array.isArray(o) ? o[1] : o;
      group.appendChild(el('button', { type: 'button', 'aria-pressed': v === value ? 'true' : 'false', text: t, onclick: function () { onchange(v); } }));
    });
    return group;
  }

  // ---- routing ----------------------------------------------------------------------------
  // Routes: #/, #/w/{id}, #/w/{id}/page/{pageID}, #/w/{id}/compare, #/w/{id}/multistep[/{testID}], #/w/{id}/rum,
  // #/w/{id}/regressions, #/w/{id}/events, #/w/{id}/settings; query after "?".
  function route() {
    var h = location.hash.replace(/^#/, '') || '/';
    var q = {};
    var qi = h.indexOf('?');
    if (qi >= 0) {
      h.slice(qi + 1).split('&').forEach(function (kv) { var p = kv.split('='); if (p[0]) q[decodeURIComponent(p[0])] = decodeURIComponent(p[1] || ''); });
      h = h.slice(0, qi);
    }
    return { parts: h.split('/').filter(Boolean), q: q };
  }
  function go(hash) { if (location.hash === hash) render(); else location.hash = hash; }
  function link(hash, text) { return el('a', { href: hash, text: text }); }
  function withQuery(base, q) {
    var s = Object.keys(q).filter(function (k) { return q[k]; }).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(q[k]); }).join('&');
    return base + (s ? '?' + s : '');
  }

  var site = null; // the website of the current view: {id, displayName, domain}

  function setNav(w, current) {
    clear(nav);
    if (!w) return;
    [['', 'Pages'], ['/multistep', 'Multistep'], ['/rum', 'Real users'], ['/regressions', 'Regressions'], ['/events', 'Events'], ['/settings', isAdmin() ? 'Settings' : 'Setup']].forEach(function (t) {
      nav.appendChild(el('a', { href: '#/w/' + w.id + t[0], text: t[1], 'aria-current': current === t[0] ? 'page' : null }));
    });
  }

  // ready is what every view waits for besides its own data: the key's role, and the website
  // of the view; all of it is asked for at once, so that a view costs one round of requests.
  var ready = Promise.resolve();
  var whoami = null; // the pending or answered GET /account
  function account() {
    if (!whoami) whoami = Promise.all([get('/account'), names]).then(function (r) { me = r[0]; showWho(); return me; }, function (err) { whoami = null; throw err; });
    return whoami;
  }
  // load resolves to the answers of requests once ready is too.
  function load(requests) { return Promise.all([ready].concat(requests)).then(function (r) { return r.slice(1); }); }
  // painted answers a promise kept once what the view has drawn so far is on the screen: the
  // requests for what is below the fold wait for it, so that they do not compete with the
  // first paint's for a slow network's connections.
  function painted() { return new Promise(function (done) { requestAnimationFrame(function () { setTimeout(done, 0); }); }); }
  // parts answers a maker of parts: a part is a node a view shows at once and fills with what
  // answer (a promise of nodes) gives, or its error, so that a view draws what it has while
  // the rest is on its way. Parts are filled in the order they are made: one ready early waits
  // for those above it, so that nothing drawn moves down under a reader's eyes. The view stays
  // busy until each part of it has settled.
  function parts() {
    var last = Promise.resolve();
    return function (answer, attrs) {
      var holder = el('div', attrs);
      holder.settled = last = Promise.all([answer, last]).then(function (x) { append(holder, x[0]); },
        function (err) { holder.appendChild(el('p', { class: 'error', text: err.message })); });
      return holder;
    };
  }

  // ROUTES are a website's views, by the part of #/w/{id}/… after its id: the view's function
  // on ov (given by its view-*.js file) and whether it takes the next part (an id) before the
  // query. A view added here and in its file is routed; a misspelt name fails TestViewNames.
  var ROUTES = {
    '': ['websiteView'], page: ['pageView', 1], compare: ['compareView'], multistep: ['multistepView', 1],
    rum: ['rumView'], regressions: ['regressionsView'], events: ['eventsView'], settings: ['settingsView'],
    profiles: ['profilesView'], experiments: ['experimentsView', 1]
  };

  function render() {
    var seq = ++renderSeq;
    charts.forEach(function (c) { c.u.destroy(); });
    charts = [];
    if (!key()) { signInView(); return; }
    var r = route(), p = r.parts;
    // A toast speaks of the view it was said in: another view starts without it.
    var path = p.join('/');
    if (path !== render.path) hush();
    render.path = path;
    var view;
    if (p.length === 0) {
      ready = account();
      view = ov.websitesView();
      setNav(null);
    } else if (p[0] === 'w' && p[1]) {
      // The view's requests start now with the website's id; its name comes with ready.
      var w = site && site.id === p[1] ? site : { id: p[1] };
      ready = Promise.all([account(), loadSite(p[1], w)]).then(function () {
        var sub = p[2] ? '/' + p[2] : '';
        setNav(w, sub === '/page' ? '' : sub);
      });
      var to = ROUTES[p[2] || ''];
      view = to ? ov[to[0]](w, to[1] ? p[3] : r.q, r.q) : Promise.reject(new ApiError(404, 'No such view.'));
    } else view = Promise.reject(new ApiError(404, 'No such view.'));
    main.setAttribute('aria-busy', 'true');
    Promise.all([ready, view]).then(function (res) {
      if (seq !== renderSeq) return;
      clear(main);
      append(main, res[1]);
      return Promise.all([].concat(res[1]).map(function (n) { return n && n.settled; }));
    }, function (err) {
      if (seq !== renderSeq || !key()) return;
      if (err.status === 401) { signOut('Your key is not accepted (any more): sign in again.'); return; }
      clear(main);
      main.appendChild(el('h1', { text: err.status === 404 ? 'Not found' : 'Something went wrong' }));
      main.appendChild(el('p', { class: 'error', text: err.message }));
      main.appendChild(el('p', null, link('#/', 'Back to the websites')));
    }).then(function () {
      // A newer view is still on its way: it ends the busy state itself.
      if (seq !== renderSeq) return;
      main.removeAttribute('aria-busy');
      if (render.focus) main.focus();
      render.focus = true;
    });
  }

  // loadSite fills w in with the website of id (from the websites list, kept for the next view).
  function loadSite(id, w) {
    if (site && site.id === id) return Promise.resolve(Object.assign(w, site));
    return list('/websites').then(function (ws) {
      var found = ws.filter(function (x) { return x.id === id; })[0];
      if (!found) throw new ApiError(404, 'This key sees no website ' + id + '.');
      site = Object.assign(w, found);
      return site;
    });
  }

  // ---- sign-in ----------------------------------------------------------------------------
  function signInView(message) {
    clear(nav); clear(who); clear(main);
    var input = el('input', { id: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'key-help signin-error' });
    var error = el('p', { id: 'signin-error', class: 'error', role: 'alert', text: message || '' });
    var remember = el('input', { id: 'remember', type: 'checkbox', 'aria-describedby': 'remember-help' });
    var button = el('button', { type: 'submit', text: 'Sign in' });
    var form = el('form', { class: 'signin', onsubmit: function (e) {
      e.preventDefault();
      var k = input.value.trim();
      error.textContent = '';
      if (!k) { error.textContent = 'Paste an API key first.'; return; }
      forgetKey();
      (remember.checked ? localStorage : sessionStorage).setItem(KEY, k);
      whoami = null;
      button.disabled = true;
      account().then(function () {
        button.disabled = false;
        render();
      }, function (err) {
        button.disabled = false;
        forgetKey();
        // One message, in words: the API's own text is for a refusal that is not the key's.
        error.textContent = err.status === 401 || err.status === 403 ? 'This key was not accepted. Check that you pasted all of it and that it was not revoked.' : 'Could not sign in (' + err.message + '). Try again in a moment.';
        input.focus();
      });
    } },
      el('h1', { text: 'Sign in to openvitals' }),
      el('label', { for: 'key' }, 'API key'), input,
      el('p', { id: 'key-help', class: 'muted', text: 'Paste an admin or viewer key. It is sent to this service alone.' }),
      el('label', { class: 'inline check', for: 'remember' }, remember, 'Remember this key on this device'),
      el('p', { id: 'remember-help', class: 'muted', text: 'Unticked, the key stays in this tab only and is forgotten when you close it; links opened in a new tab ask for it again. Ticked, every tab of this browser uses it until you sign out, and anyone using this browser profile can too.' }),
      error, button);
    main.appendChild(form);
    input.focus();
  }
  function signOut(message) {
    forgetKey();
    me = null; site = null; whoami = null;
    if (location.hash && location.hash !== '#/') history.replaceState(null, '', '#/');
    signInView(message);
  }
  function showWho() {
    clear(who);
    if (!me) return;
    who.appendChild(el('span', { id: 'role', text: me.account + ' · ' + me.role }));
    who.appendChild(el('button', { type: 'button', class: 'secondary', id: 'signout', text: 'Sign out', onclick: function () { signOut(); say('Signed out: the key is forgotten.'); } }));
  }

  // What the views share.
  ov.currentSite = function () { return site; };
  ov.forgetSite = function () { site = null; };
  Object.assign(ov, {
    keyedImage: keyedImage, fmtBytes: fmtBytes, fmtPct: fmtPct, phaseLabel: phaseLabel, PHASES: PHASES, openIncidents: openIncidents, incidentsOf: incidentsOf, incidentLink: incidentLink,
    LAB_COLUMNS: LAB_COLUMNS, ApiError: ApiError, METRICS: METRICS, account: account, api: api, busy: busy, chart: chart,
    clear: clear, confirmThen: confirmThen, day: day, categoryLabel: categoryLabel, download: download, el: el, empty: empty, field: field, fmt: fmt, hush: hush, metricLabel: metricLabel, metricName: metricName,
    fmtMetric: fmtMetric, get: get, go: go, isAdmin: isAdmin, key: key, link: link, list: list,
    load: load, painted: painted, parts: parts, metricCell: metricCell, range: range, rating: rating, render: render, say: say,
    segmented: segmented, select: select, sparkline: sparkline, statusBadge: statusBadge,
    table: table, unix: unix, when: when, withQuery: withQuery, ymd: ymd
  });

  // ---- start ------------------------------------------------------------------------------
  // The views' files are deferred after this one: they are all in when the document is parsed.
  document.addEventListener('DOMContentLoaded', function () {
    window.addEventListener('hashchange', render);
    if (key()) render(); else signInView();
  });
}());

