(visible, enabled) => {
  if (!this.isConnected) return 'detached';
  if (visible) {
    const style = getComputedStyle(this), box = this.getBoundingClientRect();
    if (style.display === 'none' || style.visibility === 'hidden' || !(box.width || box.height)) return 'hidden';
  }
  if (enabled && this.disabled) return 'disabled';
  return '';
}
