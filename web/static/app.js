// app.js: what every page shares: DOM helpers, the page's messages (t), the
// API client with the admin token, live sockets that reconnect by themselves,
// and number formats.

const LANG_COOKIE = 'taikai_lang';

// ---- messages ----

/** lang is the page's language ("en" or "ja"), as the server chose it. */
export const lang = document.documentElement.lang || 'en';

// The catalog is in the page (a JSON script element: no code, so the CSP
// allows it): {key: "text with {name}" | {one: ..., other: ...}}.
const catalog = JSON.parse(document.getElementById('i18n')?.textContent || '{}');
const pluralRules = new Intl.PluralRules(lang);

/** has tells whether the catalog has a message for key. */
export const has = (key) => Object.hasOwn(catalog, key);

/**
 * t is the message key in the page's language with its {placeholders} filled
 * from params; params.count picks the plural form. Every text a script shows
 * comes from here, as a whole sentence: never glue translated pieces.
 */
export function t(key, params = {}) {
  let m = catalog[key];
  if (m === undefined) {
    console.warn(`no message ${key}`);
    return key;
  }
  if (typeof m === 'object') m = m[pluralRules.select(Number(params.count ?? 0))] ?? m.other;
  return m.replace(/\{(\w+)\}/g, (all, name) => (name in params ? String(params[name]) : all));
}

/**
 * tNodes is t for a message with elements in it: a param that is a Node
 * (a <code>) takes its placeholder's place; the result goes to append().
 */
export function tNodes(key, params = {}) {
  const marked = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v instanceof Node ? `\u0000${k}\u0000` : v]));
  return t(key, marked).split(/\u0000(\w+)\u0000/).map((part, i) => (i % 2 ? params[part] : part));
}

/**
 * label names an enumerated value (a status, an end reason, a game) with the
 * message prefix.value, or shows the value itself if there is none.
 */
export function label(prefix, value) {
  if (value === null || value === undefined || value === '') return '';
  return has(`${prefix}.${value}`) ? t(`${prefix}.${value}`) : String(value);
}

/** number formats a number for the page's language. */
export function number(n, digits) {
  const opts = digits === undefined ? {} : {minimumFractionDigits: digits, maximumFractionDigits: digits};
  return new Intl.NumberFormat(lang, {useGrouping: false, ...opts}).format(n);
}

/** tv is the big-screen mode (?tv=1): no admin controls, larger boards. */
export const tv = document.body.classList.contains('tv');

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

/**
 * h builds an element: h('a', {href: '/x', class: 'y'}, 'text', child).
 * Text is always set as text, never parsed as HTML.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** href keeps the big-screen mode on links inside the dashboard. */
export function href(path) {
  return tv ? path + (path.includes('?') ? '&' : '?') + 'tv=1' : path;
}

/** APIError is an API's {"error": {code, message, field}} with its status. */
export class APIError extends Error {
  constructor(status, e) {
    super((e && e.message) || t('apierror.http', {status}));
    this.status = status;
    this.code = (e && e.code) || '';
    this.field = (e && e.field) || '';
    this.line = (e && e.line) || 0; // the line of an uploaded file it is on
    this.fields = (e && e.fields) || null; // every field in error, when there are several
    // The message as facts (a sentence's key and its values), per field
    // when there are several, for a page that says it in its own language.
    this.key = (e && e.message_key) || '';
    this.params = (e && e.message_params) || {};
    this.fieldFacts = (e && e.field_facts) || {};
  }
}

/**
 * api calls the JSON API. body may be an object (sent as JSON), FormData,
 * or a Blob (sent as it is, its type the Content-Type).
 * Every call carries the dashboard's header, so that the token cookie counts.
 */
export async function api(path, {method = 'GET', body} = {}) {
  const headers = {'X-Requested-With': 'taikai', 'Accept': 'application/json'};
  let payload;
  if (body instanceof FormData) {
    payload = body;
  } else if (body instanceof Blob) {
    headers['Content-Type'] = body.type;
    payload = body;
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, {method, headers, body: payload, credentials: 'same-origin'});
  } catch (err) {
    throw new APIError(0, {code: 'network', message: t('apierror.network')});
  }
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  const data = type.includes('json') ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) throw new APIError(res.status, data && data.error);
  return data;
}

/**
 * write is api for admin actions: without a valid token it asks for one and
 * tries once more.
 */
export async function write(path, opts) {
  try {
    return await api(path, opts);
  } catch (err) {
    if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
      if (await signIn()) return api(path, opts);
    }
    throw err;
  }
}

