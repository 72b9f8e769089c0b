// openvitals dashboard: the core, the page's module. A small hash-routed page over the REST
// interface: the sign-in, the key's role, the website of the view, and drawing the view the
// route table (routes.js) names.
import { el, append, clear, say, hush } from './dom.js';
import { key, keepKey, forgetKey, onUnauthorized, ApiError, get, list } from './api.js';
import { setNames } from './metrics.js';
import { destroyCharts } from './chart.js';
import { HOME, ROUTES, parseHash } from './routes.js';

var main = document.getElementById('main');
var nav = document.getElementById('nav');
var who = document.getElementById('who');
var me = null; // {account, role} of the key
var renderSeq = 0; // a view started later wins over a slower earlier one

// names are the metrics' and phases' names, units and thresholds: data the page preloads
// beside its script, read before any view is drawn.
var names = fetch(document.getElementById('ov-names').href).then(function (r) { return r.json(); }).then(setNames);

// ---- routing ----------------------------------------------------------------------------
// go opens the view of hash (again, when it is the current one).
export function go(hash) { if (location.hash === hash) render(); else location.hash = hash; }
// link is a link to a view.
export function link(hash, text) { return el('a', { href: hash, text: text }); }

var site = null; // the website of the current view: {id, displayName, domain}

function setNav(w, current) {
  clear(nav);
  if (!w) return;
  [['', 'Pages'], ['/multistep', 'Multistep'], ['/rum', 'Real users'], ['/regressions', 'Regressions'], ['/events', 'Events'], ['/settings', isAdmin() ? 'Settings' : 'Setup']].forEach(function (t) {
    nav.appendChild(el('a', { href: '#/w/' + w.id + t[0], text: t[1], 'aria-current': current === t[0] ? 'page' : null }));
  });
}

// ready is what every view waits for besides its own data: the key's role, and the website
// of the view; all of it is asked for at once, so that a view costs one round of requests.
var ready = Promise.resolve();
var whoami = null; // the pending or answered GET /account
export function account() {
  if (!whoami) whoami = Promise.all([get('/account'), names]).then(function (r) { me = r[0]; showWho(); return me; }, function (err) { whoami = null; throw err; });
  return whoami;
}
// load resolves to the answers of requests once ready is too.
export function load(requests) { return Promise.all([ready].concat(requests)).then(function (r) { return r.slice(1); }); }
// painted answers a promise kept once what the view has drawn so far is on the screen: the
// requests for what is below the fold wait for it, so that they do not compete with the
// first paint's for a slow network's connections.
export function painted() { return new Promise(function (done) { requestAnimationFrame(function () { setTimeout(done, 0); }); }); }
// parts answers a maker of parts: a part is a node a view shows at once and fills with what
// answer (a promise of nodes) gives, or its error, so that a view draws what it has while
// the rest is on its way. Parts are filled in the order they are made: one ready early waits
// for those above it, so that nothing drawn moves down under a reader's eyes. The view stays
// busy until each part of it has settled.
export function parts() {
  var last = Promise.resolve();
  return function (answer, attrs) {
    var holder = el('div', attrs);
    holder.settled = last = Promise.all([answer, last]).then(function (x) { append(holder, x[0]); },
      function (err) { holder.appendChild(el('p', { class: 'error', text: err.message })); });
    return holder;
  };
}

// render draws the view the location's hash names, or the sign-in form without a key.
export function render() {
  var seq = ++renderSeq;
  destroyCharts();
  if (!key()) { signInView(); return; }
  var r = parseHash(location.hash), p = r.parts;
  // A toast speaks of the view it was said in: another view starts without it.
  var path = p.join('/');
  if (path !== render.path) hush();
  render.path = path;
  var view;
  if (p.length === 0) {
    ready = account();
    view = openView(HOME);
    setNav(null);
  } else if (p[0] === 'w' && p[1]) {
    // The view's requests start now with the website's id; its name comes with ready.
    var w = site && site.id === p[1] ? site : { id: p[1] };
    ready = Promise.all([account(), loadSite(p[1], w)]).then(function () {
      var sub = p[2] ? '/' + p[2] : '';
      setNav(w, sub === '/page' ? '' : sub);
    });
    var to = ROUTES[p[2] || ''];
    view = to ? openView(to, w, to.id ? p[3] : r.q, r.q) : Promise.reject(new ApiError(404, 'No such view.'));
  } else view = Promise.reject(new ApiError(404, 'No such view.'));
  main.setAttribute('aria-busy', 'true');
  Promise.all([ready, view]).then(function (res) {
    if (seq !== renderSeq) return;
    clear(main);
    append(main, res[1]);
    return Promise.all([].concat(res[1]).map(function (n) { return n && n.settled; }));
  }, function (err) {
    if (seq !== renderSeq || !key()) return;
    if (err.status === 401) { signOut('Your key is not accepted (any more): sign in again.'); return; }
    clear(main);
    main.appendChild(el('h1', { text: err.status === 404 ? 'Not found' : 'Something went wrong' }));
    main.appendChild(el('p', { class: 'error', text: err.message }));
    main.appendChild(el('p', null, link('#/', 'Back to the websites')));
  }).then(function () {
    // A newer view is still on its way: it ends the busy state itself.
    if (seq !== renderSeq) return;
    main.removeAttribute('aria-busy');
    if (render.focus) main.focus();
    render.focus = true;
  });
}

