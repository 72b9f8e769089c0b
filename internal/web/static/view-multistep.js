// openvitals dashboard: multistep tests and their runs.
import { el, empty, say, statusBadge } from './dom.js';
import { api, ApiError, list } from './api.js';
import { fmt, when } from './format.js';
import { metricCell, table } from './table.js';
import { chart, sparkline } from './chart.js';
import { busy } from './forms.js';
import { withQuery } from './routes.js';
import { isAdmin, link, load, render } from './app.js';

// ---- multistep --------------------------------------------------------------------------
// multistepView is the website's tests, or the one of testID.
export function multistepView(w, testID) {
  if (testID) return testView(w, testID);
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
    ], tests, null, { stack: true }));
    return out;
  });
}
export function testView(w, testID) {
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
      chart({ title: 'Success rate by day (%, 0–100)', x: rates.map(function (s) { return s.date; }), xRange: fortnight, yMax: 100, bars: true, series: [{ label: 'Success rate', values: rates.map(function (s) { return s.rate; }), unit: '%' }] }),
      chart({ title: 'Completed runs (ms)', x: done.map(function (x) { return x.created; }), xRange: fortnight, sync: 'runs', series: [
        { label: 'Duration', values: done.map(function (x) { return x.duration; }), unit: 'ms' },
        { label: 'TBT', values: done.map(function (x) { return x.tbt; }), unit: 'ms' },
        { label: 'INP', values: done.map(function (x) { return x.inp; }), unit: 'ms' }] })));
    // The routes the newest run with any changed to in a single-page app, each with its
    // lab vitals and a link to the same route's real users (its monitored page, else its
    // page group, soft navigations only).
    var routed = runs.filter(function (x) { return x.softNavigations && x.softNavigations.length; })[0];
    if (routed) {
      var pathOf = function (u) { try { return new URL(u).pathname; } catch (e) { return u; } };
      out.push(el('h2', { text: 'Single-page app routes (run of ' + when(routed.created) + ')' }), el('div', { id: 'run-routes' }, table([
        { label: 'Step', n: true, value: function (x) { return x.step; }, cell: function (x) { var s = t.steps[x.step]; return (x.step + 1) + (s ? ' (' + s.type + ' ' + (s.target || '') + ')' : ''); } },
        { label: 'Route', value: function (x) { return pathOf(x.url); }, cell: function (x) { return el('code', { text: pathOf(x.url) }); } },
        { label: 'LCP', n: true, unit: 'ms', value: function (x) { return x.lcp; }, cell: function (x) { return metricCell('lcp', x.lcp); } },
        { label: 'LCP element', cell: function (x) { return x.lcpElement ? el('code', { text: x.lcpElement }) : '–'; } },
        { label: 'CLS', n: true, unit: '', value: function (x) { return x.cls; }, cell: function (x) { return metricCell('cls', x.cls); } },
        { label: 'INP', n: true, unit: 'ms', value: function (x) { return x.inp; }, cell: function (x) { return metricCell('inp', x.inp); } },
        { label: 'INP target', cell: function (x) { return x.inpTarget ? el('code', { text: x.inpTarget }) : '–'; } },
        { label: 'Real users', cell: function (x) {
          var f = x.field;
          if (!f) return '–';
          if (f.pages.length) return link('#/w/' + w.id + '/page/' + f.pages[0] + '?device=' + t.device, 'page ' + f.path);
          if (f.group) return link(withQuery('#/w/' + w.id + '/rum', { group: f.group, navigation: 'soft' }), 'group ' + f.group);
          return f.path + ' (pages report)';
        } }
      ], routed.softNavigations, null, { stack: true })));
    }
    out.push(el('h2', { text: 'Runs' }));
    out.push(runs.length ? table([
      { label: 'Started', value: function (x) { return x.created; }, csv: function (x) { return x.created; }, cell: function (x) { return when(x.created); } },
      { label: 'Status', value: function (x) { return x.status; }, cell: function (x) { return statusBadge(x.status); } },
      { label: 'Duration', n: true, unit: 'ms', value: function (x) { return x.duration; }, cell: function (x) { return metricCell('duration', x.duration); } },
      { label: 'INP', n: true, unit: 'ms', value: function (x) { return x.inp; }, cell: function (x) { return metricCell('inp', x.inp); } },
      { label: 'TBT', n: true, unit: 'ms', value: function (x) { return x.tbt; }, cell: function (x) { return metricCell('tbt', x.tbt); } },
      { label: 'CLS', n: true, unit: '', value: function (x) { return x.cls; }, cell: function (x) { return metricCell('cls', x.cls); } },
      { label: 'CPU', n: true, unit: 'ms', value: function (x) { return x.cpu_total; }, cell: function (x) { return metricCell('cpu_total', x.cpu_total); } },
      { label: 'Transfer', n: true, unit: 'B', value: function (x) { return x.bytes_total; }, cell: function (x) { return fmt(x.bytes_total, 'B'); } },
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
    ], runs, null, { stack: true }) : empty('No run yet' + (isAdmin() ? ': run it now.' : '.')));
    return out;
  });
}
