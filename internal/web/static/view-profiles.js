// openvitals dashboard: test profiles: how pages are audited (login, headers, cookies, network).
(function (ov) {
  'use strict';
  var el = ov.el, say = ov.say, empty = ov.empty, api = ov.api, list = ov.list, isAdmin = ov.isAdmin;
  var table = ov.table, field = ov.field, select = ov.select, busy = ov.busy, confirmThen = ov.confirmThen;
  var link = ov.link, load = ov.load, render = ov.render;
  var PRESETS = [['', 'the device\'s'], ['mobileSlow4G', 'slow 4G'], ['mobileRegular3G', 'regular 3G'], ['desktopDense4G', 'dense 4G']];
  var DEVICES = ['desktop', 'mobile'];

  function profilesView(w) {
    return load([list('/' + w.id + '/profiles'), list('/' + w.id + '/settings/pages')]).then(function (r) {
      var profiles = r[0], pages = r[1], names = {};
      pages.forEach(function (p) { names[p.id] = p.alias || p.url; });
      var out = [el('p', null, link('#/w/' + w.id + '/settings', '← Settings')), el('h1', { text: 'Test profiles' }),
        el('p', { class: 'sub', text: 'Headers, cookies and credentials go to the website\'s own host only; secret values are never shown again.' })];
      if (isAdmin()) out.push(el('details', null, el('summary', { text: 'New test profile' }), profileForm(w, pages)));
      out.push(profiles.length ? table([
        { label: 'Profile', cell: function (p) { return p.name + (p.default ? ' (default)' : ''); } },
        { label: 'Pages', cell: function (p) { return p.pages.map(function (x) { return (names[x.page] || x.page) + ' · ' + x.device; }).join(', ') || (p.default ? 'all others' : '—'); } },
        { label: 'Sends', cell: function (p) { return describe(p); } },
        { label: 'Network', cell: function (p) { return network(p); } },
        isAdmin() && { label: 'Actions', cell: function (p) { return isAdmin() ? [el('button', { type: 'button', class: 'secondary', 'aria-label': 'Edit profile ' + p.name, text: 'Edit', onclick: function () { this.closest('td').replaceChildren(profileForm(w, pages, p)); } }), ' ',
          el('button', { type: 'button', class: 'secondary', 'aria-label': 'Delete profile ' + p.name, text: 'Delete', onclick: confirmThen('Delete the profile ' + p.name + '?', function () { busy(this, function () { return api('DELETE', '/' + w.id + '/profiles/' + p.id); }, 'Profile deleted.').then(render); }) })] : ''; } }
      ], profiles) : empty('No test profile yet: pages are audited as anonymous visits.'));
      return out;
    });
  }
  function describe(p) {
    var parts = [];
    if (p.headers.length) parts.push('headers ' + p.headers.map(function (h) { return h.name; }).join(', '));
    if (p.cookies.length) parts.push('cookies ' + p.cookies.map(function (c) { return c.name; }).join(', '));
    if (p.basicAuth) parts.push('basic auth as ' + p.basicAuth.user);
    if (p.login.length) parts.push(p.login.length + ' login step(s)');
    return parts.join('; ') || '—';
  }
  function network(p) {
    var n = p.network, parts = [];
    if (n.preset) parts.push(n.preset);
    if (n.rttMs) parts.push(n.rttMs + ' ms RTT');
    if (n.throughputKbps) parts.push(n.throughputKbps + ' kbit/s');
    if (n.cpuSlowdown) parts.push(n.cpuSlowdown + '× CPU');
    if (p.viewport) parts.push(p.viewport.width + '×' + p.viewport.height);
    if (p.userAgent) parts.push('own user agent');
    return parts.join(', ') || 'the device\'s';
  }
  // Lines "Name: value" (headers) or "name=value" (cookies).
  function pairs(text, sep) {
    return text.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).map(function (l) {
      var i = l.indexOf(sep);
      return i < 0 ? { name: l } : { name: l.slice(0, i).trim(), value: l.slice(i + 1).trim() };
    });
  }
  // Login steps as lines "type | target | value", "| nav" at the end to wait for navigation.
  function stepLines(steps) {
    return steps.map(function (s) { return [s.type, s.target || '', s.value || ''].join(' | ') + (s.waitForNavigation ? ' | nav' : ''); }).join('\n');
  }
  function readSteps(text) {
    return text.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).map(function (l) {
      var f = l.split('|').map(function (x) { return x.trim(); }), o = { type: f[0] };
      if (f[f.length - 1] === 'nav') { o.waitForNavigation = true; f.pop(); }
      if (f[1]) o.target = f[1];
      if (f.length > 2 && f.slice(2).join('|') !== '') o.value = f.slice(2).join('|');
      return o;
    });
  }
  function num(input) { return input.value === '' ? undefined : Number(input.value); }
  function profileForm(w, pages, p) {
    var name = el('input', { name: 'name', required: true, value: p ? p.name : '' });
    var dflt = el('input', { type: 'checkbox', name: 'default', checked: p ? p.default : false });
    var boxes = [];
    var pageList = el('div', { class: 'row' }, pages.map(function (pg) {
      return DEVICES.map(function (d) {
        var on = p && p.pages.some(function (x) { return x.page === pg.id && x.device === d; });
        var b = el('input', { type: 'checkbox', name: 'page', checked: on });
        b.pick = { page: pg.id, device: d };
        boxes.push(b);
        return el('label', { class: 'inline' }, b, (pg.alias || pg.url) + ' · ' + d);
      });
    }));
    var kept = function (xs) { return xs.length ? 'kept: ' + xs.map(function (x) { return x.name; }).join(', ') + ' (type all again to change)' : ''; };
    var headers = el('textarea', { name: 'headers', placeholder: p ? kept(p.headers) || 'X-Token: value' : 'X-Token: value' });
    var cookies = el('textarea', { name: 'cookies', placeholder: p ? kept(p.cookies) || 'consent=yes' : 'consent=yes' });
    var user = el('input', { name: 'user', value: p && p.basicAuth ? p.basicAuth.user : '', autocomplete: 'off' });
    var password = el('input', { name: 'password', type: 'password', autocomplete: 'new-password', placeholder: p && p.basicAuth ? 'kept unless typed' : '' });
    var initialSteps = p ? stepLines(p.login) : '';
    var login = el('textarea', { name: 'login', value: initialSteps, placeholder: 'navigate | /login\ntype | #user | alice\ntype | #password | secret\nclick | #submit | nav\nwaitForSelector | #account' });
    var preset = select('preset', PRESETS, p ? p.network.preset || '' : '');
    var n = p ? p.network : {};
    var rtt = el('input', { name: 'rttMs', type: 'number', min: 0, max: 10000, value: n.rttMs || '' });
    var kbps = el('input', { name: 'throughputKbps', type: 'number', min: 1, max: 1000000, value: n.throughputKbps || '' });
    var cpu = el('input', { name: 'cpuSlowdown', type: 'number', min: 1, max: 20, step: 'any', value: n.cpuSlowdown || '' });
    var vw = el('input', { name: 'width', type: 'number', min: 200, max: 4000, value: p && p.viewport ? p.viewport.width : '' });
    var vh = el('input', { name: 'height', type: 'number', min: 200, max: 4000, value: p && p.viewport ? p.viewport.height : '' });
    var ua = el('input', { name: 'userAgent', value: p ? p.userAgent || '' : '' });
    var save = el('button', { type: 'submit', text: p ? 'Save profile' : 'Create profile' });
    return el('form', { 'aria-label': p ? 'Edit profile' : 'New test profile', onsubmit: function (e) {
      e.preventDefault();
      var body = { name: name.value.trim(), default: dflt.checked,
        pages: boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.pick; }),
        network: { preset: preset.value, rttMs: num(rtt), throughputKbps: num(kbps), cpuSlowdown: num(cpu) }, userAgent: ua.value.trim() };
      if (vw.value || vh.value) body.viewport = { width: num(vw), height: num(vh) };
      if (!p || headers.value.trim()) body.headers = pairs(headers.value, ':');
      if (!p || cookies.value.trim()) body.cookies = pairs(cookies.value, '=');
      if (!p || password.value || user.value.trim() !== (p.basicAuth ? p.basicAuth.user : '')) body.basicAuth = { user: user.value.trim(), password: password.value };
      if (!p || login.value !== initialSteps) body.login = readSteps(login.value);
      busy(save, function () { return p ? api('PUT', '/' + w.id + '/profiles/' + p.id, body) : api('POST', '/' + w.id + '/profiles', body); }, 'Profile saved.').then(render);
    } }, el('div', { class: 'row' }, field('Name', name), el('label', { class: 'inline' }, dflt, 'default for pages without a profile')),
      el('h3', { text: 'Pages it measures' }), pages.length ? pageList : empty('No page yet.'),
      el('h3', { text: 'Sent to the website only' }), el('div', { class: 'row' }, field('Headers, one "Name: value" a line', headers), field('Cookies, one "name=value" a line', cookies)),
      el('div', { class: 'row' }, field('Basic auth user', user), field('Password', password)),
      el('h3', { text: 'Login steps, before each run' }), field('One "type | target | value" a line; "| nav" waits for navigation', login),
      el('h3', { text: 'Network, CPU and screen' }), el('div', { class: 'row' }, field('Preset', preset), field('RTT (ms)', rtt), field('Throughput (kbit/s)', kbps), field('CPU slowdown', cpu)),
      el('div', { class: 'row' }, field('Viewport width', vw), field('Viewport height', vh), field('User agent', ua)), save);
  }

  ov.profilesView = profilesView;
}(window.ov));
