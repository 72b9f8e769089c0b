// openvitals dashboard: the units policy and CSV cells, pure functions of their arguments. A
// classic script in the dashboard's bundle (window.ovFormat) and a CommonJS module for Node's
// test runner (internal/web/jstest).
(function (F) {
  'use strict';
  // The units policy: numbers in groups of three digits (12,500), sizes in binary units as
  // Lighthouse's and the API's KiB (B, KiB, MiB), percentages to one decimal under 10 and whole
  // above, unitless values (a layout shift) to three decimals under 10.
  function group(v, decimals) { return v.toLocaleString('en', { maximumFractionDigits: decimals || 0 }); }
  // fmtBytes writes a size in bytes.
  function fmtBytes(v) {
    if (typeof v !== 'number' || !isFinite(v)) return '–';
    var a = Math.abs(v);
    if (a < 1024) return group(v) + ' B';
    if (a < 1048576) return group(v / 1024, a < 10240 ? 1 : 0) + ' KiB';
    return group(v / 1048576, 1) + ' MiB';
  }
  // fmtPct writes a percentage, with its sign when signed.
  function fmtPct(p, signed) {
    if (typeof p !== 'number' || !isFinite(p)) return '–';
    var s = group(Math.abs(p), Math.abs(p) < 10 ? 1 : 0);
    return (signed && s !== '0' ? (p > 0 ? '+' : '−') : p < 0 && s !== '0' ? '−' : '') + s + ' %';
  }
  function fmt(v, unit) {
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
  function axisValue(v, unit) {
    if (unit === 'B' || unit === 'KiB') return fmt(v, unit);
    if (unit === '%') return group(Math.round(v)) + ' %';
    if (unit === '' || unit === 'cls') return fmt(v, '');
    return group(Math.round(v));
  }

  // csvCell is a value as a CSV cell: quoted when it holds a quote, comma or line break.
  function csvCell(v) {
    if (v === null || v === undefined) return '';
    v = String(v);
    return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  }

  F.fmtBytes = fmtBytes; F.fmtPct = fmtPct; F.fmt = fmt; F.axisValue = axisValue; F.csvCell = csvCell;
}(typeof module === 'object' && module.exports ? module.exports : (window.ovFormat = {})));
