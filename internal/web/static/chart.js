// openvitals dashboard: charts (uPlot, the classic script the page loads before this one, as
// the global uPlot) and sparklines.
import { el, clear } from './dom.js';
import { fmt, axisValue, day, unix } from './format.js';
import { table } from './table.js';
import { yRange, categoryRange, labelEvery, sparkPoints } from './scales.js';

var charts = []; // uPlot instances of the current view, resized with the window

// destroyCharts ends the current view's charts: a view is leaving.
export function destroyCharts() {
  charts.forEach(function (c) { if (c.u) c.u.destroy(); });
  charts = [];
}

// sparkline is a small line of values (an SVG named label), a dot for one, a dash for none.
export function sparkline(values, label) {
  var pts = values.filter(function (v) { return typeof v === 'number'; });
  var svg = el('svg:svg', { class: 'spark', viewBox: '0 0 90 24', role: 'img', 'aria-label': label });
  if (!pts.length) return el('span', { class: 'muted', text: '–' });
  if (pts.length === 1) { svg.appendChild(el('svg:circle', { cx: '45', cy: '12', r: '2.5', class: 'dot' })); return svg; }
  svg.appendChild(el('svg:polyline', { points: sparkPoints(pts) }));
  return svg;
}

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
export function chart(spec) {
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
      scales: { x: spec.categories ? { time: false, range: function (u, lo, hi) { return categoryRange(lo, hi); } }
        : { time: true },
        y: { range: function (u, lo, hi) { return yRange(hi, spec.yMax, spec.yTop); } } },
      axes: [
        { stroke: pal.muted, grid: { stroke: pal.line, width: 1 }, ticks: { stroke: pal.line },
          // Many categories: every few are labelled, so that labels do not run into each other.
          values: spec.categories ? function (u, vals) { var every = labelEvery(spec.categories.length); return vals.map(function (v) { return Number.isInteger(v) && v % every === 0 && spec.categories[v] !== undefined ? String(spec.categories[v]).slice(0, 18) : ''; }); } : undefined,
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
