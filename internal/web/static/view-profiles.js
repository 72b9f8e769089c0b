// openvitals dashboard: test profiles (login, headers, cookies, network) and experiments.
import { el, empty } from './dom.js';
import { api, list } from './api.js';
import { table } from './table.js';
import { busy, confirmThen, field, select } from './forms.js';
import { isAdmin, link, load, render } from './app.js';

function names(xs) { return xs.map(function (x) { return x.name; }).join(', '); }
export function lines(t) { return t.split('\n').map(function (l) { return l.trim(); }).filter(Boolean); }
export function pairs(t, sep) { return lines(t).map(function (l) { var i = l.indexOf(sep); return i < 0 ? { name: l } : { name: l.slice(0, i).trim(), value: l.slice(i + sep.length).trim() }; }); }
function num(i) { return i.value === '' ? undefined : Number(i.value); }
export function input(name, value, attrs) { return el('input', Object.assign({ name: name, value: value === undefined ? '' : value }, attrs)); }
// The measurement methods (model.Methods), as the form offers them.
var METHODS = [['applied', 'applied: the load is throttled (its filmstrip and waterfall are the measured load)'],
  ['simulated', 'simulated: a slow load modelled from a fast one (as PageSpeed Insights)']];
export function back(w) { return el('p', null, link('#/w/' + w.id + '/settings', '← Settings')); }

