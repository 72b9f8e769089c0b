// openvitals dashboard: a small hash-routed page over the REST interface. The API key is kept
// in sessionStorage only (gone with the tab, never in a URL) and sent as a Bearer token.
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
  function empty(text, action) { return el('div', { class: 'empty' }, el('p', { text: text }), action || null); }

  // ---- API --------------------------------------------------------------------------------
  function key() { return sessionStorage.getItem(KEY); }

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
  var get = function (path) { return api('GET', path); };
  function list(path) { return get(path).then(function (r) { return r.result.list; }); }
  function isAdmin() { return me && me.role === 'admin'; }

  // ---- formatting -------------------------------------------------------------------------
  var METRICS = {
    performance_score: { label: 'Performance', unit: 'score', good: 90, poor: 50, higher: true },
    accessibility_score: { label: 'Accessibility', unit: 'score', good: 90, poor: 50, higher: true },
    best_practices_score: { label: 'Best practices', unit: 'score', good: 90, poor: 50, higher: true },
    seo_score: { label: 'SEO', unit: 'score', good: 90, poor: 50, higher: true },
    lcp: { label: 'LCP', unit: 'ms', good: 2500, poor: 4000 },
    fcp: { label: 'FCP', unit: 'ms', good: 1800, poor: 3000 },
    cls: { label: 'CLS', unit: '', good: 0.1, poor: 0.25 },
    tbt: { label: 'TBT', unit: 'ms', good: 200, poor: 600 },
    ttfb: { label: 'TTFB', unit: 'ms', good: 800, poor: 1800 },
    speed_index: { label: 'Speed Index', unit: 'ms', good: 3400, poor: 5800 },
    tti: { label: 'TTI', unit: 'ms' },
    inp: { label: 'INP', unit: 'ms', good: 200, poor: 500 },
    fid: { label: 'FID', unit: 'ms', good: 100, poor: 300 },
    kb_total: { label: 'Transfer', unit: 'KB' },
    cpu_total: { label: 'CPU', unit: 'ms' },
    duration: { label: 'Duration', unit: 'ms' },
    opportunities: { label: 'Opportunities', unit: '' },
    ux_lcp: { label: 'CrUX LCP', unit: 'ms', good: 2500, poor: 4000 },
    ux_inp: { label: 'CrUX INP', unit: 'ms', good: 200, poor: 500 },
    ux_cls: { label: 'CrUX CLS', unit: '', good: 0.1, poor: 0.25 },
    ux_fcp: { label: 'CrUX FCP', unit: 'ms', good: 1800, poor: 3000 },
    ux_ttfb: { label: 'CrUX TTFB', unit: 'ms', good: 800, poor: 1800 }
  };
  // LAB_COLUMNS are the lab values the pages table and a page's summary show first.
  var LAB_COLUMNS = ['performance_score', 'lcp', 'cls', 'tbt', 'fcp', 'ttfb', 'speed_index', 'kb_total'];
  function fmt(v, unit) {
    if (v === null || v === undefined || v === '') return '–';
    if (typeof v !== 'number') return String(v);
    if (unit === '' || unit === 'cls') return v < 10 ? v.toFixed(3).replace(/\.?0+$/, '') || '0' : Math.round(v).toLocaleString('en');
    var s = Math.round(v).toLocaleString('en');
    return unit && unit !== 'score' ? s + ' ' + unit : s;
  }
  function fmtMetric(name, v) { var m = METRICS[name]; return fmt(v, m ? m.unit : ''); }
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
  // table(columns, rows): columns are {label, value(row) for sorting, cell(row) -> td, n: numeric};
  // headers with a value sort the rows, announced with aria-sort.
  function table(columns, rows, caption) {
    columns = columns.filter(Boolean); // a column may be left out (null), as admin actions for a viewer
    var tbody = el('tbody');
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
    function fill() {
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
      clear(tbody);
      rs.forEach(function (r) {
        tbody.appendChild(el('tr', null, columns.map(function (c) {
          var v = c.cell(r);
          return v && v.tagName === 'TD' ? v : el('td', { class: c.n ? 'n' : null }, v);
        })));
      });
    }
    fill();
    // A region of its own, focusable, so that a table wider than the screen scrolls by keyboard.
    return el('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption || (columns[0].label + ' table') }, el('table', null, caption ? el('caption', { class: 'muted', text: caption }) : null, el('thead', null, el('tr', null, heads)), tbody));
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
  // spec: {title, x: [dates] or categories: [labels], series: [{label, values, unit, dash, stack}],
  // stacked, bars, annotations: [{at, text}], height}
  function chart(spec) {
    var fig = el('figure', { class: 'chart' });
    var plot = el('div', { class: 'plot', role: 'img', 'aria-label': spec.title + ': chart; its numbers are in the table below' });
    fig.appendChild(el('figcaption', { text: spec.title }));
    fig.appendChild(plot);
    var xs = spec.categories ? spec.categories.map(function (_, i) { return i; }) : spec.x.map(unix);
    var series = spec.series.filter(function (s) { return s.values.some(function (v) { return typeof v === 'number'; }); });
    // numbers table
    var rows = (spec.categories || spec.x).map(function (x, i) { return { x: x, i: i }; });
    var cols = [{ label: spec.categories ? (spec.categoryLabel || 'Key') : 'Date', cell: function (r) { return r.x; } }].concat(series.map(function (s) {
      return { label: s.label, n: true, cell: function (r) { return fmt(s.values[r.i], s.unit); } };
    }));
    fig.appendChild(el('details', null, el('summary', { text: 'Numbers of ' + spec.title }), table(cols, rows)));
    if (spec.annotations && spec.annotations.length) {
      fig.appendChild(el('p', { class: 'muted' }, 'Annotations: ', spec.annotations.map(function (a, i) {
        return [i ? '; ' : '', day(a.at) + ' ' + a.text];
      })));
    }
    var pal = palette();
    if (series.length) {
      fig.insertBefore(el('ul', { class: 'legend' }, series.map(function (s, i) {
        var sw = el('span', { class: 'swatch' + (s.dash ? ' dashed' : '') });
        var colour = s.colour ? pal[s.colour] : pal.series[i % 8];
        sw.style.borderColor = colour;
        if (!s.dash) sw.style.background = colour;
        return el('li', null, sw, s.label);
      })), plot.nextSibling);
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
    var uSeries = [{}];
    order.forEach(function (i) {
      var s = series[i], colour = s.colour ? pal[s.colour] : pal.series[i % 8];
      data.push(stackedValues[i]);
      var o = { label: s.label, stroke: colour, width: 2, points: { show: xs.length < 40 },
        value: function (u, v, si, di) { return di === null || di === undefined ? '–' : fmt(s.values[di], s.unit); } };
      if (s.dash) o.dash = [6, 4];
      if (spec.stacked) o.fill = colour;
      if (spec.bars) { o.fill = colour; o.paths = uPlot.paths.bars({ size: [0.6, 60] }); o.points = { show: false }; }
      uSeries.push(o);
    });
    var notes = (spec.annotations || []).map(function (a) { return unix(a.at); });
    var opts = {
      width: 400, height: spec.height || 220,
      series: uSeries,
      scales: { x: spec.categories ? { time: false, range: function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } }
        : { time: true, range: spec.xRange ? function () { return spec.xRange; } : undefined },
        // Bars and stacks are read from zero; lines zoom on their values.
        y: spec.bars || spec.stacked ? { range: function (u, lo, hi) { return [0, hi > 0 ? hi * 1.08 : 1]; } } : {} },
      axes: [
        { stroke: pal.muted, grid: { stroke: pal.line, width: 1 }, ticks: { stroke: pal.line },
          // Many categories: every few are labelled, so that labels do not run into each other.
          values: spec.categories ? function (u, vals) { var every = Math.ceil(spec.categories.length / 6); return vals.map(function (v) { return Number.isInteger(v) && v % every === 0 && spec.categories[v] !== undefined ? String(spec.categories[v]).slice(0, 18) : ''; }); } : undefined,
          splits: spec.categories ? function () { return xs; } : undefined },
        { stroke: pal.muted, grid: { stroke: pal.line, width: 1 }, ticks: { stroke: pal.line }, size: 60 }
      ],
      legend: { show: false },
      hooks: { draw: [function (u) {
        if (!notes.length) return;
        var ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = pal.fg;
        ctx.setLineDash([4, 4]);
        ctx.lineWidth = 1;
        notes.forEach(function (t) {
          var x = u.valToPos(t, 'x', true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
        });
        ctx.restore();
      }] }
    };
    // Drawn once the figure is in the page, at its width: a view built of several requests
    // adds it a few frames later (a figure never added is given up after some seconds).
    var frames = 0;
    requestAnimationFrame(function draw() {
      if (!plot.isConnected) {
        if (++frames < 600) requestAnimationFrame(draw);
        return;
      }
      opts.width = Math.max(280, plot.clientWidth);
      var u = new uPlot(opts, data, plot);
      u.root.setAttribute('aria-hidden', 'true');
      charts.push({ u: u, el: plot });
    });
    return fig;
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
  function segmented(label, options, value, onchange) {
    var group = el('div', { class: 'seg', role: 'group', 'aria-label': label });
    options.forEach(function (o) {
      group.appendChild(el('button', { type: 'button', 'aria-pressed': o === value ? 'true' : 'false', text: o, onclick: function () { onchange(o); } }));
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
    if (!whoami) whoami = get('/account').then(function (a) { me = a; showWho(); return a; }, function (err) { whoami = null; throw err; });
    return whoami;
  }
  // load resolves to the answers of requests once ready is too.
  function load(requests) { return Promise.all([ready].concat(requests)).then(function (r) { return r.slice(1); }); }

  function render() {
    var seq = ++renderSeq;
    charts.forEach(function (c) { c.u.destroy(); });
    charts = [];
    if (!key()) { signInView(); return; }
    var r = route(), p = r.parts;
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
      switch (p[2]) {
        case undefined: view = ov.websiteView(w, r.q); break;
        case 'page': view = ov.pageView(w, p[3], r.q); break;
        case 'compare': view = ov.compareView(w, r.q); break;
        case 'multistep': view = p[3] ? ov.testView(w, p[3]) : ov.multistepView(w); break;
        case 'rum': view = ov.rumView(w, r.q); break;
        case 'regressions': view = ov.regressionsView(w, r.q); break;
        case 'events': view = ov.eventsView(w, r.q); break;
        case 'settings': view = ov.settingsView(w); break;
        case 'profiles': view = ov.profilesView(w); break;
        case 'experiments': view = ov.experimentsView(w, p[3]); break;
        default: view = Promise.reject(new ApiError(404, 'No such view.'));
      }
    } else view = Promise.reject(new ApiError(404, 'No such view.'));
    main.setAttribute('aria-busy', 'true');
    Promise.all([ready, view]).then(function (res) {
      if (seq !== renderSeq) return;
      clear(main);
      append(main, res[1]);
    }, function (err) {
      if (seq !== renderSeq || !key()) return;
      if (err.status === 401) { signOut('Your key is not accepted (any more): sign in again.'); return; }
      clear(main);
      main.appendChild(el('h1', { text: err.status === 404 ? 'Not found' : 'Something went wrong' }));
      main.appendChild(el('p', { class: 'error', text: err.message }));
      main.appendChild(el('p', null, link('#/', 'Back to the websites')));
    }).then(function () {
      main.removeAttribute('aria-busy');
      if (seq === renderSeq && render.focus) main.focus();
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
    var input = el('input', { id: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'key-help' });
    var error = el('p', { id: 'signin-error', class: 'error', role: 'alert', text: message || '' });
    var button = el('button', { type: 'submit', text: 'Sign in' });
    var form = el('form', { class: 'signin', onsubmit: function (e) {
      e.preventDefault();
      var k = input.value.trim();
      if (!k) { error.textContent = 'Paste an API key first.'; return; }
      sessionStorage.setItem(KEY, k);
      whoami = null;
      busy(button, account).then(function () {
        render();
      }, function (err) {
        sessionStorage.removeItem(KEY);
        error.textContent = err.status === 401 ? 'That key was not accepted: check that you pasted the whole key (it starts with ov_), and that it was not revoked.' : 'Could not sign in: ' + err.message;
        input.focus();
      });
    } },
      el('h1', { text: 'Sign in to openvitals' }),
      el('label', { for: 'key' }, 'API key'), input,
      el('p', { id: 'key-help', class: 'muted', text: 'Paste an admin or viewer key. It stays in this tab only (session storage) and is sent to this service alone; signing out or closing the tab forgets it.' }),
      error, button);
    main.appendChild(form);
    input.focus();
  }
  function signOut(message) {
    sessionStorage.removeItem(KEY);
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
    LAB_COLUMNS: LAB_COLUMNS, ApiError: ApiError, METRICS: METRICS, account: account, api: api, busy: busy, chart: chart,
    clear: clear, confirmThen: confirmThen, day: day, el: el, empty: empty, field: field, fmt: fmt,
    fmtMetric: fmtMetric, get: get, go: go, isAdmin: isAdmin, key: key, link: link, list: list,
    load: load, metricCell: metricCell, range: range, rating: rating, render: render, say: say,
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

