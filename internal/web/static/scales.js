// openvitals dashboard: the charts' scales and the sparklines' geometry, pure functions of their
// arguments (no DOM, no uPlot), unit-tested with Node's test runner (internal/web/jstest).

// yRange is a chart's y scale: every metric here is non-negative, so it starts at zero, so that
// a change looks as big as it is. Its top is yMax when given (100 for a score or percent), else
// 8 % above the highest value and at least yTop (as where poor begins), never 0.
export function yRange(hi, yMax, yTop) { return [0, yMax || Math.max(hi * 1.08, yTop || 0) || 1]; }

// categoryRange is the x scale of bars over n categories at 0..n-1: half a step on each side.
export function categoryRange(lo, hi) { return [lo - 0.5, hi + 0.5]; }

// labelEvery is how many categories apart the x axis labels them (about six labels), so that
// labels do not run into each other.
export function labelEvery(n) { return Math.max(1, Math.ceil(n / 6)); }

// sparkPoints are the points of a sparkline of values in a 90×24 box (1 px margins), lowest
// at the bottom: a polyline's "x,y x,y…" for two values or more, null for fewer (values that
// are not numbers are skipped).
export function sparkPoints(values) {
  var pts = values.filter(function (v) { return typeof v === 'number'; });
  if (pts.length < 2) return null;
  var lo = Math.min.apply(null, pts), hi = Math.max.apply(null, pts), span = hi - lo || 1;
  return pts.map(function (v, i) { return (i * 88 / (pts.length - 1) + 1).toFixed(1) + ',' + (22 - (v - lo) * 20 / span).toFixed(1); }).join(' ');
}
