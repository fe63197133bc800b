// workers.js: the workers page, refreshed every two seconds from /api/workers.
import {$, h, api, t, label, lang} from 'taikai/app.js';

async function refresh() {
  let data;
  try {
    data = await api('/api/workers');
  } catch {
    return; // the next refresh tries again
  }
  $('#queue').textContent = t('workers.queue', {queued: data.queued, running: data.running, again: data.redelivered});
  const body = $('#workers tbody');
  if (!body) return;
  body.replaceChildren(...data.workers.map((w) => h('tr', {dataset: {worker: w.name}, class: w.silent ? 'silent' : ''},
    h('td', {class: 'strong', text: w.name}),
    h('td', {text: w.host}),
    h('td', {class: 'num', text: `${w.running} / ${w.concurrency}`}),
    h('td', null, ...w.games.flatMap((id) => [h('a', {href: `/games/${id}`, text: `#${id}`}), ' '])),
    h('td', {class: 'num', text: w.done}),
    h('td', {text: label('sandbox.state', w.sandbox)}),
    h('td', null, h('time', {datetime: w.last_seen, text: new Date(w.last_seen).toLocaleTimeString(lang)}),
      w.silent ? h('span', {class: 'badge', text: t('workers.silent')}) : null))));
  $('#workers-empty').hidden = data.workers.length > 0;
}

setInterval(refresh, 2000);
