// chart.js: a line chart in inline SVG, no library: one line per series.

const NS = 'http://www.w3.org/2000/svg';

/**
 * palette is ten colours that stay apart on a projector: CSS variables
 * (app.css), so that each theme has its own, with enough contrast.
 */
export const palette = Array.from({length: 10}, (_, i) => `var(--series-${i})`);

/** seriesStyle gives the colour and dash of the i-th series. */
export function seriesStyle(i) {
  return {color: palette[i % palette.length], dash: i >= palette.length ? '10 6' : ''};
}

function s(tag, attrs, txt) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (txt !== undefined) el.textContent = txt;
  return el;
}

/** niceStep is a round tick step that gives about n ticks up to max. */
function niceStep(max, n) {
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (m * mag >= raw) return Math.max(m * mag, 0.5);
  }
  return 10 * mag;
}

/**
 * lineChart draws series [{name, points: [[x, y], ...]}] into svg, with axis
 * labels xLabel and yLabel, and dashed horizontal lines at marks [{y, name}]
 * (an SPRT's bounds). y may be negative.
 */
export function lineChart(svg, series, {xLabel = '', yLabel = '', marks = []} = {}) {
  // Drawn at the size it is shown, so that its text is as large on a phone
  // as on a projector.
  const W = Math.round(Math.max(320, Math.min(1200, svg.parentElement?.clientWidth || 1000)));
  const H = Math.max(240, Math.round(W * 0.34));
  const pad = {l: 64, r: 24, t: 18, b: 58};
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren();
  let xmax = 1;
  let ymax = 1;
  let ymin = 0;
  for (const sr of series) {
    for (const [x, y] of sr.points) {
      xmax = Math.max(xmax, x);
      ymax = Math.max(ymax, y);
      ymin = Math.min(ymin, y);
    }
  }
  for (const m of marks) {
    ymax = Math.max(ymax, m.y);
    ymin = Math.min(ymin, m.y);
  }
  const ystep = niceStep(ymax - ymin, 5);
  ymax = Math.ceil(ymax / ystep) * ystep;
  ymin = Math.floor(ymin / ystep) * ystep;
  const xstep = Math.max(1, Math.round(niceStep(xmax, 8)));
  xmax = Math.ceil(xmax / xstep) * xstep;
  const px = (x) => pad.l + ((W - pad.l - pad.r) * x) / xmax;
  const py = (y) => H - pad.b - ((H - pad.t - pad.b) * (y - ymin)) / (ymax - ymin);

  const axes = s('g', {class: 'c-axes'});
  for (let y = ymin; y <= ymax + 1e-9; y += ystep) {
    axes.append(s('line', {x1: pad.l, x2: W - pad.r, y1: py(y), y2: py(y), class: Math.abs(y) < 1e-9 ? 'c-base' : 'c-grid'}));
    axes.append(s('text', {x: pad.l - 10, y: py(y), class: 'c-tick', 'text-anchor': 'end', 'dominant-baseline': 'central'}, String(Math.round(y * 10) / 10)));
  }
  for (let x = 0; x <= xmax; x += xstep) {
    axes.append(s('line', {x1: px(x), x2: px(x), y1: H - pad.b, y2: H - pad.b + 6, class: 'c-base'}));
    axes.append(s('text', {x: px(x), y: H - pad.b + 22, class: 'c-tick', 'text-anchor': 'middle'}, String(x)));
  }
  axes.append(s('text', {x: (pad.l + W - pad.r) / 2, y: H - 8, class: 'c-label', 'text-anchor': 'middle'}, xLabel));
  axes.append(s('text', {x: 16, y: (pad.t + H - pad.b) / 2, class: 'c-label', 'text-anchor': 'middle',
    transform: `rotate(-90 16 ${(pad.t + H - pad.b) / 2})`}, yLabel));
  for (const m of marks) {
    axes.append(s('line', {x1: pad.l, x2: W - pad.r, y1: py(m.y), y2: py(m.y), class: 'c-mark', stroke: '#868e96', 'stroke-width': 2, 'stroke-dasharray': '8 6'}));
    axes.append(s('text', {x: W - pad.r - 4, y: py(m.y) - 6, class: 'c-tick', 'text-anchor': 'end'}, m.name));
  }
  svg.append(axes);

  const lines = s('g', {class: 'c-lines'});
  series.forEach((sr, i) => {
    const st = seriesStyle(i);
    const pts = sr.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
    const line = s('polyline', {points: pts, fill: 'none', 'stroke-width': 3.5, 'stroke-linejoin': 'round', 'stroke-linecap': 'round', class: 'c-line'});
    // A style, not an attribute: attributes do not take var().
    line.style.stroke = st.color;
    if (st.dash) line.setAttribute('stroke-dasharray', st.dash);
    line.append(s('title', {}, sr.name));
    lines.append(line);
    const end = sr.points[sr.points.length - 1];
    if (end) {
      const dot = s('circle', {cx: px(end[0]), cy: py(end[1]), r: 5});
      dot.style.fill = st.color;
      lines.append(dot);
    }
  });
  svg.append(lines);
}

/**
 * versionChart draws series [{name, points: [{x: time in ms, y, err, title}]}]
 * into svg: each point a dot with its ± err as a bar, labelled label(point),
 * the points of a series joined in time; the x axis is time (dates in the
 * page's language).
 */
