// progress.js: progress bars of finished over total games.
import {h} from 'taikai/app.js';

/** progress makes a bar with its label. */
export function progress(done, total) {
  const el = h('div', {class: 'progress-cell'},
    h('div', {class: 'progress', role: 'progressbar', 'aria-valuemin': 0}, h('div', {class: 'bar'})),
    h('span', {class: 'progress-label'}));
  setProgress(el, done, total);
  return el;
}

/** setProgress updates a bar made by progress, or a .progress element. */
export function setProgress(el, done, total) {
  const bar = el.classList.contains('progress') ? el : el.querySelector('.progress');
  const pct = total > 0 ? Math.min(100, (100 * done) / total) : 0;
  bar.setAttribute('aria-valuemax', total);
  bar.setAttribute('aria-valuenow', done);
  // CSSOM, not a style attribute: the page's CSP allows no inline styles.
  bar.querySelector('.bar').style.width = pct + '%';
  bar.classList.toggle('complete', total > 0 && done >= total);
  const label = el.querySelector('.progress-label');
  if (label) label.textContent = `${done} / ${total}`;
}