// ---- sign-in ----

/** isAdmin says whether this browser holds a token the server accepted. */
export const isAdmin = () => document.body.classList.contains('admin');

/** participantID is the signed-in participant's id, 0 for the admin or nobody. */
export const participantID = () => Number(document.body.dataset.participantId || 0);

/** signedIn says whether the admin or a participant is signed in. */
export const signedIn = () => isAdmin() || participantID() > 0;

/** setSession shows who is signed in: the API's {admin, participant}. */
export function setSession(s) {
  const admin = !!(s && s.admin);
  const p = s && s.participant;
  document.body.classList.toggle('admin', admin);
  document.body.classList.toggle('participant', !!p);
  if (p) document.body.dataset.participantId = String(p.id);
  else delete document.body.dataset.participantId;
  const badge = $('#participant-badge');
  if (badge) badge.textContent = p ? p.name : '';
  document.dispatchEvent(new CustomEvent('taikai:admin', {detail: admin}));
}

let pendingSignIn = null;

/**
 * signIn shows the token form; it resolves true once the server accepts the
 * token and has set its HTTP-only cookie (POST /api/session).
 */
export function signIn() {
  if (pendingSignIn) return pendingSignIn;
  const dialog = $('#token-dialog');
  const form = $('#token-form');
  const input = $('#token-input');
  const error = $('.field-error[data-field=token]', form);
  error.textContent = '';
  input.value = '';
  pendingSignIn = new Promise((resolve) => {
    const done = (ok) => {
      form.removeEventListener('submit', onSubmit);
      $('#token-cancel').removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      pendingSignIn = null;
      resolve(ok);
    };
    const onCancel = (ev) => { ev.preventDefault(); done(false); };
    const onSubmit = async (ev) => {
      ev.preventDefault();
      const token = input.value.trim();
      if (!token) {
        error.textContent = t('token.empty');
        return;
      }
      try {
        setSession(await api('/api/session', {method: 'POST', body: {token}}));
        done(true);
      } catch (err) {
        if (err.status === 403) error.textContent = t('token.wrong');
        else showError(error, err);
        input.select();
      }
    };
    form.addEventListener('submit', onSubmit);
    $('#token-cancel').addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    input.focus();
  });
  return pendingSignIn;
}

async function signOut() {
  try {
    await api('/api/session', {method: 'DELETE'});
  } catch (err) {
    console.warn('sign out:', err.message);
  }
  setSession(null);
}

// ---- live sockets ----

/**
 * live opens a websocket to path and hands every message to onMessage. When
 * the socket closes (the server drops viewers that fall behind) it reconnects
 * with backoff and the new snapshot resyncs the page; onMessage returns
 * 'done' to stop for good (a game that ended). onState gets 'open',
 * 'reconnecting' or 'done'.
 */
export function live(path, onMessage, onState = () => {}) {
  let ws = null;
  let stopped = false;
  let delay = 500;
  let timer = 0;
  const connect = () => {
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path;
    ws = new WebSocket(url);
    ws.addEventListener('open', () => { delay = 500; onState('open'); });
    ws.addEventListener('message', (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (onMessage(msg) === 'done') {
        stopped = true;
        onState('done');
      }
    });
    ws.addEventListener('close', () => {
      if (stopped) return;
      onState('reconnecting');
      // Jitter keeps a classroom of browsers from reconnecting in step.
      timer = setTimeout(connect, delay * (0.75 + Math.random() / 2));
      delay = Math.min(delay * 2, 10000);
    });
  };
  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      if (ws) ws.close();
    },
  };
}

/** showConn shows a socket's state in an element with data-state. */
export function showConn(el) {
  return (state) => {
    if (!el) return;
    el.dataset.state = state;
    el.textContent = state === 'done' ? '' : label('conn', state);
  };
}

/**
 * throttle runs fn at most once per ms, and once more after the last call, so
 * that a burst of events gives one refresh.
 */
export function throttle(fn, ms) {
  let last = 0;
  let timer = 0;
  return () => {
    const wait = last + ms - Date.now();
    if (wait <= 0) {
      last = Date.now();
      fn();
    } else if (!timer) {
      timer = setTimeout(() => { timer = 0; last = Date.now(); fn(); }, wait);
    }
  };
}

// ---- formats ----

