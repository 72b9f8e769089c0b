(v) => {
  if (!(this instanceof HTMLSelectElement)) return 'the element is a <' + this.localName + '>, not a <select>';
  const opts = Array.from(this.options);
  const t = v.trim();
  const o = opts.find((o) => o.value === v) || opts.find((o) => o.text.trim() === t) || opts.find((o) => o.label.trim() === t);
  if (!o) return 'no option has the given value';
  if (o.disabled) return 'the option of the given value is disabled';
  o.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return '';
}
