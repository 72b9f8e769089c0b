// Unit tests of the hash's parts and the route table (static/routes.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as R from '../static/routes.js';

test('a hash is its path\'s parts and its query, decoded', () => {
  assert.deepEqual(R.parseHash('#/w/abc/page/p1?device=mobile&date=2026-11-27'), { parts: ['w', 'abc', 'page', 'p1'], q: { device: 'mobile', date: '2026-11-27' } });
  assert.deepEqual(R.parseHash(''), { parts: [], q: {} });
  assert.deepEqual(R.parseHash('#/'), { parts: [], q: {} });
  assert.deepEqual(R.parseHash('#/w/abc/rum?group=%2Fcart%3Fx&empty='), { parts: ['w', 'abc', 'rum'], q: { group: '/cart?x', empty: '' } });
});

test('a query keeps the keys with a value, encoded', () => {
  assert.equal(R.withQuery('#/w/a/compare', { page: 'p 1', device: 'mobile', base: '' }), '#/w/a/compare?page=p%201&device=mobile');
  assert.equal(R.withQuery('#/w/a', {}), '#/w/a');
  assert.equal(R.parseHash(R.withQuery('#/w/a/rum', { group: 'a&b=c' })).q.group, 'a&b=c');
});

test('every route names its view and a module to load it from', () => {
  const routes = [R.HOME, ...Object.values(R.ROUTES)];
  assert.equal(routes.length, 11);
  for (const r of routes) {
    assert.match(r.view, /^[a-z]+View$/);
    assert.equal(typeof r.module, 'function');
  }
  assert.ok(R.ROUTES.page.id && R.ROUTES.multistep.id && R.ROUTES.experiments.id && !R.ROUTES.rum.id);
});
