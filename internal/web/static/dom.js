// openvitals dashboard: making and changing elements, and the status toast.

// status is the page's toast.
function status() { return document.getElementById('status'); }

// el(tag, props, ...children): props may hold class, text, on<event>, attributes; children
// are nodes, strings, arrays or null.
export function el(tag, props) {
  var e = tag.indexOf('svg:') === 0 ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
  if (props) {
    Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.setAttribute('class', v);
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
      else if (k === 'value') e.value = v;
      else if (k === 'checked') e.checked = !!v;
      else e.setAttribute(k, v === true ? '' : v);
    });
  }
  for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
  return e;
}
// append adds children (nodes, strings, numbers, arrays of them; null is nothing) to parent.
export function append(parent, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) { c.forEach(function (x) { append(parent, x); }); return; }
  parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
}
// clear empties an element, which it answers.
export function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
// say shows a message in the toast for a few seconds.
export function say(msg) {
  status().textContent = msg;
  clearTimeout(say.t);
  say.t = setTimeout(function () { status().textContent = ''; }, 6000);
}
// hush removes a toast: it was about the view that is left.
export function hush() { clearTimeout(say.t); status().textContent = ''; }
// empty is what an empty view shows: what to do next, and the action to do it.
export function empty(text, action) { return el('div', { class: 'empty' }, el('p', { text: text }), action || null); }
// statusBadge is a state's badge, coloured by what it means.
export function statusBadge(s) {
  var cls = { ok: 'good', up: 'good', completed: 'good', active: 'good', recovered: 'good', passed: 'good',
    'at-risk': 'warn', flaky: 'warn', testing: 'muted', queued: 'muted', acknowledged: 'muted', off: 'muted',
    exceeded: 'bad', down: 'bad', failed: 'bad', open: 'bad', failing: 'bad' }[s] || '';
  return el('span', { class: 'badge ' + cls, text: s || '–' });
}
