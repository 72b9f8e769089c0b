// The observer the journey runner installs in every new document before its own scripts run
// (internal/journey, observerScript): a function of the binding's name, through which it
// reports, and of the suffix that names its flush function. It observes the top-level
// document only, as web-vitals does: an iframe's interactions and shifts belong to its own
// page. Each observer callback reports its entries at once through the binding: entries held
// back until pagehide would be lost, as a binding call made then never arrives.
(name, flushSuffix) => {
  if (window !== window.top) return;
  const send = (m) => {
    try {
      const report = window[name];
      if (typeof report === 'function') report(JSON.stringify(m));
    } catch (e) {}
  };
  // doc tells this document's navigation IDs from another's (soft navigations are keyed by
  // document and navigationId).
  const doc = Math.random().toString(36).slice(2, 10);
  // selector names an element as web-vitals' getSelector does, so that lab and field name it alike.
  const selector = (node) => {
    let sel = '';
    try {
      while (node && node.nodeType !== 9) {
        const part = node.id ? '#' + node.id :
          [node.nodeType === 1 ? node.nodeName.toLowerCase() : node.nodeName.toUpperCase().replace(/^#/, ''),
            ...Array.from(node.classList || []).sort()].join('.');
        if (sel.length + part.length > 99) return sel || part;
        sel = sel ? part + '>' + sel : part;
        if (node.id) break;
        node = node.parentNode;
      }
    } catch (e) {}
    return sel;
  };
  const observers = [];
  const observe = (type, options, handle) => {
    try {
      const o = new PerformanceObserver((list) => handle(list.getEntries()));
      o.observe(Object.assign({type: type, buffered: true}, options));
      observers.push([o, handle]);
    } catch (e) {}
  };
  const flush = () => {
    for (const [o, handle] of observers) {
      try {
        const entries = o.takeRecords();
        if (entries.length) handle(entries);
      } catch (e) {}
    }
  };
  // lastInput is when the latest discrete input began, lastEntry the start of the latest
  // interaction entry reported: equal, the latest interaction is in.
  let lastInput = -1, lastEntry = -1;
  for (const type of ['pointerdown', 'pointerup', 'click', 'keydown', 'keyup']) {
    addEventListener(type, (e) => { lastInput = Math.max(lastInput, e.timeStamp); }, {capture: true, passive: true});
  }
  // The start of each interaction, which the runner ties to the step that made it: a soft
  // navigation's entry comes after the step, and starts when its interaction's click did.
  for (const type of ['pointerdown', 'keydown']) {
    addEventListener(type, (e) => { if (e.isTrusted) send({k: 'input', o: doc, t: e.timeStamp}); }, {capture: true, passive: true});
  }
  // An Event Timing entry's target is null once its element left the document, as a route
  // change's re-render does before the entry is out: name targets as the events happen, by
  // their time (an entry's startTime is its event's timeStamp), as web-vitals does.
  const targets = new Map();
  for (const type of ['pointerdown', 'pointerup', 'click', 'keydown', 'keyup']) {
    addEventListener(type, (e) => {
      if (!targets.has(e.timeStamp)) targets.set(e.timeStamp, selector(e.target));
      if (targets.size > 50) targets.delete(targets.keys().next().value);
    }, {capture: true, passive: true});
  }
  // Event, layout-shift and contentful-paint entries carry the navigationId of the route
  // they happened on (Chromium's soft navigations): each route's vitals are its own.
  observe('event', {durationThreshold: 16}, (entries) => {
    const d = [], n = [], e2 = [];
    for (const e of entries) {
      if (e.interactionId > 0) {
        d.push(e.duration);
        n.push(e.navigationId || 0);
        e2.push(e.target ? selector(e.target) : (targets.get(e.startTime) || ''));
        lastEntry = Math.max(lastEntry, e.startTime);
      }
    }
    if (d.length) send({k: 'event', d: d, o: doc, n: n, e: e2});
  });
  observe('longtask', {}, (entries) => {
    if (entries.length) send({k: 'longtask', d: entries.map((e) => e.duration)});
  });
  observe('layout-shift', {}, (entries) => {
    const d = [], n = [], t = [];
    for (const e of entries) {
      if (!e.hadRecentInput) {
        d.push(e.value);
        n.push(e.navigationId || 0);
        t.push(e.startTime);
      }
    }
    if (d.length) send({k: 'shift', d: d, o: doc, n: n, t: t});
  });
  // A paint of the interaction that made a soft navigation, as web-vitals' LCP of that
  // navigation counts it: its render time from the interaction's start.
  const paint = (e) => {
    const lcp = e && e.largestContentfulPaint;
    if (!lcp) return null;
    return {o: doc, n: e.navigationId || 0, i: e.interactionId || 0,
      v: Math.max((lcp.renderTime || 0) - e.startTime, 0), e: selector(lcp.element)};
  };
  observe('interaction-contentful-paint', {}, (entries) => {
    for (const e of entries) {
      const p = paint(e);
      if (p) send(Object.assign({k: 'icp'}, p));
    }
  });
  observe('soft-navigation', {}, (entries) => {
    for (const e of entries) {
      send({k: 'soft', o: doc, n: e.navigationId || 0, i: e.interactionId || 0, u: e.name, t: e.startTime});
      // The largest paint so far, which may have come before this entry.
      try {
        const p = paint(typeof e.getLargestInteractionContentfulPaint === 'function' ? e.getLargestInteractionContentfulPaint() : null);
        if (p) send(Object.assign({k: 'icp'}, p));
      } catch (err) {}
    }
  });
  // Leaving: this document starts a navigation to another. The runner holds the navigation's
  // request until 'left': by then the entries of the interaction that navigated (if any),
  // which wait for the next frame, and of the task that navigated are reported. An
  // interaction shorter than the threshold has no entry: give up waiting after 150 ms. An
  // input more than a second old did not start this navigation: don't wait for it.
  if (window.navigation) {
    navigation.addEventListener('navigate', (e) => {
      if (e.destination.sameDocument) return;
      const since = lastInput, began = performance.now();
      const awaited = since >= 0 && began - since < 1000;
      send({k: 'leaving'});
      const check = () => {
        flush();
        if (awaited && lastEntry < since && performance.now() - began < 150) {
          setTimeout(check, 8);
          return;
        }
        send({k: 'left'});
      };
      requestAnimationFrame(() => setTimeout(check, 0));
    });
  }
  // For the end of the run and before a navigate step: hand over what the observers hold,
  // then a token that tells the runner every earlier report has arrived.
  Object.defineProperty(window, name + flushSuffix, {value: (token) => {
    flush();
    send({k: 'flush', t: token});
  }});
}
