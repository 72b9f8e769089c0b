// openvitals dashboard: a small hash-routed page over the REST interface. The API key is kept
// in sessionStorage only (gone with the tab, never in a URL) and sent as a Bearer token.
(function () {
  'use strict';

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
  // Routes: #/, #/w/{id}, #/w/{id}/page/{pageID}, #/w/{id}/multistep[/{testID}], #/w/{id}/rum,
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
      view = websitesView();
      setNav(null);
    } else if (p[0] === 'w' && p[1]) {
      // The view's requests start now with the website's id; its name comes with ready.
      var w = site && site.id === p[1] ? site : { id: p[1] };
      ready = Promise.all([account(), loadSite(p[1], w)]).then(function () {
        var sub = p[2] ? '/' + p[2] : '';
        setNav(w, sub === '/page' ? '' : sub);
      });
      switch (p[2]) {
        case undefined: view = websiteView(w, r.q); break;
        case 'page': view = pageView(w, p[3], r.q); break;
        case 'multistep': view = p[3] ? testView(w, p[3]) : multistepView(w); break;
        case 'rum': view = rumView(w, r.q); break;
        case 'regressions': view = regressionsView(w, r.q); break;
        case 'events': view = eventsView(w); break;
        case 'settings': view = settingsView(w); break;
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

  // ---- websites ---------------------------------------------------------------------------
  function websitesView() {
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
        return Promise.all([list('/' + w.id + '/pages'), list('/' + w.id + '/budgets'), list('/' + w.id + '/multistep')]).then(function (r) {
          cards.appendChild(websiteCard(w, r[0], r[1], r[2]));
        }, function (err) { cards.appendChild(el('div', { class: 'card' }, el('h2', null, link('#/w/' + w.id, w.displayName)), el('p', { class: 'error', text: err.message }))); });
      })).then(function () { return out; });
    });
  }
  // scoreTrend averages the performance score of every page and device per day.
  function scoreTrend(rows) {
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
  function websiteCard(w, rows, budgets, tests) {
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
      el('div', { class: 'stats' },
        el('div', { class: 'stat' }, el('b', { text: String(Object.keys(pages).length) }), el('span', { text: 'pages' })),
        el('div', { class: 'stat' }, el('b', { class: exceeded ? 'bad' : '', text: String(exceeded) }), el('span', { text: 'budgets exceeded' })),
        el('div', { class: 'stat' }, el('b', { class: atRisk ? 'warn' : '', text: String(atRisk) }), el('span', { text: 'at risk' })),
        el('div', { class: 'stat' }, el('b', { class: rating('performance_score', last), text: fmt(last, 'score') }), el('span', { text: 'performance' }))),
      el('div', null, 'Performance trend ', sparkline(trend.values, 'Average performance score by day: ' + trend.values.join(', ') || 'none')),
      el('div', { class: 'muted' }, tests.length ? 'Multistep: ' + Object.keys(states).map(function (s) { return states[s] + ' ' + s; }).join(', ') : 'No multistep test'));
  }
  function addWebsiteForm() {
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
  var LAB_COLUMNS = ['performance_score', 'lcp', 'cls', 'tbt', 'fcp', 'ttfb', 'speed_index', 'kb_total'];
  function websiteView(w, q) {
    var device = q.device === 'desktop' ? 'desktop' : 'mobile';
    return load([list('/' + w.id + '/pages'), list('/' + w.id + '/budgets'), get('/' + w.id + '/opportunities'),
      get('/' + w.id + '/field-testing/pages?timing=lcp+inp+cls').then(function (x) { return x.result.list; }, function () { return {}; })]).then(function (r) {
      var rows = r[0].filter(function (x) { return x.device === device; }), budgets = r[1], opps = r[2].result.list;
      rows.forEach(function (x) { x.rum = r[3][pathKey(x.url)]; });
      var out = [el('h1', { text: w.displayName }), el('p', { class: 'sub', text: w.domain })];
      var actions = el('div', { class: 'row' }, segmented('Device', ['mobile', 'desktop'], device, function (d) { go(withQuery('#/w/' + w.id, { device: d })); }));
      if (isAdmin() && r[0].length) {
        actions.appendChild(auditNowButton(w));
      }
      out.push(actions);
      out.push(el('h2', { text: 'Pages (' + device + ')' }));
      if (!rows.length) {
        out.push(empty('No page yet: add the pages to monitor in ' + (isAdmin() ? 'Settings.' : 'Setup.'), link('#/w/' + w.id + '/settings', 'Add pages')));
      } else if (!rows.some(function (x) { return x.latest; })) {
        out.push(empty('No audit yet: ' + (isAdmin() ? 'run one now with "Audit now", or wait for the daily audits.' : 'the daily audits will fill this in.')));
      }
      if (rows.length) out.push(pagesTable(w, rows, device));
      out.push(el('h2', { text: 'Budgets' }));
      out.push(budgets.length ? budgetsTable(budgets) : empty('No budget: ' + (isAdmin() ? 'set one in Settings.' : 'an admin key can set one.')));
      out.push(el('h2', { text: 'Opportunities across the website' }));
      var ids = Object.keys(opps);
      out.push(ids.length ? table([
        { label: 'Opportunity', value: function (id) { return opps[id].title; }, cell: function (id) { return opps[id].title; } },
        { label: 'Category', value: function (id) { return opps[id].category; }, cell: function (id) { return opps[id].category; } },
        { label: 'Pages', n: true, value: function (id) { return opps[id].pages.length; }, cell: function (id) { return String(opps[id].pages.length); } },
        { label: 'First seen', value: function (id) { return opps[id].startDate; }, cell: function (id) { return day(opps[id].startDate); } },
        { label: 'Where', cell: function (id) { return opps[id].pages.slice(0, 4).map(function (p, i) { return [i ? ', ' : '', link('#/w/' + w.id + '/page/' + p.id + '?device=' + p.device, (p.alias || p.url) + ' (' + p.device + ')')]; }); } }
      ], ids) : empty('No opportunity reported.'));
      return out;
    });
  }
  // pathKey is a page's key in the real-user reports per page: its path, lower-cased, without
  // query or trailing slash.
  function pathKey(url) { var p = String(url).split(/[?#]/)[0].toLowerCase().replace(/\/+$/, ''); return p || '/'; }
  function pagesTable(w, rows, device) {
    var hasUX = rows.some(function (r) { return r.latest && typeof r.latest.ux_lcp === 'number'; });
    var hasSearch = rows.some(function (r) { return r.latest && typeof r.latest.clicks === 'number'; });
    var hasRUM = rows.some(function (r) { return r.rum; });
    var cols = [
      { label: 'Page', value: function (r) { return (r.alias || r.url).toLowerCase(); }, cell: function (r) {
        return el('td', null, link('#/w/' + w.id + '/page/' + r.id + '?device=' + device, r.alias || r.url), el('div', { class: 'muted', text: r.url }));
      } },
      { label: 'Trend', cell: function (r) { return sparkline(r.timeline.map(function (t) { return t.performance_score; }), 'Performance score by day for ' + (r.alias || r.url)); } }
    ];
    LAB_COLUMNS.forEach(function (m) {
      cols.push({ label: METRICS[m].label, n: true, value: function (r) { return r.latest ? r.latest[m] : null; }, cell: function (r) { return metricCell(m, r.latest ? r.latest[m] : null); } });
    });
    cols.push({ label: 'Budgets', n: true, value: function (r) { return r.latest ? r.latest.budgets_exceeded * 100 + r.latest.budgets_at_risk : null; }, cell: function (r) {
      if (!r.latest) return el('td', { class: 'n', text: '–' });
      return el('td', { class: 'n' }, r.latest.budgets_exceeded ? el('span', { class: 'bad', text: r.latest.budgets_exceeded + ' exceeded ' }) : null,
        r.latest.budgets_at_risk ? el('span', { class: 'warn', text: r.latest.budgets_at_risk + ' at risk' }) : null,
        !r.latest.budgets_exceeded && !r.latest.budgets_at_risk ? 'ok' : null);
    } });
    if (hasUX) {
      ['ux_lcp', 'ux_inp', 'ux_cls'].forEach(function (m) {
        cols.push({ label: METRICS[m].label, n: true, value: function (r) { return r.latest ? r.latest[m] : null; }, cell: function (r) { return metricCell(m, r.latest ? r.latest[m] : null); } });
      });
      cols.push({ label: 'CrUX vitals', value: function (r) { return r.latest ? r.latest.ux_passed : null; }, cell: function (r) {
        var p = r.latest ? r.latest.ux_passed : null;
        return p === null || p === undefined ? '–' : statusBadge(p ? 'passed' : 'failed');
      } });
    }
    if (hasRUM) {
      // Real users of the page's path, every device (the page view splits them).
      [['lcp', 'Real users LCP'], ['inp', 'Real users INP'], ['cls', 'Real users CLS']].forEach(function (c) {
        cols.push({ label: c[1], n: true, value: function (r) { return r.rum ? r.rum[c[0]] : null; }, cell: function (r) { return metricCell(c[0], r.rum ? r.rum[c[0]] : null); } });
      });
    }
    if (hasSearch) {
      [['clicks', 'Clicks'], ['impressions', 'Impressions'], ['CTR', 'CTR %'], ['position', 'Position']].forEach(function (c) {
        cols.push({ label: c[1], n: true, value: function (r) { return r.latest ? r.latest[c[0]] : null; }, cell: function (r) { return fmt(r.latest ? r.latest[c[0]] : null, c[0] === 'CTR' ? '' : 'score'); } });
      });
    }
    return table(cols, rows);
  }
  function budgetsTable(budgets) {
    return table([
      { label: 'Metric', value: function (b) { return b.metric; }, cell: function (b) { return (METRICS[b.metric] ? METRICS[b.metric].label : b.metric); } },
      { label: 'Rule', cell: function (b) { return (b.operator === 'lt' ? 'below ' : 'above ') + b.value; } },
      { label: 'Device', value: function (b) { return b.device; }, cell: function (b) { return b.device; } },
      { label: 'Status', value: function (b) { return b.status; }, cell: function (b) { return statusBadge(b.status); } },
      { label: 'Pages off it', cell: function (b) {
        return b.pages.length ? b.pages.map(function (p, i) { return [i ? ', ' : '', link('#/w/' + site.id + '/page/' + p.id + '?device=' + p.device, (p.alias || p.id) + ' (' + p.device + ', ' + p.status + ')')]; }) : 'none';
      } }
    ], budgets);
  }

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
      return get('/' + w.id + '/field-testing/distribution' + segQuery({ vital: m, from: isoOf(dr.slice(0, 8)), to: isoOf(dr.slice(9)), page: pageID, filters: { device: rumDevices(device) } }))
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
        el('p', { class: 'sub' }, detail.url + ' · ' + device)
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
          { label: 'Real users good / NI / poor', cell: function (m) { return rumDist[m] ? ratingBar(rumDist[m]) : '–'; } },
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
      return rumPanel(w, { vital: rumVital, from: isoOf(dr.slice(0, 8)), to: isoOf(dr.slice(9)), page: pageID, filters: { device: rumDevices(device) } }).then(function (panel) {
        out.push(el('div', { id: 'page-rum' }, panel));
        return pageRest(out);
      });
      function pageRest(out) {
      // Opportunities with first-seen dates from the website-level list.
      out.push(el('h2', { text: 'Opportunities' }));
      var ids = Object.keys(opps);
      out.push(ids.length ? el('ul', { class: 'opps' }, ids.map(function (id) {
        var o = opps[id], holder = el('div');
        var first = siteOpps[id] ? day(siteOpps[id].startDate) : '';
        var d = el('details', { ontoggle: function () {
          if (!d.open || holder.firstChild) return;
          holder.appendChild(el('p', { class: 'muted', text: 'Loading…' }));
          get(base + '/opportunities/' + encodeURIComponent(id) + '?device=' + device).then(function (a) {
            clear(holder).appendChild(auditDetails(a));
          }, function (err) { clear(holder).appendChild(el('p', { class: 'error', text: err.message })); });
        } }, el('summary', null, o.title, o.displayValue ? ' — ' + o.displayValue : '', el('span', { class: 'muted', text: ' (' + o.category + (first ? ', first seen ' + first : '') + ')' })), holder);
        return el('li', null, d);
      })) : empty(lm ? 'No opportunity in the latest audit.' : 'Opportunities appear after the first audit.'));
      out.push(el('h2', { text: 'Regressions' }));
      var names = {};
      names[pageID] = detail.alias || detail.url;
      out.push(regs.length ? regressionList(w, regs, names) : empty('No regression or improvement detected on this page and device.'));
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
  // auditDetails shows a Lighthouse audit in its own format: description, display value and
  // the first rows of its table.
  function auditDetails(a) {
    var out = el('div');
    if (a.description) out.appendChild(el('p', { text: a.description.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1') }));
    if (a.displayValue) out.appendChild(el('p', null, el('b', { text: a.displayValue })));
    var d = a.details || {};
    var items = d.items || [], heads = (d.headings || []).filter(function (h) { return h.key; });
    if (items.length && heads.length) {
      out.appendChild(table(heads.map(function (h) {
        var label = typeof h.label === 'string' ? h.label : (h.label && h.label.formattedDefault) || h.key;
        return { label: label || h.key, cell: function (it) {
          var v = it[h.key];
          if (v && typeof v === 'object') v = v.url || v.text || v.snippet || v.selector || JSON.stringify(v).slice(0, 120);
          if (typeof v === 'number') v = h.valueType === 'bytes' ? fmt(v / 1024, 'KB') : h.valueType === 'ms' || h.valueType === 'timespanMs' ? fmt(v, 'ms') : fmt(v, '');
          return v === undefined ? '' : String(v);
        } };
      }), items.slice(0, 10)));
    }
    return out;
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

  // ---- multistep --------------------------------------------------------------------------
  function multistepView(w) {
    return load([list('/' + w.id + '/multistep')]).then(function (r) {
      var tests = r[0];
      var out = [el('h1', { text: 'Multistep tests' })];
      if (isAdmin() && tests.length) {
        var b = el('button', { type: 'button', id: 'run-all', text: 'Run all now' });
        b.addEventListener('click', function () { busy(b, function () { return api('POST', '/' + w.id + '/multistep/run-all'); }).then(function (r) { say(r.message || 'Runs queued.'); }); });
        out.push(el('div', { class: 'row' }, b));
      }
      if (!tests.length) {
        out.push(empty('No multistep test yet: ' + (isAdmin() ? 'create one in Settings.' : 'an admin key can create one.'), isAdmin() ? link('#/w/' + w.id + '/settings', 'Create a test') : null));
        return out;
      }
      out.push(table([
        { label: 'Test', value: function (t) { return t.alias; }, cell: function (t) { return link('#/w/' + w.id + '/multistep/' + t.id, t.alias); } },
        { label: 'Device', value: function (t) { return t.device; }, cell: function (t) { return t.device; } },
        { label: 'State', value: function (t) { return t.state; }, cell: function (t) { return statusBadge(t.state); } },
        { label: 'Success (14 days)', n: true, value: function (t) { return t.success_rate; }, cell: function (t) { return el('td', { class: 'n', text: t.success_rate === null ? '–' : t.success_rate + ' %' }); } },
        { label: 'Daily', cell: function (t) { return sparkline(t.success_rates.map(function (s) { return s.rate; }), 'Daily success rate of ' + t.alias); } },
        { label: 'INP', n: true, value: function (t) { return t.inp; }, cell: function (t) { return metricCell('inp', t.inp); } },
        { label: 'TBT', n: true, value: function (t) { return t.tbt; }, cell: function (t) { return metricCell('tbt', t.tbt); } },
        { label: 'CLS', n: true, value: function (t) { return t.cls; }, cell: function (t) { return metricCell('cls', t.cls); } },
        { label: 'Duration', n: true, value: function (t) { return t.duration; }, cell: function (t) { return metricCell('duration', t.duration); } }
      ], tests));
      return out;
    });
  }
  function testView(w, testID) {
    return load([list('/' + w.id + '/multistep'), list('/' + w.id + '/multistep/' + testID + '/runs')]).then(function (r) {
      var t = r[0].filter(function (x) { return x.id === testID; })[0];
      if (!t) throw new ApiError(404, 'No such multistep test.');
      var runs = r[1];
      var out = [el('p', null, link('#/w/' + w.id + '/multistep', '← Multistep tests')), el('h1', { text: t.alias }),
        el('p', { class: 'sub' }, t.device + ' · ', statusBadge(t.state), ' · success ' + (t.success_rate === null ? '–' : t.success_rate + ' %') + ' over 14 days')];
      if (isAdmin()) {
        var b = el('button', { type: 'button', id: 'run-now', text: 'Run now' });
        b.addEventListener('click', function () { busy(b, function () { return api('POST', '/' + w.id + '/multistep/' + testID + '/runs'); }, 'Run queued.').then(function () { setTimeout(render, 1500); }); });
        out.push(el('div', { class: 'row' }, b));
      }
      out.push(el('h2', { text: 'Steps' }), el('ol', { class: 'steps' }, t.steps.map(function (s) { return el('li', null, el('code', { text: s.type }), ' ', s.target || '', s.value ? ' = ' + s.value : ''); })));
      var done = runs.filter(function (x) { return x.status === 'completed'; }).slice().reverse();
      var rates = t.success_rates || [];
      var fortnight = [Date.now() / 1000 - 14 * 86400, Date.now() / 1000 + 43200];
      out.push(el('div', { class: 'charts' },
        chart({ title: 'Success rate by day (%)', x: rates.map(function (s) { return s.date; }), xRange: fortnight, bars: true, series: [{ label: 'Success rate', values: rates.map(function (s) { return s.rate; }), unit: '%' }] }),
        chart({ title: 'Completed runs (ms)', x: done.map(function (x) { return x.created; }), xRange: fortnight, series: [
          { label: 'Duration', values: done.map(function (x) { return x.duration; }), unit: 'ms' },
          { label: 'TBT', values: done.map(function (x) { return x.tbt; }), unit: 'ms' },
          { label: 'INP', values: done.map(function (x) { return x.inp; }), unit: 'ms' }] })));
      out.push(el('h2', { text: 'Runs' }));
      out.push(runs.length ? table([
        { label: 'Started', value: function (x) { return x.created; }, cell: function (x) { return when(x.created); } },
        { label: 'Status', value: function (x) { return x.status; }, cell: function (x) { return statusBadge(x.status); } },
        { label: 'Duration', n: true, value: function (x) { return x.duration; }, cell: function (x) { return metricCell('duration', x.duration); } },
        { label: 'INP', n: true, cell: function (x) { return metricCell('inp', x.inp); } },
        { label: 'TBT', n: true, cell: function (x) { return metricCell('tbt', x.tbt); } },
        { label: 'CLS', n: true, cell: function (x) { return metricCell('cls', x.cls); } },
        { label: 'CPU', n: true, cell: function (x) { return metricCell('cpu_total', x.cpu_total); } },
        { label: 'Bytes', n: true, cell: function (x) { return fmt(x.bytes_total, 'B'); } },
        { label: 'Error', cell: function (x) {
          if (!x.error) return '';
          var holder = el('div', null, x.error);
          if (x.screenshot) {
            var sb = el('button', { type: 'button', class: 'secondary', text: 'Screenshot' });
            sb.addEventListener('click', function () {
              busy(sb, function () { return api('GET', '/' + w.id + '/multistep/' + testID + '/runs/' + x.id + '/screenshot', undefined, true).then(function (res) { return res.blob(); }); }).then(function (blob) {
                sb.replaceWith(el('img', { class: 'shot', alt: 'The page when step ' + ((x.failedStep || 0) + 1) + ' failed', src: URL.createObjectURL(blob) }));
              });
            });
            holder.appendChild(sb);
          }
          return holder;
        } }
      ], runs) : empty('No run yet' + (isAdmin() ? ': run it now.' : '.')));
      return out;
    });
  }

  // ---- real users -------------------------------------------------------------------------
  var RUM_METRICS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb', 'fid', 'fp', 'dns_time', 'connect_time', 'server_time', 'transfer_time', 'dom_time', 'fully_loaded_time', 'transfer_size', 'dom_size', 'dom_elements'];
  // ---- real users -----------------------------------------------------------------------
  var VITALS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'];
  var SEG_DIMS = {
    device: ['mobile', 'tablet', 'desktop', 'unknown'],
    browser: ['chrome', 'edge', 'firefox', 'safari', 'samsung', 'opera', 'other', 'unknown'],
    os: ['android', 'ios', 'windows', 'macos', 'linux', 'chromeos', 'other', 'unknown'],
    connection: ['4g', '3g', '2g', 'slow-2g', 'unknown'],
    navigation: ['navigate', 'reload', 'back-forward', 'back-forward-cache', 'prerender', 'restore', 'unknown']
  };
  var PART_LABELS = { timeToFirstByte: 'TTFB', resourceLoadDelay: 'Load delay', resourceLoadDuration: 'Load time', elementRenderDelay: 'Render delay',
    inputDelay: 'Input delay', processingDuration: 'Processing', presentationDelay: 'Presentation', duration: 'Script time', time: 'At' };
  // problemBox says what the API refused, naming its fields: the rest of the view stays.
  function problemBox(err) {
    var errs = err.errors || [];
    var named = errs.every(function (e) { return err.message.indexOf(e.field) >= 0; });
    return el('p', { class: 'error', role: 'alert', 'data-fields': errs.map(function (e) { return e.field; }).join(' '),
      text: err.message + (named ? '' : ' (' + errs.map(function (e) { return e.field + ': ' + e.message; }).join('; ') + ')') });
  }
  // segQuery is a real-user report's query string.
  function segQuery(o) {
    var q = ['metric=' + o.vital, 'date=' + o.from.replace(/-/g, '') + '-' + o.to.replace(/-/g, '')];
    Object.keys(o.filters || {}).forEach(function (k) { if (o.filters[k]) q.push(k + '=' + encodeURIComponent(o.filters[k])); });
    if (o.page) q.push('page=' + encodeURIComponent(o.page));
    if (o.by) q.push('by=' + o.by);
    return '?' + q.join('&');
  }
  function ratingBar(r) {
    var g = r.ratings.good.percent, ni = r.ratings.needsImprovement.percent, p = r.ratings.poor.percent;
    return el('div', { class: 'ratings', role: 'img', 'aria-label': 'Good ' + g + ' %, needs improvement ' + ni + ' %, poor ' + p + ' %' },
      [['good', g], ['warn', ni], ['bad', p]].map(function (x) {
        // Through the CSSOM: the page's policy refuses style attributes.
        var seg = el('span', { class: x[0], title: x[1] + ' %', text: x[1] >= 8 ? Math.round(x[1]) + ' %' : '' });
        seg.style.width = x[1] + '%';
        return seg;
      }));
  }
  function attributionTable(metric, kind, rows) {
    var cols = [];
    var name = { elements: 'Element', targets: 'Target', scripts: 'Script', entities: 'Entity' }[kind];
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
    return table(cols, rows);
  }
  // rumPanel draws a vital of real users: its trend, ratings, distribution, breakdown and top
  // attributions, for the website (filtered) or one monitored page. A refused query shows its
  // problem in place.
  function rumPanel(w, o) {
    var q = segQuery(o), base = '/' + w.id + '/field-testing/';
    var wantAttr = ['lcp', 'inp', 'cls'].indexOf(o.vital) >= 0;
    return Promise.all([
      get(base + 'trend' + q),
      get(base + 'distribution' + segQuery(Object.assign({}, o, { by: '' }))),
      o.by ? get(base + 'segments' + q) : null,
      wantAttr ? get(base + 'attributions' + segQuery(Object.assign({}, o, { by: '' }))).catch(function (err) { return { problem: err }; }) : null
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
          { label: 'Share', n: true, value: function (x) { return x.percent; }, cell: function (x) { return fmt(x.percent, '') + ' %'; } },
          { label: 'p' + seg.percentile + ' ' + label, n: true, value: function (x) { return x.value; }, cell: function (x) { return metricCell(o.vital, x.value); } },
          { label: 'Good / NI / poor', cell: function (x) { return ratingBar(x); } }
        ], seg.list)));
      }
      if (r[3] && r[3].problem) out.push(el('h3', { text: 'Why: top attributions' }), problemBox(r[3].problem));
      else if (r[3]) {
        var at = r[3].result;
        var box = el('div', { id: 'rum-attributions' }, el('h3', { text: 'Why: top attributions (ranked by slow views)' }));
        [['elements', 'LCP elements'], ['targets', o.vital === 'cls' ? 'Elements the largest shift moved' : 'Interaction targets'], ['scripts', 'Scripts of the interactions\' long animation frames'], ['entities', 'By third party']].forEach(function (k) {
          if (at[k[0]] && at[k[0]].length) box.appendChild(el('div', { class: 'attr-' + k[0] }, el('h4', { text: k[1] }), attributionTable(o.vital, k[0], at[k[0]])));
        });
        if (box.childNodes.length === 1) box.appendChild(empty('No attribution in this range.'));
        out.push(box);
      }
      return out;
    }, function (err) { return [problemBox(err)]; });
  }
  // rumView: the website's real users, any vital, filtered by segments and broken down by one;
  // then the report per page and country, and the snippet.
  function rumView(w, q) {
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
      var snippet = '<script async src="' + location.origin + '/rum/' + w.id + '.js"></script>';
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
  function rumSettingsForm(w, set) {
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
  function pageCountryReport(w, q, from, to) {
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
        out.push(el('div', { class: 'charts' }, chart({ title: 'p75 ' + metric + ' per ' + (dim === 'pages' ? 'page' : 'country') + ' (top ' + top.length + ' by views)', categories: top, categoryLabel: dim === 'pages' ? 'Page' : 'Country', bars: true,
          series: [{ label: 'p75 ' + metric, values: top.map(function (k) { return items[k][metric]; }), unit: unit }] })));
        out.push(el('div', { id: 'rum-table' }, table([
          { label: dim === 'pages' ? 'Page' : 'Country', value: function (k) { return k; }, cell: function (k) { return k; } },
          { label: 'Page views', n: true, value: function (k) { return items[k].count; }, cell: function (k) { return fmt(items[k].count, 'score'); } },
          { label: 'Share', n: true, value: function (k) { return items[k].percent; }, cell: function (k) { return fmt(items[k].percent, '') + ' %'; } },
          { label: 'p75 ' + metric, n: true, value: function (k) { return items[k][metric]; }, cell: function (k) { return metricCell(metric, items[k][metric]); } }
        ], keys, r.result.count + ' page views in all')));
      }
      return out;
    }, function (err) { return [el('h2', { text: 'Per page and country' }), problemBox(err)]; });
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

  // ---- settings (admin actions) -----------------------------------------------------------
  function settingsView(w) {
    return load([list('/' + w.id + '/settings/pages'), list('/' + w.id + '/budgets'), list('/' + w.id + '/multistep')]).then(function (r) {
      var pages = r[0], budgets = r[1], tests = r[2];
      var out = [el('h1', { text: (isAdmin() ? 'Settings of ' : 'Setup of ') + w.displayName })];
      out.push(el('h2', { text: 'Pages' }));
      if (isAdmin()) out.push(pasteForm(w));
      out.push(pages.length ? table([
        { label: 'Alias', value: function (p) { return p.alias; }, cell: function (p) { return p.alias || ''; } },
        { label: 'URL', value: function (p) { return p.url; }, cell: function (p) { return p.url; } },
        isAdmin() && { label: 'Actions', cell: function (p) { return isAdmin() ? el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete page ' + (p.alias || p.url), text: 'Delete', onclick: confirmThen('Delete the page ' + p.url + ' and its results?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/settings/' + p.id); }, 'Page deleted.').then(render); }) }) : ''; } }
      ], pages) : empty('No page yet' + (isAdmin() ? ': paste their addresses above.' : '.')));
      out.push(el('h2', { text: 'Budgets' }));
      if (isAdmin()) out.push(budgetForm(w));
      out.push(budgets.length ? table([
        { label: 'Metric', cell: function (b) { return b.metric; } },
        { label: 'Rule', cell: function (b) { return (b.operator === 'lt' ? 'below ' : 'above ') + b.value + ' (' + b.device + ')'; } },
        { label: 'Status', cell: function (b) { return statusBadge(b.status); } },
        isAdmin() && { label: 'Actions', cell: function (b) { return isAdmin() ? [el('button', { type: 'button', class: 'secondary', 'aria-label': 'Edit budget ' + b.metric, text: 'Edit', onclick: function () { this.closest('td').replaceChildren(budgetForm(w, b)); } }), ' ',
          el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete budget ' + b.metric, text: 'Delete', onclick: confirmThen('Delete this budget?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/budgets/' + b.id); }, 'Budget deleted.').then(render); }) })] : ''; } }
      ], budgets) : empty('No budget yet.'));
      out.push(el('h2', { text: 'Multistep tests' }));
      if (isAdmin()) out.push(el('details', null, el('summary', { text: 'New multistep test' }), testForm(w)));
      out.push(tests.length ? table([
        { label: 'Test', cell: function (t) { return link('#/w/' + w.id + '/multistep/' + t.id, t.alias); } },
        { label: 'Steps', n: true, cell: function (t) { return String(t.steps.length); } },
        isAdmin() && { label: 'Actions', cell: function (t) { return isAdmin() ? [el('button', { type: 'button', class: 'secondary', 'aria-label': 'Edit test ' + t.alias, text: 'Edit', onclick: function () { this.closest('td').replaceChildren(testForm(w, t)); } }), ' ',
          el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete test ' + t.alias, text: 'Delete', onclick: confirmThen('Delete the test ' + t.alias + ' and its runs?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/multistep/' + t.id); }, 'Test deleted.').then(render); }) })] : ''; } }
      ], tests) : empty('No multistep test yet.'));
      if (isAdmin()) {
        out.push(el('h2', { text: 'Delete the website' }));
        out.push(el('button', { type: 'button', class: 'danger', id: 'delete-website', text: 'Delete ' + w.displayName, onclick: confirmThen('Delete ' + w.displayName + ' with all its pages, results and tests? This cannot be undone.', function () {
          busy(this, function () { return api('DELETE', '/' + w.id); }, 'Website deleted.').then(function () { site = null; go('#/'); });
        }) }));
      }
      return out;
    });
  }
  // pasteForm adds pages from lines "url" or "url alias".
  function pasteForm(w) {
    var ta = el('textarea', { id: 'paste-pages', name: 'pages', placeholder: '/ Home\n/pricing Pricing\n/blog/' });
    var b = el('button', { type: 'submit', text: 'Add pages' });
    return el('form', { 'aria-label': 'Add pages', onsubmit: function (e) {
      e.preventDefault();
      var pages = ta.value.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).map(function (l) {
        var i = l.search(/\s/);
        return i < 0 ? { url: l } : { url: l.slice(0, i), alias: l.slice(i).trim() };
      });
      if (!pages.length) { say('Paste one address per line first.'); return; }
      busy(b, function () { return api('POST', '/' + w.id + '/settings/pages', pages); }, pages.length + ' page(s) added.').then(render);
    } }, el('label', { for: 'paste-pages' }, 'One page per line: its address (path or full URL), then an optional alias'), ta, b);
  }
  var BUDGET_METRICS = ['performance_score', 'accessibility_score', 'best_practices_score', 'seo_score', 'lcp', 'fcp', 'cls', 'tbt', 'ttfb', 'speed_index', 'kb_total', 'cpu_total', 'ux_lcp', 'ux_inp', 'ux_cls', 'ux_fcp', 'ux_ttfb'];
  function budgetForm(w, b) {
    var metric = select('metric', BUDGET_METRICS, b ? b.metric : 'lcp');
    var op = select('operator', [['lt', 'below'], ['gt', 'above']], b ? b.operator : 'lt');
    var value = el('input', { name: 'value', type: 'number', step: 'any', required: true, value: b ? b.value : '' });
    var device = select('device', ['mobile', 'desktop'], b ? b.device : 'mobile');
    var button = el('button', { type: 'submit', text: b ? 'Save budget' : 'Add budget' });
    return el('form', { class: 'row', 'aria-label': b ? 'Edit budget' : 'Add a budget', onsubmit: function (e) {
      e.preventDefault();
      var body = { metric: metric.value, operator: op.value, value: Number(value.value), device: device.value };
      busy(button, function () { return b ? api('PUT', '/' + w.id + '/budgets/' + b.id, body) : api('POST', '/' + w.id + '/budgets', body); }, 'Budget saved.').then(render);
    } }, field('Metric', metric), field('Must stay', op), field('Value', value), field('Device', device), button);
  }
  var STEP_TYPES = ['navigate', 'click', 'type', 'select', 'hover', 'scroll', 'waitForSelector', 'wait'];
  // testForm edits a multistep test: alias, device and an ordered list of steps.
  function testForm(w, t) {
    var alias = el('input', { name: 'alias', required: true, value: t ? t.alias : '' });
    var device = select('device', ['desktop', 'mobile'], t ? t.device : 'desktop');
    var stepsBox = el('ol', { class: 'steps' });
    function addStep(s) {
      s = s || { type: 'navigate', target: '/' };
      var type = select('type', STEP_TYPES, s.type);
      var target = el('input', { name: 'target', value: s.target || '', placeholder: 'URL or CSS selector' });
      var value = el('input', { name: 'value', value: s.value || '', placeholder: 'text, option or ms' });
      var nav = el('input', { type: 'checkbox', name: 'waitForNavigation', checked: s.waitForNavigation });
      var li = el('li', { class: 'row' }, field('Type', type), field('Target', target), field('Value', value), el('label', { class: 'inline' }, nav, 'waits for navigation'));
      li.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Up', 'aria-label': 'Move step up', onclick: function () { if (li.previousSibling) stepsBox.insertBefore(li, li.previousSibling); } }));
      li.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Remove', 'aria-label': 'Remove step', onclick: function () { li.remove(); } }));
      li.read = function () {
        var o = { type: type.value, waitForNavigation: nav.checked };
        if (target.value.trim()) o.target = target.value.trim();
        if (value.value !== '') o.value = value.value;
        return o;
      };
      stepsBox.appendChild(li);
    }
    (t ? t.steps : [null]).forEach(addStep);
    var save = el('button', { type: 'submit', text: t ? 'Save test' : 'Create test' });
    return el('form', { 'aria-label': t ? 'Edit test' : 'New multistep test', onsubmit: function (e) {
      e.preventDefault();
      var body = { alias: alias.value.trim(), device: device.value, steps: Array.prototype.map.call(stepsBox.children, function (li) { return li.read(); }) };
      busy(save, function () { return t ? api('PUT', '/' + w.id + '/multistep/' + t.id, body) : api('POST', '/' + w.id + '/multistep', body); }, 'Test saved.').then(render);
    } }, el('div', { class: 'row' }, field('Name', alias), field('Device', device)), el('h3', { text: 'Steps' }), stepsBox,
      el('div', { class: 'row' }, el('button', { type: 'button', class: 'secondary', text: 'Add a step', onclick: function () { addStep(); } }), save));
  }

  // ---- start ------------------------------------------------------------------------------
  window.addEventListener('hashchange', render);
  if (key()) render(); else signInView();
}());
