// openvitals dashboard: the route table, the one place a view is added, and the hash's parts.
// Pure (no DOM): unit-tested with Node's test runner (internal/web/jstest).

// A route is a view: the module that holds it (loaded when the view is first opened, one
// file in development; the served bundle holds them all), the name of the function it exports,
// and whether it takes the hash's next part (an id) before the query. The function is called
// with the website, that id or the query, and the query, and answers a promise of the view's
// nodes. TestRoutes checks that each module exports its view.

// HOME is the list of websites, #/.
export var HOME = { view: 'websitesView', module: () => import('./view-websites.js') };

// ROUTES are a website's views, by the part of #/w/{id}/… after its id.
export var ROUTES = {
  '': { view: 'websiteView', module: () => import('./view-websites.js') },
  page: { view: 'pageView', id: true, module: () => import('./view-page.js') },
  compare: { view: 'compareView', module: () => import('./view-compare.js') },
  multistep: { view: 'multistepView', id: true, module: () => import('./view-multistep.js') },
  rum: { view: 'rumView', module: () => import('./view-rum.js') },
  regressions: { view: 'regressionsView', module: () => import('./view-events.js') },
  events: { view: 'eventsView', module: () => import('./view-events.js') },
  settings: { view: 'settingsView', module: () => import('./view-settings.js') },
  profiles: { view: 'profilesView', module: () => import('./view-profiles.js') },
  experiments: { view: 'experimentsView', id: true, module: () => import('./view-experiments.js') }
};

// parseHash splits a location's hash (#/w/{id}/page/{pageID}?device=mobile) into its path's
// parts and its query.
export function parseHash(hash) {
  var h = hash.replace(/^#/, '') || '/';
  var q = {};
  var qi = h.indexOf('?');
  if (qi >= 0) {
    h.slice(qi + 1).split('&').forEach(function (kv) { var p = kv.split('='); if (p[0]) q[decodeURIComponent(p[0])] = decodeURIComponent(p[1] || ''); });
    h = h.slice(0, qi);
  }
  return { parts: h.split('/').filter(Boolean), q: q };
}

// withQuery is base with the query of q's keys that have a value.
export function withQuery(base, q) {
  var s = Object.keys(q).filter(function (k) { return q[k]; }).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(q[k]); }).join('&');
  return base + (s ? '?' + s : '');
}