/**
 * signedInt shows a rating as a whole number with its sign: +12, −3, 0. It
 * rounds half away from zero, as the server and Go do: +58.5 and −58.5 are
 * +59 and −59 (Math.round alone gave −58), and −0.4 is 0, not −0.
 */
export function signedInt(v) {
  const n = Math.round(Math.abs(v));
  return (n === 0 ? '' : v > 0 ? '+' : '−') + n;
}

/** points shows half points as ½: 3.5 -> "3½". */
export function points(p) {
  const whole = Math.floor(p + 1e-9);
  const half = p - whole > 0.25;
  if (whole === 0 && half) return '½';
  return String(whole) + (half ? '½' : '');
}

/** seconds shows milliseconds as seconds: 1234 -> "1.23 s". */
export function seconds(ms) {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1000) return t('unit.ms', {n: number(ms)});
  if (ms < 10000) return t('unit.s', {n: number(ms / 1000, 2)});
  return t('unit.s', {n: number(ms / 1000, 1)});
}

/** dateTime shows a time (an ISO string) as the page's language writes it. */
export function dateTime(iso) {
  return new Date(iso).toLocaleString(lang);
}

/** clock shows milliseconds as m:ss.t. */
export function clock(ms) {
  ms = Math.max(0, Math.round(ms));
  const m = Math.floor(ms / 60000);
  const s = Math.floor((ms % 60000) / 1000);
  const t = Math.floor((ms % 1000) / 100);
  return `${m}:${String(s).padStart(2, '0')}.${t}`;
}

/** duration shows seconds for people: "1 h 05 min", "4 min 10 s", "12 s". */
export function duration(sec) {
  sec = Math.max(0, Math.round(sec));
  if (sec >= 3600) return t('duration.hours', {h: Math.floor(sec / 3600), min: String(Math.floor((sec % 3600) / 60)).padStart(2, '0')});
  if (sec >= 60) return t('duration.minutes', {min: Math.floor(sec / 60), s: String(sec % 60).padStart(2, '0')});
  return t('duration.seconds', {s: sec});
}

/** reasonLabels says why a game ended, by its stored reason. */
export const reasonLabels = Object.fromEntries(
  ['normal', 'timeout', 'illegal', 'disconnect', 'close', 'resign', 'no_connect', 'crash', 'memory', 'aborted'].map((r) => [r, t(`reason.${r}`)]));

/** resultText says who won: "Black wins", "Draw". */
export function resultText(result) {
  return result ? label('result', result) : '';
}

/**
 * errorText is an API error in the page's language: English pages show the
 * API's own message; others the message for its stable code (the English
 * one for a code the catalog does not know), at its line if it has one.
 * Alone it may hide the facts of the server's sentence (which value, which
 * program): show errors with errorNodes, which keeps that sentence beside.
 */
export function errorText(err, message = err.message, field = err.field) {
  if (err.code === 'network') return t('apierror.network');
  if (lang === 'en') return message;
  const facts = factsText(err, field);
  if (facts) return facts;
  // A code's message for the field it names, if there is one (the deadline
  // of submissions, an invitation's code), else the code's.
  for (const key of [`apierror.${err.code}.${field}`, `apierror.${err.code}`]) {
    if (has(key)) return err.line ? t('apierror.at_line', {line: err.line, message: t(key)}) : t(key);
  }
  return message;
}

/**
 * factsText is an API error's message for field said from its facts
 * (apierror.key.<message_key> with its message_params: the value, the
 * limit, the setting), at its line if it has one; '' when the catalog
 * cannot say it so.
 */
function factsText(err, field) {
  // err may be an error the page made itself, without facts.
  const f = field === err.field && err.key ? {message_key: err.key, message_params: err.params} : (err.fieldFacts || {})[field];
  if (!f || !has(`apierror.key.${f.message_key}`)) return '';
  const text = t(`apierror.key.${f.message_key}`, f.message_params || {});
  return err.line ? t('apierror.at_line', {line: err.line, message: text}) : text;
}

/**
 * errorNodes is an API error for a reader of the page's language with all
 * its facts: errorText, and on a page not in English the server's own
 * sentence beside it, marked as English (lang=en), since the catalog's
 * message for the code cannot say the values the server named.
 */
export function errorNodes(err, message = err.message, field = err.field) {
  const text = errorText(err, message, field);
  if (lang === 'en' || err.code === 'network' || !message || text === message || factsText(err, field)) return [text];
  return [text, ' ', h('span', {class: 'server-says'}, tNodes('apierror.server_says', {message: h('q', {lang: 'en', text: message})}))];
}

