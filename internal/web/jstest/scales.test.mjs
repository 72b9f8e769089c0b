// Unit tests of the charts' scales and the sparklines' geometry (static/scales.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../static/scales.js';

test('the y axis starts at zero, tops 8 % above the data, at yTop at least, yMax when given', () => {
  assert.deepEqual(S.yRange(1000), [0, 1080]);
  assert.deepEqual(S.yRange(1000, 100), [0, 100]);
  assert.deepEqual(S.yRange(1000, undefined, 4000), [0, 4000]);
  assert.deepEqual(S.yRange(0), [0, 1], 'a chart of zeros still has a scale');
});

test('categories have half a step on each side; about six are labelled', () => {
  assert.deepEqual(S.categoryRange(0, 4), [-0.5, 4.5]);
  assert.equal(S.labelEvery(4), 1);
  assert.equal(S.labelEvery(6), 1);
  assert.equal(S.labelEvery(30), 5);
  assert.equal(S.labelEvery(0), 1);
});

test('a sparkline spans its box, its lowest value at the bottom', () => {
  assert.equal(S.sparkPoints([1, 3]), '1.0,22.0 89.0,2.0');
  assert.equal(S.sparkPoints([5, null, 5, 'x', 5]), '1.0,22.0 45.0,22.0 89.0,22.0', 'a flat line; gaps skipped');
  assert.equal(S.sparkPoints([7]), null);
  assert.equal(S.sparkPoints([]), null);
});
