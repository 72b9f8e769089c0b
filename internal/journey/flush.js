(fn, token) => new Promise((resolve) => {
  const flush = window[fn];
  if (typeof flush !== 'function') return resolve(false);
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    flush(token);
    resolve(true);
  };
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(run, 0)));
  // A page that is not rendering never runs animation frames.
  setTimeout(run, 1000);
})
