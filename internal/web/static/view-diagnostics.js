// openvitals dashboard: why a day's audit of a page was slow, from Lighthouse's own load:
// filmstrip, waterfall, LCP element and phases, layout shifts, main thread and third parties.
import { el, empty, say } from './dom.js';
import { api, get, keyedImage } from './api.js';
import { fmt, fmtBytes } from './format.js';
import { PHASES } from './metrics.js';
import { table } from './table.js';

var bytes = fmtBytes;

var REQUEST_PHASES = [['queue', 'Queued'], ['dns', 'DNS'], ['connect', 'Connect (TLS included)'], ['tls', 'TLS'], ['wait', 'Waiting (TTFB)'], ['download', 'Download']];
var LCP_PHASES; // [field, name] of each phase, once the names are in
var MAX_ROWS = 80; // the waterfall's requests drawn; the table below lists them all

function ms(v) { return typeof v === 'number' ? fmt(v, 'ms') : '–'; }
function shortURL(u) {
  try { var x = new URL(u); return (x.pathname + x.search).slice(0, 80) || x.host; } catch (e) { return String(u).slice(0, 80); }
}
function host(u) { try { return new URL(u).host; } catch (e) { return ''; } }

// diagnosticsPanel answers the panel of a page's diagnostics on a device, of the latest audit
// or of date (yyyy-MM-dd): a node, filled when the diagnostics arrive.
export function diagnosticsPanel(w, pageID, device, date) {
  var holder = el('section', { id: 'diagnostics', 'aria-labelledby': 'diagnostics-title' },
    el('h2', { id: 'diagnostics-title', text: 'Why this load was slow' }), el('p', { class: 'muted', text: 'Loading the diagnostics…' }));
  var q = '?device=' + device + (date ? '&date=' + date : '');
  get('/' + w.id + '/pages/' + pageID + '/diagnostics' + q).then(function (r) {
    holder.removeChild(holder.lastChild);
    holder.appendChild(body(r));
  }, function (err) {
    holder.removeChild(holder.lastChild);
    holder.appendChild(empty(err.status === 404 ? 'Diagnostics appear with the next audit of this page on ' + device + '.' : err.message));
  });
  return holder;
}

function body(r) {
  var d = r.diagnostics;
  var har = el('button', { type: 'button', class: 'secondary', text: 'Download the HAR' });
  har.addEventListener('click', function () {
    api('GET', r.har, undefined, true).then(function (res) { return res.blob(); }).then(function (b) {
      var a = el('a', { href: URL.createObjectURL(b), download: 'openvitals-' + r.date + '-' + r.device + '.har' });
      document.body.appendChild(a);
      a.click();
      a.remove();
    }, function (err) { say(err.message); });
  });
  // In simulated mode the pictures and the numbers are of two different loads: say so once,
  // above the filmstrip and the waterfall.
  var simulated = r.method === 'simulated'
    ? el('p', { class: 'method-note', text: 'Simulated throttling: the filmstrip and the waterfall show the fast load Lighthouse observed; the page\'s metrics are its simulation of a slow one, so they do not match these pictures. Applied throttling (the test profile\'s method) measures and pictures one load.' })
    : null;
  return el('div', null,
    el('p', { class: 'muted' }, 'Audit of ' + r.date + ' on ' + r.device + ' with ' + (r.method || 'simulated') + ' throttling, the median run (Lighthouse ' + d.lighthouseVersion + '), as the browser loaded ' + d.finalUrl + '. ', har),
    simulated,
    el('h3', { text: 'Filmstrip' }), filmstrip(d),
    el('h3', { text: 'Largest contentful paint' }), lcp(d.lcp),
    el('h3', { text: 'Requests' }),
    r.method === 'simulated' ? el('p', { class: 'muted', text: 'As the fast load made them: simulated throttling models their slow timing only in the metrics.' }) : null,
    waterfall(d),
    el('h3', { text: 'Layout shifts' }), shifts(d.shifts || []),
    el('h3', { text: 'Main thread' }), mainThread(d),
    el('h3', { text: 'Third parties' }), thirdParties(d.thirdParties || []));
}

