// openvitals dashboard: experiments, a page audited with changes beside its plain control.
import { el, empty } from './dom.js';
import { api, get, list } from './api.js';
import { when } from './format.js';
import { fmtMetric, metricName } from './metrics.js';
import { table } from './table.js';
import { busy, confirmThen, field, select } from './forms.js';
import { go, isAdmin, link, load, render } from './app.js';
import { loadSections } from './view-compare.js';
import { back, lines, pairs } from './view-profiles.js';

var timer;

function summary(c) {
  return [c.block && 'block ' + c.block.join(', '), c.delay && 'delays',
    c.script && 'a script', c.style && 'a stylesheet', c.replace && c.replace.length + ' replacement(s)'].filter(Boolean).join('; ');
}
export function experimentsView(w, id) {
  var path = '/' + w.id + '/experiments';
  return load([list(path), list('/' + w.id + '/settings/pages'), id && get(path + '/' + id)]).then(function (r) {
    var x = r[2], alias = {};
    r[1].forEach(function (p) { alias[p.id] = p.alias || p.url; });
    clearTimeout(timer);
    if (r[0].some(function (e) { return /queued|testing/.test(e.status); })) timer = setTimeout(function () { if (/experiments/.test(location.hash)) render(); }, 3000);
    return [back(w), el('h1', { text: x ? 'Experiment' : 'Experiments' }),
      x && el('p', { class: 'sub', id: 'experiment-status' }, x.status + (x.error ? ': ' + x.error : '') + ' · ' + alias[x.page] + ' · ' + x.device + ' · ' + summary(x.changes)),
      x && isAdmin() && el('p', null, el('button', { type: 'button', class: 'secondary', id: 'delete-experiment', text: 'Delete this experiment', onclick: confirmThen('Delete this experiment and its diagnostics?', function () {
        // The list it goes back to, without it, says it is gone.
        busy(this, function () { return api('DELETE', path + '/' + x.id); }).then(function () { go('#/w/' + w.id + '/experiments'); }, function () {});
      }) })),
      x && (x.metrics ? table([
        { label: 'Metric', cell: function (m) { return metricName(m.name); } },
        { label: 'Control', n: true, cell: function (m) { return fmtMetric(m.name, m.base); } },
        { label: 'With the changes', n: true, cell: function (m) { return fmtMetric(m.name, m.target); } },
        { label: 'Change', n: true, cell: function (m) { return m.change === null ? '' : (m.change > 0 ? '+' : m.change < 0 ? '−' : '') + fmtMetric(m.name, Math.abs(m.change)); } }
      ], x.metrics, null, { stack: true }) : empty(x.status === 'failed' ? 'Failed.' : 'Measuring…')),
      x && x.loads && loadSections(x.loads, 'control', 'with the changes'),
      !x && isAdmin() && el('details', null, el('summary', { text: 'New experiment' }), form(w, r[1])),
      !x && (r[0].length ? table([
        { label: 'Started', cell: function (e) { return link('#/w/' + w.id + '/experiments/' + e.id, when(e.createdAt)); } },
        { label: 'Page', cell: function (e) { return alias[e.page] + ' · ' + e.device; } },
        { label: 'Changes', cell: function (e) { return summary(e.changes); } },
        { label: 'Status', cell: function (e) { return e.status; } }
      ], r[0], null, { stack: true }) : empty('No experiment yet.'))];
  });
}
function form(w, pages) {
  var page = select('page', pages.map(function (p) { return [p.id, p.alias || p.url]; })), device = select('device', ['mobile', 'desktop']);
  var t = {};
  ['block', 'delay', 'script', 'style', 'replace'].forEach(function (k) { t[k] = el('textarea', { name: k }); });
  var start = el('button', { type: 'submit', text: 'Start experiment' });
  return el('form', { 'aria-label': 'New experiment', onsubmit: function (e) {
    e.preventDefault();
    var c = {}, v = function (k) { return t[k].value.trim(); };
    if (v('block')) c.block = lines(v('block'));
    if (v('delay')) c.delay = pairs(v('delay'), ' ').map(function (d) { return { pattern: d.name, ms: Number(d.value) }; });
    if (v('script')) c.script = v('script');
    if (v('style')) c.style = v('style');
    if (v('replace')) c.replace = pairs(v('replace'), '=>').map(function (d) { return { find: d.name, with: d.value || '' }; });
    busy(start, function () { return api('POST', '/' + w.id + '/experiments', { page: page.value, device: device.value, changes: c }); }, 'Experiment queued.')
      .then(function (x) { if (x) go('#/w/' + w.id + '/experiments/' + x.id); });
  } }, el('div', { class: 'row' }, field('Page', page), field('Device', device)),
    el('div', { class: 'row' }, field('Block (URL patterns)', t.block), field('Delay (pattern ms)', t.delay)),
    el('div', { class: 'row' }, field('Script (URL or code)', t.script), field('Stylesheet (URL or CSS)', t.style)),
    field('Replace (find => with)', t.replace), start);
}
