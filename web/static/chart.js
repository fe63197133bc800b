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