// filmstrip shows the frames with their times; the first frame at or after each mark says so.
function filmstrip(d) {
  var frames = d.filmstrip || [];
  if (!frames.length) return empty('Lighthouse kept no frames of this load.');
  var marks = [['FCP', d.marks.fcp], ['LCP', d.marks.lcp], ['Largest shift', d.marks.largestShift], ['Load', d.marks.load]];
  var tags = frames.map(function () { return []; });
  // A mark goes on the frame on screen at its time: the latest frame at or before it. A
  // screenshot's time may come a few ms before the paint's (FCP at 165 ms, its frame at 164),
  // hence the 10 ms of slack.
  marks.forEach(function (m) {
    if (typeof m[1] !== 'number') return;
    var shown = 0;
    for (var i = 0; i < frames.length; i++) if (frames[i].time <= m[1] + 10) shown = i;
    tags[shown].push(m[0] + ' ' + ms(m[1]));
  });
  var list = el('ol', { class: 'filmstrip scroll', tabindex: '0', 'aria-label': 'Frames of the load' }, frames.map(function (f, i) {
    return el('li', { class: tags[i].length ? 'marked' : null },
      keyedImage(f.url, { class: 'frame-img', width: '120', height: '90', alt: 'The page at ' + ms(f.time) }),
      el('span', { text: ms(f.time) }),
      typeof f.complete === 'number' ? el('span', { class: 'muted', text: Math.round(f.complete) + ' % complete' }) : null,
      tags[i].map(function (t) { return el('span', { class: 'badge', text: t }); }));
  }));
  // Frames from the trace carry their completeness; older runs have Lighthouse's ten
  // thumbnails at fixed times, which may miss a change between two of them.
  var note = typeof frames[0].complete === 'number'
    ? 'Every change the browser painted, from navigation start' + (typeof d.speedIndex === 'number' ? '; Speed Index of these frames ' + ms(d.speedIndex) : '') + '.'
    : 'Lighthouse\'s thumbnails at fixed times: a change between two of them is not shown.';
  return el('div', null, el('p', { class: 'muted', text: note }), list);
}

function lcp(l) {
  if (!l) return empty('No largest contentful paint was recorded.');
  LCP_PHASES = LCP_PHASES || Object.keys(PHASES).map(function (f) { return [f, PHASES[f].label]; });
  var total = LCP_PHASES.reduce(function (s, p) { return s + (l.phases[p[0]] || 0); }, 0) || 1;
  var x = 0;
  var bar = el('svg:svg', { class: 'phasebar', viewBox: '0 0 1000 20', preserveAspectRatio: 'none', 'aria-hidden': 'true' },
    LCP_PHASES.map(function (p, i) {
      var v = l.phases[p[0]] || 0, wpx = v / total * 1000;
      var r = el('svg:rect', { x: String(x), y: '0', width: String(Math.max(0, wpx)), height: '20', class: 'ph' + i });
      x += wpx;
      return r;
    }));
  return el('div', { class: 'card' },
    el('p', null, el('b', { text: ms(l.time) }), ' — ', l.label || l.selector || 'an element', l.imageUrl ? el('span', { class: 'muted', text: ' (image ' + shortURL(l.imageUrl) + ')' }) : null),
    l.snippet ? el('p', null, el('code', { text: l.snippet })) : null,
    l.selector ? el('p', { class: 'muted' }, 'Selector: ', el('code', { text: l.selector })) : null,
    bar,
    table([{ label: 'Phase', cell: function (p) { return el('td', null, el('span', { class: 'key ph' + LCP_PHASES.indexOf(p) }), ' ' + p[1]); } },
      { label: 'Time', n: true, cell: function (p) { return el('td', { class: 'n', text: typeof l.phases[p[0]] === 'number' ? ms(l.phases[p[0]]) : 'none (text)' }); } }],
    LCP_PHASES, 'Phases of the largest contentful paint, which add up to its time'));
}

