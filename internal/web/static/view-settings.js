// openvitals dashboard: settings: pages, budgets, tests, keys and the website itself.
import { el, empty, say, statusBadge } from './dom.js';
import { api, list } from './api.js';
import { fmtMetric, metricLabel, metricName, METRICS } from './metrics.js';
import { table } from './table.js';
import { busy, confirmThen, field, select } from './forms.js';
import { forgetSite, go, isAdmin, link, load, render } from './app.js';

// ---- settings (admin actions) -----------------------------------------------------------
export function settingsView(w) {
  return load([list('/' + w.id + '/settings/pages'), list('/' + w.id + '/budgets'), list('/' + w.id + '/multistep')]).then(function (r) {
    var pages = r[0], budgets = r[1], tests = r[2];
    var out = [el('h1', { text: (isAdmin() ? 'Settings of ' : 'Setup of ') + w.displayName })];
    out.push(el('h2', { text: 'Pages' }));
    if (isAdmin()) out.push(pasteForm(w));
    out.push(pages.length ? table([
      { label: 'Alias', value: function (p) { return p.alias; }, cell: function (p) { return p.alias || ''; } },
      { label: 'URL', value: function (p) { return p.url; }, cell: function (p) { return p.url; } },
      isAdmin() && { label: 'Actions', cell: function (p) { return isAdmin() ? el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete page ' + (p.alias || p.url), text: 'Delete', onclick: confirmThen('Delete the page ' + p.url + ' and its results?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/settings/' + p.id); }, 'Page deleted.').then(render); }) }) : ''; } }
    ], pages) : empty('No page yet' + (isAdmin() ? ': paste their addresses above.' : '.')));
    out.push(el('p', null, link('#/w/' + w.id + '/profiles', 'Test profiles'), ': logins, headers, cookies and networks the audits use; ',
      link('#/w/' + w.id + '/experiments', 'experiments'), ': a page audited with changes beside its control'));
    out.push(el('h2', { text: 'Budgets' }));
    if (isAdmin()) out.push(budgetForm(w));
    out.push(budgets.length ? table([
      { label: 'Metric', cell: function (b) { return metricName(b.metric); } },
      { label: 'Rule', cell: function (b) { return (b.operator === 'lt' ? 'below ' : 'above ') + fmtMetric(b.metric, b.value) + ' (' + b.device + ')'; } },
      { label: 'Status', cell: function (b) { return statusBadge(b.status); } },
      isAdmin() && { label: 'Actions', cell: function (b) { return isAdmin() ? [el('button', { type: 'button', class: 'secondary', 'aria-label': 'Edit budget ' + metricLabel(b.metric), text: 'Edit', onclick: function () { this.closest('td').replaceChildren(budgetForm(w, b)); } }), ' ',
        el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete budget ' + metricLabel(b.metric), text: 'Delete', onclick: confirmThen('Delete this budget?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/budgets/' + b.id); }, 'Budget deleted.').then(render); }) })] : ''; } }
    ], budgets, null, { stack: true }) : empty('No budget yet.'));
    out.push(el('h2', { text: 'Multistep tests' }));
    if (isAdmin()) out.push(el('details', null, el('summary', { text: 'New multistep test' }), testForm(w)));
    out.push(tests.length ? table([
      { label: 'Test', cell: function (t) { return link('#/w/' + w.id + '/multistep/' + t.id, t.alias); } },
      { label: 'Steps', n: true, cell: function (t) { return String(t.steps.length); } },
      isAdmin() && { label: 'Actions', cell: function (t) { return isAdmin() ? [el('button', { type: 'button', class: 'secondary', 'aria-label': 'Edit test ' + t.alias, text: 'Edit', onclick: function () { this.closest('td').replaceChildren(testForm(w, t)); } }), ' ',
        el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete test ' + t.alias, text: 'Delete', onclick: confirmThen('Delete the test ' + t.alias + ' and its runs?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/multistep/' + t.id); }, 'Test deleted.').then(render); }) })] : ''; } }
    ], tests) : empty('No multistep test yet.'));
    if (isAdmin()) {
      out.push(el('h2', { text: 'Delete the website' }));
      out.push(el('button', { type: 'button', class: 'danger', id: 'delete-website', text: 'Delete ' + w.displayName, onclick: confirmThen('Delete ' + w.displayName + ' with all its pages, results and tests? This cannot be undone.', function () {
        busy(this, function () { return api('DELETE', '/' + w.id); }, 'Website deleted.').then(function () { forgetSite(); go('#/'); });
      }) }));
    }
    return out;
  });
}
// pasteForm adds pages from lines "url" or "url alias".
export function pasteForm(w) {
  var ta = el('textarea', { id: 'paste-pages', name: 'pages', placeholder: '/ Home\n/pricing Pricing\n/blog/' });
  var b = el('button', { type: 'submit', text: 'Add pages' });
  return el('form', { 'aria-label': 'Add pages', onsubmit: function (e) {
    e.preventDefault();
    var pages = ta.value.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).map(function (l) {
      var i = l.search(/\s/);
      return i < 0 ? { url: l } : { url: l.slice(0, i), alias: l.slice(i).trim() };
    });
    if (!pages.length) { say('Paste one address per line first.'); return; }
    busy(b, function () { return api('POST', '/' + w.id + '/settings/pages', pages); }, pages.length + ' page(s) added.').then(render);
  } }, el('label', { for: 'paste-pages' }, 'One page per line: its address (path or full URL), then an optional alias'), ta, b);
}
var BUDGET_METRICS = ['performance_score', 'accessibility_score', 'best_practices_score', 'seo_score', 'lcp', 'fcp', 'cls', 'tbt', 'ttfb', 'speed_index', 'kb_total', 'cpu_total', 'ux_lcp', 'ux_inp', 'ux_cls', 'ux_fcp', 'ux_ttfb'];
export function budgetForm(w, b) {
  var M = METRICS;
  // The unit beside the value follows the chosen metric.
  var unitOf = function (m) { var u = M[m] ? M[m].unit : ''; return u === 'score' ? 'score, 0–100' : u || 'unitless'; };
  var metric = select('metric', BUDGET_METRICS.map(function (m) { return [m, metricName(m)]; }), b ? b.metric : 'lcp');
  var unit = el('span', { class: 'muted', text: unitOf(metric.value) });
  metric.addEventListener('change', function () { unit.textContent = unitOf(metric.value); });
  var op = select('operator', [['lt', 'below'], ['gt', 'above']], b ? b.operator : 'lt');
  var value = el('input', { name: 'value', type: 'number', step: 'any', required: true, value: b ? b.value : '' });
  var device = select('device', ['mobile', 'desktop'], b ? b.device : 'mobile');
  var button = el('button', { type: 'submit', text: b ? 'Save budget' : 'Add budget' });
  return el('form', { class: 'row', 'aria-label': b ? 'Edit budget' : 'Add a budget', onsubmit: function (e) {
    e.preventDefault();
    var body = { metric: metric.value, operator: op.value, value: Number(value.value), device: device.value };
    busy(button, function () { return b ? api('PUT', '/' + w.id + '/budgets/' + b.id, body) : api('POST', '/' + w.id + '/budgets', body); }, 'Budget saved.').then(render);
  } }, field('Metric', metric), field('Must stay', op), field('Value', el('span', { class: 'row tight' }, value, unit)), field('Device', device), button);
}
var STEP_TYPES = ['navigate', 'click', 'type', 'select', 'hover', 'scroll', 'waitForSelector', 'wait'];
// testForm edits a multistep test: alias, device and an ordered list of steps.
export function testForm(w, t) {
  var alias = el('input', { name: 'alias', required: true, value: t ? t.alias : '' });
  var device = select('device', ['desktop', 'mobile'], t ? t.device : 'desktop');
  var stepsBox = el('ol', { class: 'steps' });
  function addStep(s) {
    s = s || { type: 'navigate', target: '/' };
    var type = select('type', STEP_TYPES, s.type);
    var target = el('input', { name: 'target', value: s.target || '', placeholder: 'URL or CSS selector' });
    var value = el('input', { name: 'value', value: s.value || '', placeholder: 'text, option or ms' });
    var nav = el('input', { type: 'checkbox', name: 'waitForNavigation', checked: s.waitForNavigation });
    var li = el('li', { class: 'row' }, field('Type', type), field('Target', target), field('Value', value), el('label', { class: 'inline' }, nav, 'waits for navigation'));
    li.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Up', 'aria-label': 'Move step up', onclick: function () { if (li.previousSibling) stepsBox.insertBefore(li, li.previousSibling); } }));
    li.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Remove', 'aria-label': 'Remove step', onclick: function () { li.remove(); } }));
    li.read = function () {
      var o = { type: type.value, waitForNavigation: nav.checked };
      if (target.value.trim()) o.target = target.value.trim();
      if (value.value !== '') o.value = value.value;
      return o;
    };
    stepsBox.appendChild(li);
  }
  (t ? t.steps : [null]).forEach(addStep);
  var save = el('button', { type: 'submit', text: t ? 'Save test' : 'Create test' });
  return el('form', { 'aria-label': t ? 'Edit test' : 'New multistep test', onsubmit: function (e) {
    e.preventDefault();
    var body = { alias: alias.value.trim(), device: device.value, steps: Array.prototype.map.call(stepsBox.children, function (li) { return li.read(); }) };
    busy(save, function () { return t ? api('PUT', '/' + w.id + '/multistep/' + t.id, body) : api('POST', '/' + w.id + '/multistep', body); }, 'Test saved.').then(render);
  } }, el('div', { class: 'row' }, field('Name', alias), field('Device', device)), el('h3', { text: 'Steps' }), stepsBox,
    el('div', { class: 'row' }, el('button', { type: 'button', class: 'secondary', text: 'Add a step', onclick: function () { addStep(); } }), save));
}
