// openvitals dashboard: the units policy, dates and CSV, pure functions of their arguments (no
// DOM), unit-tested with Node's test runner (internal/web/jstest).

// The units policy: numbers in groups of three digits (12,500), sizes in binary units as
// Lighthouse's and the API's KiB (B, KiB, MiB), percentages to one decimal under 10 and whole
// above, unitless values (a layout shift) to three decimals under 10.
function group(v, decimals) { return v.toLocaleString('en', { maximumFractionDigits: decimals || 0 }); }

// fmtBytes writes a size in bytes.
export function fmtBytes(v) {
  if (typeof v !== 'number' || !isFinite(v)) return '–';
  var a = Math.abs(v);
  if (a < 1024) return group(v) + ' B';
  if (a < 1048576) return group(v / 1024, a < 10240 ? 1 : 0) + ' KiB';
  return group(v / 1048576, 1) + ' MiB';
}

// fmtPct writes a percentage, with its sign when signed.
export function fmtPct(p, signed) {
  if (typeof p !== 'number' || !isFinite(p)) return '–';
  var s = group(Math.abs(p), Math.abs(p) < 10 ? 1 : 0);
  return (signed && s !== '0' ? (p > 0 ? '+' : '−') : p < 0 && s !== '0' ? '−' : '') + s + ' %';
}

// fmt writes a value in its unit ('' or 'cls': unitless; 'score': a bare number).
export function fmt(v, unit) {
  if (v === null || v === undefined || v === '') return '–';
  if (typeof v !== 'number') return String(v);
  if (unit === 'B') return fmtBytes(v);
  if (unit === 'KiB') return fmtBytes(v * 1024);
  if (unit === '%') return fmtPct(v);
  if (unit === '' || unit === 'cls') return Math.abs(v) < 10 ? v.toFixed(3).replace(/\.?0+$/, '') || '0' : group(Math.round(v));
  var s = group(Math.round(v));
  return unit && unit !== 'score' ? s + ' ' + unit : s;
}

// axisValue is a tick's text: sizes in binary units, percentages, others as grouped numbers.
export function axisValue(v, unit) {
  if (unit === 'B' || unit === 'KiB') return fmt(v, unit);
  if (unit === '%') return group(Math.round(v)) + ' %';
  if (unit === '' || unit === 'cls') return fmt(v, '');
  return group(Math.round(v));
}

// ---- dates ------------------------------------------------------------------------------
// day is the yyyy-MM-dd of a date or timestamp in the API's form ('' for none).
export function day(s) { return s ? String(s).slice(0, 10) : ''; }
// when writes a timestamp for people, in UTC as the API's days are.
export function when(s) { return s ? new Date(s).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC' : ''; }
// ymd is a date as the API's date parameter writes a day (yyyyMMdd, UTC).
export function ymd(d) { return d.toISOString().slice(0, 10).replace(/-/g, ''); }
// range is the date parameter for the n days up to now (today included).
export function range(n, now) {
  var to = now || new Date(), from = new Date(to.getTime() - (n - 1) * 864e5);
  return ymd(from) + '-' + ymd(to);
}
// unix is a day (yyyy-MM-dd: its start, UTC) or a timestamp in seconds, as uPlot's x.
export function unix(date) { var d = String(date); return Date.parse(d.length > 10 ? d : d + 'T00:00:00Z') / 1000; }

// ---- CSV --------------------------------------------------------------------------------
// csvCell is a value as a CSV cell: quoted when it holds a quote, comma or line break.
export function csvCell(v) {
  if (v === null || v === undefined) return '';
  v = String(v);
  return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
}
// csvHeader is a column's header: its label, with the unit of its numbers when it has one.
export function csvHeader(label, unit) { return label + (unit ? ' (' + unit + ')' : ''); }
// csv is a document of rows of values (the header first), each line ended by CRLF (RFC 4180).
export function csv(rows) {
  return rows.map(function (r) { return r.map(csvCell).join(','); }).join('\r\n') + '\r\n';
}