// waterfall draws the requests' bars with their phases (an SVG hidden from screen readers),
// and lists them in a sortable table underneath.
// TYPES colour the waterfall's bars by what a request fetched.
var TYPES = [['Document', 'doc'], ['Stylesheet', 'css'], ['Script', 'js'], ['Image', 'img'], ['Font', 'font'], ['XHR', 'xhr'], ['Fetch', 'xhr'], ['Media', 'img']];
function typeClass(t) {
  for (var i = 0; i < TYPES.length; i++) if (TYPES[i][0] === t) return TYPES[i][1];
  return 'other';
}
// middle shortens a label in its middle, so that both its host and its file stay readable.
function middle(s, n) { return s.length <= n ? s : s.slice(0, Math.ceil(n / 2) - 1) + '…' + s.slice(s.length - Math.floor(n / 2)); }

// segments are a request's phases in order, TLS apart from the connection it ends (the
// connection's time includes it), each [class, label, start, duration].
function segments(q) {
  var out = [], x = q.start;
  var add = function (cls, label, v) { if (typeof v === 'number' && v > 0) { out.push([cls, label, x, v]); x += v; } };
  add('queue', 'Queued', q.queue);
  add('dns', 'DNS', q.dns);
  var tls = typeof q.tls === 'number' && q.tls > 0 ? q.tls : 0;
  add('connect', 'Connect', typeof q.connect === 'number' ? q.connect - tls : undefined);
  add('tls', 'TLS', tls);
  add('wait', 'Waiting (TTFB)', q.wait);
  add('download', 'Download', q.download);
  if (!out.length) out.push(['download', 'Loading', q.start, Math.max(0, q.end - q.start)]);
  return out;
}

// at positions a node on the waterfall's time axis: left (and width) in % of the axis. Set
// through the CSS object model: the dashboard's CSP refuses style attributes.
function at(node, left, width) {
  node.style.left = left;
  if (width) node.style.width = width;
  return node;
}