export function profilesView(w) {
  return load([list('/' + w.id + '/profiles'), list('/' + w.id + '/settings/pages')]).then(function (r) {
    var pages = r[1], alias = {};
    pages.forEach(function (p) { alias[p.id] = p.alias || p.url; });
    return [back(w), el('h1', { text: 'Test profiles' }),
      el('p', { class: 'sub', text: 'Headers and basic auth go to the website\'s own origin (and the origins a profile names) only; cookies are HttpOnly; secrets are never shown again, nor kept in any report, HAR or error.' }),
      el('p', { class: 'sub', id: 'website-method', text: 'Pages no profile measures are measured with ' + (w.method || 'simulated') + ' throttling. A profile\'s method overrides it for its pages (the default profile\'s for every page without one); a switch is annotated and starts a new baseline for regressions.' }),
      isAdmin() && el('details', null, el('summary', { text: 'New test profile' }), profileForm(w, pages)),
      r[0].length ? table([
        { label: 'Profile', cell: function (p) { return p.name + (p.default ? ' (default)' : ''); } },
        { label: 'Pages', cell: function (p) { return p.pages.map(function (x) { return alias[x.page] + ' · ' + x.device; }).join(', ') || (p.default ? 'all others' : '—'); } },
        { label: 'Sends', cell: function (p) { return [names(p.headers.concat(p.cookies)), p.basicAuth && 'basic auth', p.login.length && p.login.length + ' login steps', p.origins.length && 'also to ' + p.origins.join(', ')].filter(Boolean).join(' · ') || '—'; } },
        { label: 'Method', cell: function (p) { return p.method + ' throttling'; } },
        { label: 'Network', cell: function (p) { var n = p.network; return (n.preset || '') + (n.rttMs || n.throughputKbps || n.cpuSlowdown ? ' custom' : '') || 'the device\'s'; } },
        isAdmin() && { label: 'Actions', cell: function (p) {
          return [el('button', { type: 'button', class: 'secondary', 'aria-label': 'Edit profile ' + p.name, text: 'Edit', onclick: function () { this.closest('td').replaceChildren(profileForm(w, pages, p)); } }), ' ',
            el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete profile ' + p.name, text: 'Delete', onclick: confirmThen('Delete the profile ' + p.name + '?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/profiles/' + p.id); }, 'Profile deleted.').then(render); }) })];
        } }
      ], r[0], null, { stack: true }) : empty('No test profile yet.')];
  });
}
function stepLines(steps) { return steps.map(function (s) { return [s.type, s.target || '', s.value || ''].join(' | ') + (s.waitForNavigation ? ' | nav' : ''); }).join('\n'); }
function readSteps(t) {
  return lines(t).map(function (l) {
    var f = l.split('|').map(function (x) { return x.trim(); }), o = { type: f[0] };
    if (f[f.length - 1] === 'nav') { o.waitForNavigation = true; f.pop(); }
    if (f[1]) o.target = f[1];
    if (f.length > 2 && f.slice(2).join('|') !== '') o.value = f.slice(2).join('|');
    return o;
  });
}
function profileForm(w, pages, p) {
  p = p || { pages: [], headers: [], cookies: [], origins: [], login: [], network: {}, create: true };
  var n = p.network, vp = p.viewport || {}, kept = function (xs, eg) { return xs.length ? 'kept: ' + names(xs) : eg; };
  var name = input('name', p.name, { required: true }), dflt = input('default', '', { type: 'checkbox', checked: p.default });
  var boxes = [], steps = stepLines(p.login);
  var headers = el('textarea', { name: 'headers', placeholder: kept(p.headers, 'X-Token: value') });
  var cookies = el('textarea', { name: 'cookies', placeholder: kept(p.cookies, 'consent=yes') });
  var origins = el('textarea', { name: 'origins', value: p.origins.join('\n'), placeholder: 'https://api.example.com' });
  var user = input('user', p.basicAuth && p.basicAuth.user, { autocomplete: 'off' }), password = input('password', '', { type: 'password', autocomplete: 'new-password' });
  var login = el('textarea', { name: 'login', value: steps, placeholder: 'navigate | /login' });
  var method = select('method', METHODS, p.method || w.method || 'applied');
  var preset = select('preset', [['', 'the device\'s'], 'mobileSlow4G', 'mobileRegular3G', 'desktopDense4G'], n.preset || '');
  var nums = ['rttMs', 'throughputKbps', 'cpuSlowdown'].map(function (k) { return input(k, n[k], { type: 'number', step: 'any' }); });
  var size = input('viewport', vp.width ? vp.width + 'x' + vp.height : '', { placeholder: '1280x800' }), ua = input('userAgent', p.userAgent);
  var save = el('button', { type: 'submit', text: p.create ? 'Create profile' : 'Save profile' });
  return el('form', { 'aria-label': p.create ? 'New test profile' : 'Edit profile', onsubmit: function (e) {
    e.preventDefault();
    var body = { name: name.value.trim(), default: dflt.checked, userAgent: ua.value.trim(), method: method.value,
      pages: boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.pick; }),
      network: { preset: preset.value } }, wh = size.value.split('x');
    nums.forEach(function (i) { body.network[i.name] = num(i); });
    if (size.value) body.viewport = { width: +wh[0], height: +wh[1] };
    if (p.create || headers.value.trim()) body.headers = pairs(headers.value, ':');
    if (p.create || cookies.value.trim()) body.cookies = pairs(cookies.value, '=');
    if (p.create || password.value || user.value.trim() !== (p.basicAuth ? p.basicAuth.user : '')) body.basicAuth = { user: user.value.trim(), password: password.value };
    if (login.value !== steps) body.login = readSteps(login.value);
    if (p.create || origins.value !== p.origins.join('\n')) body.origins = lines(origins.value);
    busy(save, function () { return p.create ? api('POST', '/' + w.id + '/profiles', body) : api('PUT', '/' + w.id + '/profiles/' + p.id, body); }, 'Profile saved.').then(render);
  } }, el('div', { class: 'row' }, field('Name', name), el('label', { class: 'inline' }, dflt, 'default for pages without a profile')),
    el('div', { class: 'row' }, pages.map(function (pg) {
      return ['desktop', 'mobile'].map(function (d) {
        var b = input('page', '', { type: 'checkbox', checked: p.pages.some(function (x) { return x.page === pg.id && x.device === d; }) });
        b.pick = { page: pg.id, device: d };
        boxes.push(b);
        return el('label', { class: 'inline' }, b, (pg.alias || pg.url) + ' · ' + d);
      });
    })),
    el('div', { class: 'row' }, field('Headers (Name: value)', headers), field('Cookies (name=value)', cookies)),
    el('div', { class: 'row' }, field('Basic auth user', user), field('Password', password)),
    field('Other origins of the website\'s site that get the headers and basic auth (one a line)', origins),
    field('Login steps (type | target | value | nav)', login),
    field('Measurement method', method),
    el('div', { class: 'row' }, field('Preset', preset), field('RTT (ms)', nums[0]), field('Throughput (kbit/s)', nums[1]), field('CPU slowdown', nums[2])),
    el('div', { class: 'row' }, field('Viewport', size), field('User agent', ua)), save);
}
