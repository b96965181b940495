// Measures a report as Chromium laid it out and writes the figures into the
// page (JSON in a pre element, id layout-probe), so a test reads them from
// --dump-dom. Injected by tests only: the report itself has no script.
(() => {
  const doc = document.documentElement;
  const out = { viewport: doc.clientWidth, pageWidth: doc.scrollWidth, tables: [], charts: [], placeholders: [] };
  for (const t of document.querySelectorAll('table')) {
    const r = t.getBoundingClientRect();
    const p = t.parentElement;
    out.tables.push({ id: t.id, right: Math.round(r.right), scrolls: p.scrollWidth > p.clientWidth + 1 });
  }
  const meets = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  for (const s of document.querySelectorAll('svg.chart')) {
    const box = s.viewBox.baseVal;
    const title = s.querySelector('text.title').getBBox();
    const keys = [...s.querySelectorAll('text.legend')].map((e) => e.getBBox());
    let overlaps = 0;
    keys.forEach((k, i) => {
      if (meets(k, title) || k.x + k.width > box.width) overlaps++;
      keys.slice(i + 1).forEach((o) => { if (meets(k, o)) overlaps++; });
    });
    out.charts.push({
      id: s.id, overlaps, titleRight: Math.round(title.x + title.width), width: box.width,
      lines: s.querySelectorAll('polyline').length, dots: s.querySelectorAll('circle').length,
      ticks: [...s.querySelectorAll('text.tick')].map((e) => Number(e.dataset.v)),
    });
  }
  for (const p of document.querySelectorAll('.placeholder')) out.placeholders.push({ id: p.id, text: p.textContent });
  const pre = document.createElement('pre');
  pre.id = 'layout-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
