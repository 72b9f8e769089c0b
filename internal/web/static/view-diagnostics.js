// openvitals dashboard: why a day's audit of a page was slow, from Lighthouse's own load:
// filmstrip, waterfall, LCP element and phases, layout shifts, main thread and third parties.
(function (ov) {
  'use strict';
  var el = ov.el, clear = ov.clear, api = ov.api, get = ov.get, empty = ov.empty, fmt = ov.fmt, table = ov.table;

  var PHASES = [['queue', 'Queued'], ['dns', 'DNS'], ['connect', 'Connect'], ['wait', 'Waiting (TTFB)'], ['download', 'Download']];
  var LCP_PHASES = [['ttfb', 'Time to first byte'], ['loadDelay', 'Load delay'], ['loadDuration', 'Load duration'], ['renderDelay', 'Render delay']];
  var MAX_ROWS = 80; // the waterfall's requests drawn; the table below lists them all

  function ms(v) { return typeof v === 'number' ? fmt(v, 'ms') : '–'; }
  function bytes(v) { return typeof v !== 'number' ? '–' : v < 1024 ? v + ' B' : fmt(v / 1024, 'KB'); }
  function shortURL(u) {
    try { var x = new URL(u); return (x.pathname + x.search).slice(0, 80) || x.host; } catch (e) { return String(u).slice(0, 80); }
  }
  function host(u) { try { return new URL(u).host; } catch (e) { return ''; } }

  // diagnosticsPanel answers the panel of a page's diagnostics on a device, of the latest audit
  // or of date (yyyy-MM-dd): a node, filled when the diagnostics arrive.
  function diagnosticsPanel(w, pageID, device, date) {
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
      }, function (err) { ov.say(err.message); });
    });
    return el('div', null,
      el('p', { class: 'muted' }, 'Audit of ' + r.date + ' on ' + r.device + ', the median run (Lighthouse ' + d.lighthouseVersion + '), as the browser loaded ' + d.finalUrl + '. ', har),
      el('h3', { text: 'Filmstrip' }), filmstrip(d),
      el('h3', { text: 'Largest contentful paint' }), lcp(d.lcp),
      el('h3', { text: 'Requests' }), waterfall(d),
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
    marks.forEach(function (m) {
      if (typeof m[1] !== 'number') return;
      for (var i = 0; i < frames.length; i++) {
        if (frames[i].time >= m[1]) { tags[i].push(m[0] + ' ' + ms(m[1])); return; }
      }
      tags[frames.length - 1].push(m[0] + ' ' + ms(m[1]));
    });
    var list = el('ol', { class: 'filmstrip scroll', tabindex: '0', 'aria-label': 'Frames of the load' }, frames.map(function (f, i) {
      return el('li', { class: tags[i].length ? 'marked' : null },
        ov.keyedImage(f.url, { class: 'frame-img', width: '120', height: '90', alt: 'The page at ' + ms(f.time) }),
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
  function waterfall(d) {
    var reqs = d.requests || [];
    if (!reqs.length) return empty('No request was recorded.');
    // The scale reaches the last request's end or the LCP, whichever is later.
    var end = reqs.reduce(function (m, q) { return Math.max(m, q.end); }, Math.max(d.marks.fcp || 0, d.marks.lcp || 0)) * 1.02 || 1;
    var rowH = 14, W = 1000, shown = reqs.slice(0, MAX_ROWS);
    var sx = function (t) { return t / end * W; };
    var svg = el('svg:svg', { class: 'waterfall', viewBox: '0 0 ' + W + ' ' + (shown.length * rowH + 4), 'aria-hidden': 'true', preserveAspectRatio: 'none' },
      [['fcp', d.marks.fcp], ['lcp', d.marks.lcp]].map(function (m) {
        return typeof m[1] === 'number' ? el('svg:line', { x1: String(sx(m[1])), x2: String(sx(m[1])), y1: '0', y2: String(shown.length * rowH + 4), class: 'mark-' + m[0] }) : null;
      }),
      shown.map(function (q, i) {
        var y = i * rowH + 2, x = q.start, parts = [];
        PHASES.forEach(function (p, k) {
          var v = q[p[0]];
          if (typeof v !== 'number' || v <= 0) return;
          parts.push(el('svg:rect', { x: String(sx(x)), y: String(y), width: String(Math.max(1, sx(v))), height: String(rowH - 3), class: 'ph' + k }));
          x += v;
        });
        if (!parts.length) parts.push(el('svg:rect', { x: String(sx(q.start)), y: String(y), width: String(Math.max(1, sx(q.end - q.start))), height: String(rowH - 3), class: 'ph4' }));
        var cls = 'req' + (q.document ? ' doc' : '') + (q.lcp ? ' lcp' : '') + (q.renderBlocking ? ' blocking' : '') + (q.thirdParty ? ' third' : '');
        return el('svg:g', { class: cls }, parts);
      }));
    var flags = function (q) {
      return [q.document ? 'main document' : '', q.lcp ? 'LCP resource' : '', q.renderBlocking ? 'render-blocking' : ''].filter(Boolean).join(', ');
    };
    return el('div', null,
      el('p', { class: 'legend muted' }, PHASES.map(function (p, k) { return el('span', null, el('span', { class: 'key ph' + k }), ' ' + p[1] + ' '); }),
        ' Lines: FCP (green) and LCP (red); the scale runs from 0 to ' + ms(end) + '. ', reqs.length > MAX_ROWS ? 'The first ' + MAX_ROWS + ' of ' + reqs.length + ' requests are drawn; the table lists all.' : ''),
      el('div', { class: 'wf-wrap scroll' }, svg),
      el('details', { class: 'wf-table' }, el('summary', { text: 'Requests as a table (' + reqs.length + ')' }),
        table([
          { label: 'URL', value: function (q) { return q.url; }, cell: function (q) { return el('td', { class: 'url' }, el('span', { title: q.url, text: shortURL(q.url) }), flags(q) ? el('span', { class: 'badge', text: flags(q) }) : null); } },
          { label: 'Start', n: true, value: function (q) { return q.start; }, cell: function (q) { return el('td', { class: 'n', text: ms(q.start) }); } },
          { label: 'Duration', n: true, value: function (q) { return q.end - q.start; }, cell: function (q) { return el('td', { class: 'n', text: ms(q.end - q.start) }); } },
          { label: 'Phases', cell: function (q) { return el('td', { text: PHASES.filter(function (p) { return typeof q[p[0]] === 'number'; }).map(function (p) { return p[1] + ' ' + ms(q[p[0]]); }).join(', ') || '–' }); } },
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

  ov.diagnosticsPanel = diagnosticsPanel;
}(window.ov));