// waterfall draws every request as a labelled row: its host and path (shortened; the whole
// URL on hover and focus), its phases coloured by its type, render-blocking and LCP resource
// marked, with lines at FCP, LCP and the load event.
function waterfall(d) {
  var reqs = d.requests || [];
  if (!reqs.length) return empty('No request was recorded.');
  var marks = [['fcp', 'FCP', d.marks.fcp], ['lcp', 'LCP', d.marks.lcp], ['load', 'Load', d.marks.load]].filter(function (m) { return typeof m[2] === 'number'; });
  var end = reqs.reduce(function (m, q) { return Math.max(m, q.end); }, marks.reduce(function (m, k) { return Math.max(m, k[2]); }, 0)) * 1.02 || 1;
  var pct = function (t) { return (t / end * 100).toFixed(3) + '%'; };
  var docHost = host(d.finalUrl);
  var shown = reqs.slice(0, MAX_ROWS);
  var step = [50, 100, 200, 250, 500, 1000, 2000, 5000, 10000].filter(function (s) { return end / s <= 12; })[0] || 20000;
  var ticks = [];
  for (var t = 0; t <= end; t += step) ticks.push(at(el('span', { class: 'wf-tick', text: ms(t) }), pct(t)));
  var rows = shown.map(function (q) {
    var h = host(q.url), path = shortURL(q.url);
    var label = (h && h !== docHost ? h : '') + path;
    var badges = [q.lcp ? 'LCP' : '', q.renderBlocking ? 'blocking' : ''].filter(Boolean);
    var segs = segments(q);
    var said = q.url + ': ' + (q.type || 'request') + ', ' + ms(q.start) + ' to ' + ms(q.end) + ' (' + segs.map(function (s) { return s[1] + ' ' + ms(s[3]); }).join(', ') + ')' +
      (badges.length ? ', ' + badges.map(function (b) { return b === 'LCP' ? 'the LCP resource' : 'render-blocking'; }).join(', ') : '');
    return el('li', { class: 'wf-row t-' + typeClass(q.type) + (q.lcp ? ' lcp' : '') + (q.renderBlocking ? ' blocking' : '') + (q.document ? ' doc' : '') },
      el('span', { class: 'wf-label', tabindex: '0', role: 'group', title: q.url, 'aria-label': said },
        el('span', { class: 'short', 'aria-hidden': 'true', text: middle(label, 42) }),
        el('span', { class: 'full', 'aria-hidden': 'true', text: q.url }),
        badges.map(function (b) { return el('span', { class: 'badge wf-badge ' + (b === 'LCP' ? 'lcp' : 'blocking'), 'aria-hidden': 'true', text: b }); })),
      el('span', { class: 'wf-bars', 'aria-hidden': 'true' }, segs.map(function (s) {
        return at(el('span', { class: 'wf-seg ' + s[0] }), pct(s[2]), 'max(1px, ' + pct(s[3]) + ')');
      })));
  });
  var lines = el('div', { class: 'wf-marks', 'aria-hidden': 'true' }, marks.map(function (m) {
    // A line near the right edge has its label on its left, inside the chart.
    return at(el('span', { class: 'wf-line m-' + m[0] + (m[2] / end > 0.8 ? ' flip' : '') }, el('span', { text: m[1] + ' ' + ms(m[2]) })), pct(m[2]));
  }));
  var legend = el('p', { class: 'legend muted' },
    [['doc', 'Document'], ['css', 'Stylesheet'], ['js', 'Script'], ['img', 'Image'], ['font', 'Font'], ['xhr', 'XHR / fetch'], ['other', 'Other']].map(function (k) {
      return el('span', { class: 't-' + k[0] }, el('span', { class: 'key type' }), ' ' + k[1] + ' ');
    }),
    ' — phases: ', [['queue', 'queued'], ['dns', 'DNS'], ['connect', 'connect'], ['tls', 'TLS'], ['wait', 'waiting (light)'], ['download', 'download (dark)']].map(function (k) {
      return el('span', { class: 't-other' }, el('span', { class: 'key wf-seg ' + k[0] }), ' ' + k[1] + ' ');
    }),
    ' Lines: ' + marks.map(function (m) { return m[1]; }).join(', ') + '. ' + (reqs.length > MAX_ROWS ? 'The first ' + MAX_ROWS + ' of ' + reqs.length + ' requests are drawn; the table lists all.' : ''));
  var chart = el('div', { class: 'wfall', role: 'group', 'aria-label': 'Waterfall of ' + reqs.length + ' requests, 0 to ' + ms(end) },
    el('div', { class: 'wf-axis', 'aria-hidden': 'true' }, el('span', { class: 'wf-label' }), el('span', { class: 'wf-bars' }, ticks)),
    el('ol', { class: 'wf-rows' }, rows), lines);
  var flags = function (q) {
    return [q.document ? 'main document' : '', q.lcp ? 'LCP resource' : '', q.renderBlocking ? 'render-blocking' : ''].filter(Boolean).join(', ');
  };
  return el('div', null, legend,
    el('div', { class: 'wf-wrap scroll' }, chart),
    el('details', { class: 'wf-table' }, el('summary', { text: 'Requests as a table (' + reqs.length + ')' }),
      table([
        { label: 'URL', value: function (q) { return q.url; }, cell: function (q) { return el('td', { class: 'url' }, el('span', { title: q.url, text: shortURL(q.url) }), flags(q) ? el('span', { class: 'badge', text: flags(q) }) : null); } },
        { label: 'Start', n: true, value: function (q) { return q.start; }, cell: function (q) { return el('td', { class: 'n', text: ms(q.start) }); } },
        { label: 'Duration', n: true, value: function (q) { return q.end - q.start; }, cell: function (q) { return el('td', { class: 'n', text: ms(q.end - q.start) }); } },
        { label: 'Phases', cell: function (q) { return el('td', { text: REQUEST_PHASES.filter(function (p) { return typeof q[p[0]] === 'number'; }).map(function (p) { return p[1] + ' ' + ms(q[p[0]]); }).join(', ') || '–' }); } },
        { label: 'Size', n: true, value: function (q) { return q.transferSize; }, cell: function (q) { return el('td', { class: 'n', text: bytes(q.transferSize) }); } },
        { label: 'Type', value: function (q) { return q.type; }, cell: function (q) { return el('td', { text: q.type + (q.status && q.status !== 200 ? ' (' + q.status + ')' : '') }); } },
        { label: 'Party', value: function (q) { return q.entity || host(q.url); }, cell: function (q) { return el('td', { text: (q.thirdParty ? 'third: ' : 'first: ') + (q.entity || host(q.url)) }); } }
      ], reqs, 'Every request of the load')));
}

