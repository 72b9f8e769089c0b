() => {
  const el = document.scrollingElement || document.documentElement;
  window.scrollTo({top: el.scrollHeight, behavior: 'instant'});
}