export function versionChart(svg, series, {xLabel = '', yLabel = '', label = () => ''} = {}) {
  const W = Math.round(Math.max(320, Math.min(1200, svg.parentElement?.clientWidth || 1000)));
  const H = Math.max(220, Math.round(W * 0.25));
  const pad = {l: 64, r: 32, t: 30, b: 58};
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren();
  const all = series.flatMap((sr) => sr.points);
  let xmin = Math.min(...all.map((p) => p.x));
  let xmax = Math.max(...all.map((p) => p.x));
  // A little room either side, so that the first and last labels fit.
  const span = Math.max(xmax - xmin, 60e3);
  xmin -= span * 0.08;
  xmax += span * 0.08;
  let ymin = Math.min(0, ...all.map((p) => p.y - (p.err || 0)));
  let ymax = Math.max(0, ...all.map((p) => p.y + (p.err || 0)));
  const ystep = niceStep(Math.max(ymax - ymin, 10), 5);
  ymin = Math.floor(ymin / ystep) * ystep;
  ymax = Math.ceil(ymax / ystep) * ystep;
  const px = (x) => pad.l + ((W - pad.l - pad.r) * (x - xmin)) / (xmax - xmin);
  const py = (y) => H - pad.b - ((H - pad.t - pad.b) * (y - ymin)) / (ymax - ymin);

  const axes = s('g', {class: 'c-axes'});
  for (let y = ymin; y <= ymax + 1e-9; y += ystep) {
    axes.append(s('line', {x1: pad.l, x2: W - pad.r, y1: py(y), y2: py(y), class: Math.abs(y) < 1e-9 ? 'c-base' : 'c-grid'}));
    axes.append(s('text', {x: pad.l - 10, y: py(y), class: 'c-tick', 'text-anchor': 'end', 'dominant-baseline': 'central'}, String(Math.round(y))));
  }
  // Time ticks: dates over days, times within them (seconds within an
  // hour); a tick that would say what the one before says is left out.
  const lang = document.documentElement.lang || 'en';
  const range = xmax - xmin;
  const fmt = new Intl.DateTimeFormat(lang, range < 36e5 ? {hour: 'numeric', minute: '2-digit', second: '2-digit'}
    : range < 2 * 864e5 ? {hour: 'numeric', minute: '2-digit'} : {month: 'numeric', day: 'numeric'});
  const ticks = Math.max(2, Math.min(6, Math.floor((W - pad.l - pad.r) / 150)));
  let last = '';
  for (let i = 0; i <= ticks; i++) {
    const x = xmin + (range * i) / ticks;
    const text = fmt.format(new Date(x));
    if (text === last) continue;
    last = text;
    axes.append(s('line', {x1: px(x), x2: px(x), y1: H - pad.b, y2: H - pad.b + 6, class: 'c-base'}));
    axes.append(s('text', {x: px(x), y: H - pad.b + 22, class: 'c-tick', 'text-anchor': 'middle'}, text));
  }
  axes.append(s('text', {x: (pad.l + W - pad.r) / 2, y: H - 8, class: 'c-label', 'text-anchor': 'middle'}, xLabel));
  axes.append(s('text', {x: 16, y: (pad.t + H - pad.b) / 2, class: 'c-label', 'text-anchor': 'middle',
    transform: `rotate(-90 16 ${(pad.t + H - pad.b) / 2})`}, yLabel));
  svg.append(axes);

  const marks = s('g', {class: 'c-lines'});
  // The points' labels are drawn over every mark, each with a halo of the
  // chart's background: two versions submitted a minute apart put one's
  // label on the other's dot.
  const labels = s('g', {class: 'c-point-labels'});
  series.forEach((sr, i) => {
    const st = seriesStyle(i);
    const pts = [...sr.points].sort((a, b) => a.x - b.x);
    if (pts.length > 1) {
      const line = s('polyline', {points: pts.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' '), fill: 'none', 'stroke-width': 2.5, 'stroke-linejoin': 'round', class: 'c-line'});
      line.style.stroke = st.color;
      if (st.dash) line.setAttribute('stroke-dasharray', st.dash);
      marks.append(line);
    }
    for (const p of pts) {
      const g = s('g', {class: 'v-point', 'data-version': p.version});
      const x = px(p.x);
      if (p.err > 0) {
        for (const [x1, y1, x2, y2] of [[x, py(p.y - p.err), x, py(p.y + p.err)], [x - 6, py(p.y - p.err), x + 6, py(p.y - p.err)], [x - 6, py(p.y + p.err), x + 6, py(p.y + p.err)]]) {
          const bar = s('line', {x1, y1, x2, y2, 'stroke-width': 2, class: 'c-err'});
          bar.style.stroke = st.color;
          g.append(bar);
        }
      }
      const dot = s('circle', {cx: x, cy: py(p.y), r: 6});
      dot.style.fill = st.color;
      g.append(dot);
      labels.append(s('text', {x: x + 9, y: py(p.y) - 9, class: 'c-tick c-halo', 'data-version': p.version}, label(p)));
      if (p.title) g.append(s('title', {}, p.title));
      marks.append(g);
    }
  });
  svg.append(marks, labels);
}
