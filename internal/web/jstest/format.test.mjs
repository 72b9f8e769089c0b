// Unit tests of the dashboard's units policy, dates and CSV (static/format.js, the module the
// page runs), with Node's own test runner (go test ./internal/web runs them as
// TestJavaScriptUnits).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as F from '../static/format.js';

test('numbers are grouped in thousands, with their unit', () => {
  assert.equal(F.fmt(12500, 'ms'), '12,500 ms');
  assert.equal(F.fmt(1234567.4, 'ms'), '1,234,567 ms');
  assert.equal(F.fmt(92, 'score'), '92');
  assert.equal(F.fmt(null, 'ms'), '–');
  assert.equal(F.fmt('n/a', 'ms'), 'n/a');
});

test('unitless values show three decimals at most under 10, whole above', () => {
  assert.equal(F.fmt(0.05, ''), '0.05');
  assert.equal(F.fmt(0.1234, ''), '0.123');
  assert.equal(F.fmt(0, ''), '0');
  assert.equal(F.fmt(2, ''), '2');
  assert.equal(F.fmt(12345.6, ''), '12,346');
});

test('sizes are in binary units, one system everywhere', () => {
  assert.equal(F.fmtBytes(512), '512 B');
  assert.equal(F.fmtBytes(7106), '6.9 KiB');
  assert.equal(F.fmtBytes(705 * 1024), '705 KiB');
  assert.equal(F.fmtBytes(1.4 * 1048576), '1.4 MiB');
  assert.equal(F.fmt(679.2, 'KiB'), '679 KiB');
  assert.equal(F.fmt(705 * 1024, 'B'), F.fmt(705, 'KiB'));
  assert.equal(F.fmtBytes(undefined), '–');
});

test('percentages: a decimal under 10, whole and grouped above, signed when asked', () => {
  assert.equal(F.fmtPct(9688.5, true), '+9,689 %');
  assert.equal(F.fmtPct(4.24, true), '+4.2 %');
  assert.equal(F.fmtPct(-23.4, true), '−23 %');
  assert.equal(F.fmtPct(0.01, true), '0 %');
  assert.equal(F.fmtPct(78), '78 %');
  assert.equal(F.fmt(78, '%'), '78 %');
});

test('axis ticks: sizes and percentages as in the tables', () => {
  assert.equal(F.axisValue(2048, 'B'), '2 KiB');
  assert.equal(F.axisValue(3 * 1048576, 'B'), '3 MiB');
  assert.equal(F.axisValue(40, '%'), '40 %');
  assert.equal(F.axisValue(2500, 'ms'), '2,500');
  assert.equal(F.axisValue(0.25, ''), '0.25');
});

test('days are the API\'s, in UTC', () => {
  assert.equal(F.day('2026-11-27T06:30:00Z'), '2026-11-27');
  assert.equal(F.day(null), '');
  assert.equal(F.ymd(new Date('2026-03-01T23:59:00Z')), '20260301');
  assert.equal(F.range(7, new Date('2026-03-02T10:00:00Z')), '20260224-20260302');
  assert.equal(F.range(1, new Date('2026-03-02T10:00:00Z')), '20260302-20260302');
  assert.equal(F.unix('2026-01-01'), 1767225600);
  assert.equal(F.unix('2026-01-01T00:01:00Z'), 1767225660);
  assert.equal(F.when('2026-11-27T06:30:00Z'), '27 Nov 2026, 06:30 UTC');
  assert.equal(F.when(''), '');
});

test('CSV cells quote what needs it and leave numbers raw', () => {
  assert.equal(F.csvCell(9688.5), '9688.5');
  assert.equal(F.csvCell('a,b'), '"a,b"');
  assert.equal(F.csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(F.csvCell('two\nlines'), '"two\nlines"');
  assert.equal(F.csvCell(null), '');
  assert.equal(F.csvCell(0), '0');
});

test('a CSV document: the header with units, quoted cells, CRLF after every line', () => {
  assert.equal(F.csvHeader('LCP', 'ms'), 'LCP (ms)');
  assert.equal(F.csvHeader('Page', ''), 'Page');
  const doc = F.csv([[F.csvHeader('Page', ''), F.csvHeader('LCP', 'ms')], ['/a,b', 1800.5], ['say "hi"', null]]);
  assert.equal(doc, 'Page,LCP (ms)\r\n"/a,b",1800.5\r\n"say ""hi""",\r\n');
  assert.equal(F.csv([['only']]), 'only\r\n');
});
