// observe.js: what the recorder reads of the page after every step. It is one
// expression that evaluates to a plain object, decoded into Page (page.go).
// It reads the layout once and changes nothing on the page.
(() => {
  const W = window.innerWidth, H = window.innerHeight;
  // clean drops Sphinx's pilcrow anchors and squeezes white space.
  const clean = (s, n) => (s || "").replace(/\u00b6/g, "").replace(/\s+/g, " ").trim().slice(0, n);
  const inView = (r) => r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < H && r.left < W;
  const clip = (r) => {
    const x0 = Math.max(0, r.left), y0 = Math.max(0, r.top);
    const x1 = Math.min(W, r.right), y1 = Math.min(H, r.bottom);
    return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  };
  // hit reports whether el is what a click at the centre of c would reach.
  const hit = (el, c) => {
    const e = document.elementFromPoint(c.x + c.w / 2, c.y + c.h / 2);
    return e !== null && (e === el || el.contains(e));
  };
  const describe = (el) => {
    if (!el || el === document.body || el === document.documentElement) return "";
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    const name = el.getAttribute("name");
    if (name) s += "[name=" + name + "]";
    if (el.tagName === "INPUT") s += "[type=" + (el.getAttribute("type") || "text") + "]";
    if (el.tagName === "A") {
      const t = clean(el.textContent, 30);
      if (t) s += ' "' + t + '"';
    }
    return s.slice(0, 80);
  };

  const links = [];
  const anchors = document.querySelectorAll("a[href]");
  for (let i = 0; i < anchors.length && links.length < 400; i++) {
    const a = anchors[i];
    const b = a.getBoundingClientRect();
    if (!inView(b)) continue;
    for (const r of a.getClientRects()) {
      if (!inView(r)) continue;
      const c = clip(r);
      if (c.w < 2 || c.h < 2 || !hit(a, c)) continue;
      links.push({ x: c.x, y: c.y, w: c.w, h: c.h, href: a.href, text: clean(a.textContent, 40), target: a.target || "" });
      break;
    }
  }

  const inputs = [];
  const textTypes = ["", "text", "search", "email", "url", "tel", "number", "password"];
  for (const el of document.querySelectorAll("input, textarea")) {
    if (el.disabled || el.readOnly) continue;
    if (el.tagName === "INPUT" && !textTypes.includes((el.getAttribute("type") || "").toLowerCase())) continue;
    const b = el.getBoundingClientRect();
    if (!inView(b)) continue;
    const c = clip(b);
    if (c.w < 4 || c.h < 4 || !hit(el, c)) continue;
    inputs.push({ x: c.x, y: c.y, w: c.w, h: c.h, desc: describe(el) });
    if (inputs.length >= 20) break;
  }

  // Headings: the first ones inside the viewport, and the last one above
  // its top edge (the section being read).
  const headings = [];
  let section = "";
  const shown = (el) => !el.checkVisibility || el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  for (const h of document.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const r = h.getBoundingClientRect();
    // Skip hidden headings and those of off-canvas menus.
    if (r.height === 0 || r.width === 0 || r.right <= 0 || r.left >= W || !shown(h)) continue;
    if (r.top < 0) { section = clean(h.textContent, 80); continue; }
    if (r.top >= H) break;
    headings.push(clean(h.textContent, 80));
    if (headings.length >= 2) break;
  }

  // Words for typing: from text inside the viewport.
  const words = [];
  const seen = new Set();
  const stop = new Set(["this", "that", "with", "from", "have", "will", "which", "when", "there", "their",
    "been", "were", "they", "then", "than", "also", "into", "only", "some", "such", "these", "those",
    "does", "what", "each", "other", "more", "most", "must", "should", "would", "could", "about"]);
  for (const el of document.querySelectorAll("h1, h2, h3, p, li, dt, dd, td, pre")) {
    const r = el.getBoundingClientRect();
    if (!inView(r)) continue;
    if (r.right <= 0 || r.left >= W || !shown(el)) continue;
    for (const w of (el.textContent || "").match(/[A-Za-z][A-Za-z0-9_]{3,15}/g) || []) {
      const lw = w.toLowerCase();
      if (seen.has(lw) || stop.has(lw)) continue;
      seen.add(lw);
      words.push(lw);
    }
    if (words.length >= 40) break;
  }

  const ae = document.activeElement;
  const editable = !!ae && (ae.tagName === "TEXTAREA" || (ae.tagName === "INPUT" && textTypes.includes((ae.getAttribute("type") || "").toLowerCase())));
  const de = document.documentElement;
  return {
    url: location.href,
    path: location.pathname + location.search,
    title: clean(document.title, 120),
    focused: describe(ae),
    editable: editable,
    typed: editable ? (ae.value || "").slice(0, 120) : "",
    headings: headings,
    section: section,
    scrollY: window.scrollY,
    scrollMax: Math.max(0, Math.max(de.scrollHeight, document.body ? document.body.scrollHeight : 0) - H),
    viewW: W,
    viewH: H,
    links: links,
    inputs: inputs,
    words: words.slice(0, 40),
  };
})()
