// openvitals dashboard: the API client. The API key is kept in sessionStorage (gone with the
// tab, never in a URL) or, when the person asks for it, in localStorage (every tab of this
// browser, until signing out), and sent as a Bearer token.
import { el } from './dom.js';

var KEY = 'openvitals.key';
// unauthorized is told when the API no longer accepts the key (the core signs out).
var unauthorized = function () {};

// onUnauthorized sets what happens when the API refuses the key with 401.
export function onUnauthorized(f) { unauthorized = f; }
// key is the API key kept in this tab or browser (null when signed out).
export function key() { return sessionStorage.getItem(KEY) || localStorage.getItem(KEY); }
// forgetKey forgets the key in both stores.
export function forgetKey() { sessionStorage.removeItem(KEY); localStorage.removeItem(KEY); }

// keepKey keeps k in this tab, or in every tab of the browser when remembered.
export function keepKey(k, remembered) { forgetKey(); (remembered ? localStorage : sessionStorage).setItem(KEY, k); }

// ApiError carries a problem+json answer's status and text.
export function ApiError(status, detail, errors) { this.status = status; this.message = detail; this.errors = errors || []; }
ApiError.prototype = Object.create(Error.prototype);

// api sends a request with the key: the answer's document (null for 204), or the response when
// raw; a refusal is an ApiError with the problem's detail.
export function api(method, path, body, raw) {
  var opts = { method: method, headers: { Authorization: 'Bearer ' + key() } };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  return fetch(path, opts).then(function (res) {
    if (res.ok) {
      if (raw) return res;
      return res.status === 204 ? null : res.json();
    }
    return res.text().then(function (t) {
      var p = {};
      try { p = JSON.parse(t); } catch (e) { /* not problem+json */ }
      if (res.status === 401 && path !== '/account') {
        unauthorized('Your key is no longer accepted: sign in again.');
      }
      throw new ApiError(res.status, p.detail || p.message || (res.status + ' ' + res.statusText), p.errors);
    });
  });
}
// keyedImage is an <img> of an image the API serves: fetched with the key (an <img> cannot
// send it) and shown from a blob: URL. props are the image's attributes, alt among them.
export function keyedImage(url, props) {
  var img = el('img', props);
  api('GET', url, undefined, true).then(function (res) { return res.blob(); }).then(function (b) {
    img.src = URL.createObjectURL(b);
  }, function () { img.alt = props.alt + ' (not available)'; });
  return img;
}
// get answers the API's document at path.
export function get(path) { return api('GET', path); }
// list answers the list of a listing's document.
export function list(path) { return get(path).then(function (r) { return r.result.list; }); }
