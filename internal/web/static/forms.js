// openvitals dashboard: form controls and actions.
import { el, say } from './dom.js';

// field is a labelled control.
export function field(label, input) { return el('label', null, label, input); }
// select is a drop-down of options (values or [value, text]), value chosen.
export function select(name, options, value) {
  return el('select', { name: name }, options.map(function (o) {
    var v = Array.isArray(o) ? o[0] : o, t = Array.isArray(o) ? o[1] : o;
    return el('option', { value: v, selected: v === value ? true : null, text: t });
  }));
}
// busy runs action with button disabled, says what happened, and shows a refusal's message.
export function busy(button, action, done) {
  button.disabled = true;
  return Promise.resolve().then(action).then(function (r) {
    button.disabled = false;
    if (done) say(done);
    return r;
  }, function (err) {
    button.disabled = false;
    var msg = err.message + (err.errors && err.errors.length ? ': ' + err.errors.map(function (e) { return e.field + ' ' + e.message; }).join('; ') : '');
    say(msg);
    throw err;
  });
}
// confirmThen is a handler that runs action once the person confirms text.
export function confirmThen(text, action) { return function () { if (window.confirm(text)) action.apply(this, arguments); }; }
// segmented is a row of buttons of which one is pressed; an option is a value or [value, text].
export function segmented(label, options, value, onchange) {
  var group = el('div', { class: 'seg', role: 'group', 'aria-label': label });
  options.forEach(function (o) {
    var v = Array.isArray(o) ? o[0] : o, t = Array.isArray(o) ? o[1] : o;
    group.appendChild(el('button', { type: 'button', 'aria-pressed': v === value ? 'true' : 'false', text: t, onclick: function () { onchange(v); } }));
  });
  return group;
}
