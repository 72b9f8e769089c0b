// openvitals dashboard: tables, each with its CSV.
import { el, clear } from './dom.js';
import { csv, csvHeader } from './format.js';
import { fmtMetric, rating } from './metrics.js';

// table(columns, rows, caption, opts): columns are {label, value(row) for sorting (and a
// numeric column's CSV), cell(row) -> td, n: numeric, unit: of the CSV's numbers, csv(row):
// the CSV's value (else a numeric column's value, else the cell's text), hidden: shown only
// when asked for, csvOnly: in the CSV alone (as a unit column)}; headers with a value sort the rows, announced with aria-sort. opts: {name:
// the CSV file's name and the key of the columns someone chose to see, stack: on a narrow
// screen each row is a block of labelled values}. Every table has a CSV button.
var captions = 0; // tables made: each caption's id is its number
export function table(columns, rows, caption, opts) {
  opts = opts || {};
  columns = columns.filter(Boolean); // a column may be left out (null), as admin actions for a viewer
  var name = opts.name || (caption || columns[0].label).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  var shown = columns.map(function (c) { return !c.hidden && !c.csvOnly; });
  var chosen = opts.name && localStorage.getItem('openvitals.columns.' + opts.name);
  if (chosen) {
    try { chosen = JSON.parse(chosen); columns.forEach(function (c, i) { if (c.hidden && chosen.indexOf(c.label) >= 0) shown[i] = true; }); } catch (e) { /* ignored */ }
  }
  var tbody = el('tbody'), theadRow = el('tr');
  var sortBy = -1, dir = 1;
  var heads = columns.map(function (c, i) {
    var th = el('th', { scope: 'col', class: c.n ? 'n' : null });
    if (c.value) {
      th.appendChild(el('button', { class: 'sort', type: 'button', text: c.label, onclick: function () {
        dir = sortBy === i ? -dir : (c.n ? -1 : 1);
        sortBy = i;
        heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
        fill();
      } }));
    } else th.textContent = c.label;
    return th;
  });
  function sorted() {
    var rs = rows.slice();
    if (sortBy >= 0) {
      var f = columns[sortBy].value;
      rs.sort(function (a, b) {
        var x = f(a), y = f(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * dir;
      });
    }
    return rs;
  }
  // The header row is rebuilt only when the columns change: sorting keeps the focus on its button.
  function fillHead() {
    clear(theadRow);
    heads.forEach(function (h, i) { if (shown[i]) theadRow.appendChild(h); });
  }
  function fill() {
    clear(tbody);
    sorted().forEach(function (r) {
      tbody.appendChild(el('tr', null, columns.map(function (c, i) {
        if (!shown[i]) return null;
        var v = c.cell(r);
        var td = v && v.tagName === 'TD' ? v : el('td', { class: c.n ? 'n' : null }, v);
        if (opts.stack) td.setAttribute('data-label', c.label);
        return td;
      })));
    });
  }
  fillHead();
  fill();
  // A region of its own, focusable, so that a table wider than the screen scrolls by keyboard.
  // The caption sits beside the table's tools, outside the region that scrolls, so that a
  // narrow screen shows all of it; it still names the table.
  var captionID = caption ? 'caption-' + (++captions) : null;
  var box = el('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption || (columns[0].label + ' table') }, el('table', { class: opts.stack ? 'stack' : null, 'aria-labelledby': captionID }, el('thead', null, theadRow), tbody));
  var tools = el('div', { class: 'tabletools' }, caption ? el('p', { class: 'muted caption', id: captionID, text: caption }) : null, el('button', { type: 'button', class: 'secondary small csv', text: 'CSV', 'aria-label': 'Download ' + (caption || columns[0].label + ' table') + ' as CSV', onclick: function () { download(name + '.csv', wrap.csv()); } }));
  if (columns.some(function (c) { return c.hidden; })) {
    tools.appendChild(el('details', { class: 'columns' }, el('summary', { text: 'Columns' }), el('div', { class: 'menu' }, columns.map(function (c, i) {
      if (c.csvOnly) return null;
      return el('label', { class: 'inline' }, el('input', { type: 'checkbox', checked: shown[i], onchange: function () {
        shown[i] = this.checked;
        if (opts.name) localStorage.setItem('openvitals.columns.' + opts.name, JSON.stringify(columns.filter(function (c, j) { return c.hidden && shown[j]; }).map(function (c) { return c.label; })));
        fillHead();
        fill();
      } }), c.label);
    }))));
  }
  var wrap = el('div', { class: 'tablebox' }, tools, box);
  // csv: every column (hidden ones too) in the rows' order on screen; numbers as the API gave
  // them, the unit in the header.
  wrap.csv = function () {
    return csv([columns.map(function (c) { return csvHeader(c.label, c.unit); })].concat(sorted().map(function (r) {
      return columns.map(function (c) {
        if (c.csv) return c.csv(r);
        if (c.n && c.value) return c.value(r);
        var cell = c.cell(r);
        return cell && cell.tagName === 'TD' ? cell.textContent : el('td', null, cell).textContent;
      });
    })));
  };
  return wrap;
}
// download saves text as a CSV file of the name given.
export function download(filename, text) {
  var a = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/csv' })), download: filename });
  document.body.appendChild(a);
  a.click();
  setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

// metricCell is a table cell of a metric's value, coloured by its rating.
export function metricCell(name, v) { return el('td', { class: 'n ' + rating(name, v), text: fmtMetric(name, v) }); }