// openView answers the view of route drawn with args: its function, from its module.
function openView(route) {
  var args = Array.prototype.slice.call(arguments, 1);
  return route.module().then(function (m) { return m[route.view].apply(null, args); });
}

// loadSite fills w in with the website of id (from the websites list, kept for the next view).
function loadSite(id, w) {
  if (site && site.id === id) return Promise.resolve(Object.assign(w, site));
  return list('/websites').then(function (ws) {
    var found = ws.filter(function (x) { return x.id === id; })[0];
    if (!found) throw new ApiError(404, 'This key sees no website ' + id + '.');
    site = Object.assign(w, found);
    return site;
  });
}

// ---- sign-in ----------------------------------------------------------------------------
function signInView(message) {
  clear(nav); clear(who); clear(main);
  var input = el('input', { id: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'key-help signin-error' });
  var error = el('p', { id: 'signin-error', class: 'error', role: 'alert', text: message || '' });
  var remember = el('input', { id: 'remember', type: 'checkbox', 'aria-describedby': 'remember-help' });
  var button = el('button', { type: 'submit', text: 'Sign in' });
  var form = el('form', { class: 'signin', onsubmit: function (e) {
    e.preventDefault();
    var k = input.value.trim();
    error.textContent = '';
    if (!k) { error.textContent = 'Paste an API key first.'; return; }
    keepKey(k, remember.checked);
    whoami = null;
    button.disabled = true;
    account().then(function () {
      button.disabled = false;
      render();
    }, function (err) {
      button.disabled = false;
      forgetKey();
      // One message, in words: the API's own text is for a refusal that is not the key's.
      error.textContent = err.status === 401 || err.status === 403 ? 'This key was not accepted. Check that you pasted all of it and that it was not revoked.' : 'Could not sign in (' + err.message + '). Try again in a moment.';
      input.focus();
    });
  } },
    el('h1', { text: 'Sign in to openvitals' }),
    el('label', { for: 'key' }, 'API key'), input,
    el('p', { id: 'key-help', class: 'muted', text: 'Paste an admin or viewer key. It is sent to this service alone.' }),
    el('label', { class: 'inline check', for: 'remember' }, remember, 'Remember this key on this device'),
    el('p', { id: 'remember-help', class: 'muted', text: 'Unticked, the key stays in this tab only and is forgotten when you close it; links opened in a new tab ask for it again. Ticked, every tab of this browser uses it until you sign out, and anyone using this browser profile can too.' }),
    error, button);
  main.appendChild(form);
  input.focus();
}
function signOut(message) {
  forgetKey();
  me = null; site = null; whoami = null;
  if (location.hash && location.hash !== '#/') history.replaceState(null, '', '#/');
  signInView(message);
}
function showWho() {
  clear(who);
  if (!me) return;
  who.appendChild(el('span', { id: 'role', text: me.account + ' · ' + me.role }));
  who.appendChild(el('button', { type: 'button', class: 'secondary', id: 'signout', text: 'Sign out', onclick: function () { signOut(); say('Signed out: the key is forgotten.'); } }));
}

// currentSite is the website of the current view (null before one is loaded).
export function currentSite() { return site; }
// forgetSite drops the website kept for the next view: it was changed or deleted.
export function forgetSite() { site = null; }
// isAdmin tells whether the key is an admin's.
export function isAdmin() { return me && me.role === 'admin'; }

// ---- start ------------------------------------------------------------------------------
// A module runs once the document is parsed, as a deferred script does.
onUnauthorized(signOut);
window.addEventListener('hashchange', render);
if (key()) render(); else signInView();