/** showError puts an API error, with all its facts, in el. */
export function showError(el, err) {
  el.replaceChildren(...errorNodes(err));
}

// checkNodes says how a check went: the server's sentence on an English
// page; elsewhere the same facts from the catalog (check.msg.<key> with the
// check's message_params: the program not found, the move refused and
// why...), or, for a check the catalog cannot say, the game's result beside
// the server's own sentence. r is a check, or an engine's last check.
export function checkNodes(r) {
  if (lang === 'en') return [r.message];
  const q = r.message_params || {};
  const code = (v) => h('code', {text: String(v)});
  if (r.message_key && r.message_key !== 'passed' && has(`check.msg.${r.message_key}`)) {
    const p = {...q, host: code('{host}'), port: code('{port}')};
    for (const k of ['program', 'detail', 'protocol', 'violations', 'move', 'folder', 'example']) if (k in q) p[k] = code(q[k]);
    if ('why' in q) p.why = label('violation', q.why);
    if ('reason' in q) p.reason = label('reason', q.reason);
    const out = tNodes(`check.msg.${r.message_key}`, p);
    if (q.wrong_protocol) out.push(' ', ...tNodes('check.msg.wrong_protocol', {protocol: code(q.protocol)}));
    return out;
  }
  const p = {count: r.legal_moves || 0, reason: label('reason', r.reason)};
  const text = !r.result ? t('check.no_result', p) : r.result === 'win' ? t('check.result_win', p) : r.result === 'loss' ? t('check.result_loss', p) : t('check.result_draw', p);
  if (r.ok || !r.message) return [text];
  return [text, ' ', h('span', {class: 'server-says'}, tNodes('apierror.server_says', {message: h('q', {lang: 'en', text: r.message})}))];
}

/**
 * showErrors puts an API error next to the field it names in form (an element
 * .field-error[data-field=NAME]), or in the form's general error line.
 */
export function showErrors(form, err) {
  clearErrors(form);
  // Every field in error at once when the API names several.
  const all = err.fields ? Object.entries(err.fields) : [[err.field || '', err.message]];
  for (const e of all) e[1] = errorNodes(err, e[1], e[0]);
  let first = null;
  for (const [field, message] of all) {
    let slot = $(`.field-error[data-field="${CSS.escape(field)}"]`, form);
    if (!slot) slot = $('.field-error[data-field=""]', form);
    if (!slot) continue;
    if (slot.childNodes.length) slot.append(' ');
    slot.append(...message);
    const input = slot.closest('.field')?.querySelector('input, select, textarea');
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      first = first || input;
    }
  }
  if (first) first.focus();
}

export function clearErrors(form) {
  for (const el of $$('.field-error', form)) el.textContent = '';
  for (const el of $$('[aria-invalid]', form)) el.removeAttribute('aria-invalid');
}

/** pageData reads the JSON the server put in the page. */
export function pageData() {
  const el = $('#page-data');
  return el ? JSON.parse(el.textContent) : null;
}

// ---- page chrome ----

// A content-security-policy violation is a bug: say so where tests look.
document.addEventListener('securitypolicyviolation', (ev) => {
  console.error(`CSP blocked ${ev.blockedURI || 'inline code'} (${ev.violatedDirective})`);
});

// Every form's error slots are announced when they fill (role=alert), and
// each field's slot describes its input, so that focusing the input reads it.
for (const [i, slot] of $$('.field-error').entries()) {
  if (!slot.hasAttribute('role')) slot.setAttribute('role', 'alert');
  const field = slot.closest('.field');
  // A group of checkboxes is described as a whole, on its fieldset.
  const input = field && field.tagName === 'FIELDSET' ? field : field?.querySelector('input, select, textarea');
  if (!input) continue;
  slot.id ||= `field-error-${i}`;
  const by = (input.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
  if (!by.includes(slot.id)) input.setAttribute('aria-describedby', [...by, slot.id].join(' '));
}

$('#sign-in')?.addEventListener('click', () => { signIn(); });
$('#sign-out')?.addEventListener('click', signOut);

// The language switch: a cookie the server reads on every page.
$('#lang-switch')?.addEventListener('click', (ev) => {
  const to = ev.currentTarget.dataset.lang;
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${LANG_COOKIE}=${to}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
  location.reload();
});

if (tv) {
  for (const a of $$('a[href^="/"]')) a.setAttribute('href', href(a.getAttribute('href')));
}