function shifts(list) {
  if (!list.length) return empty('Nothing shifted the layout.');
  return table([
    { label: 'Time', n: true, value: function (s) { return s.time; }, cell: function (s) { return el('td', { class: 'n', text: s.time >= 0 ? ms(s.time) : '–' }); } },
    { label: 'Score', n: true, value: function (s) { return s.score; }, cell: function (s) { return el('td', { class: 'n', text: fmt(s.score, 'cls') }); } },
    { label: 'Moved', cell: function (s) { return el('td', null, (s.elements || []).map(function (e) { return el('div', null, el('code', { text: e.selector || e.snippet }), e.label ? ' ' + e.label : ''); })); } },
    { label: 'Likely causes', cell: function (s) { return el('td', null, (s.causes || []).map(function (c) { return el('div', null, el('span', { class: 'badge', text: c.kind }), c.url ? ' ' + shortURL(c.url) : ''); })); } }
  ], list, 'Layout shifts, largest first');
}

function mainThread(d) {
  var work = d.mainThread || [], tasks = d.longTasks || [];
  return el('div', { class: 'cols' },
    work.length ? table([
      { label: 'Work', cell: function (c) { return el('td', { text: c.label }); } },
      { label: 'Time', n: true, cell: function (c) { return el('td', { class: 'n', text: ms(c.duration) }); } }
    ], work, 'Main-thread time by kind of work') : empty('No main-thread work was recorded.'),
    tasks.length ? table([
      { label: 'Long task of', cell: function (t) { return el('td', { class: 'url', text: t.url ? shortURL(t.url) : 'unattributed' }); } },
      { label: 'Start', n: true, cell: function (t) { return el('td', { class: 'n', text: ms(t.start) }); } },
      { label: 'Duration', n: true, cell: function (t) { return el('td', { class: 'n', text: ms(t.duration) }); } }
    ], tasks, 'Long tasks (50 ms or more)') : empty('No long task.'));
}

function thirdParties(list) {
  if (!list.length) return empty('No third party was used.');
  return table([
    { label: 'Entity', value: function (p) { return p.entity; }, cell: function (p) { return el('td', { text: p.entity }); } },
    { label: 'Requests', n: true, value: function (p) { return p.requests; }, cell: function (p) { return el('td', { class: 'n', text: String(p.requests) }); } },
    { label: 'Transfer', n: true, value: function (p) { return p.transferSize; }, cell: function (p) { return el('td', { class: 'n', text: bytes(p.transferSize) }); } },
    { label: 'Main thread', n: true, value: function (p) { return p.mainThreadTime; }, cell: function (p) { return el('td', { class: 'n', text: ms(p.mainThreadTime) }); } },
    { label: 'Blocking', n: true, value: function (p) { return p.blockingTime; }, cell: function (p) { return el('td', { class: 'n', text: ms(p.blockingTime) }); } }
  ], list, 'Third parties by main-thread time');
}
