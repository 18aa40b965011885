// trawl's web app: a small single-page app over the /v1 API, with no framework and no build.
// Views are <template>s in index.html; this script clones one into #view per path and fills it.
// Everything that comes from the server or the user goes in as text (textContent, never
// innerHTML), except the report's HTML, which the server renders and sanitises.

const TOKEN_KEY = 'trawl.token';
// A browser opens at most 6 HTTP/1.1 connections to an origin and an event stream holds one for
// as long as its batch runs: more streams would leave the page's own requests queued behind
// them. Unfinished batches past this many are polled instead.
const MAX_STREAMS = 4;
const POLL_MS = 5000;
const REPORT_POLL_MS = 3000;
const RETRY_MS = 2000;

const state = {
  token: null,
  me: null, // GET /v1/token: {id, name, read_only, created_at}
  view: null, // the shown view's lifecycle (see newView)
  renderedPath: null,
  busy: 0,
  citeOpener: null, // the link that opened the citation panel, to return focus to
};

/* ---------- DOM ---------- */

const $ = (selector, root = document) => root.querySelector(selector);
const enc = encodeURIComponent;

// h('a', {href, class}, 'text', child…): strings become text nodes, so nothing is parsed as HTML.
// Never give it a `style` attribute: the Content-Security-Policy refuses inline style.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') {
      for (const [name, v] of Object.entries(value)) if (v != null) el.dataset[name] = v;
    }
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function mount(templateId) {
  const template = document.getElementById(templateId);
  $('#view').replaceChildren(template.content.cloneNode(true));
}

function setText(selector, text) {
  const el = $(selector);
  if (el) el.textContent = text;
  return el;
}

function thead(columns) {
  return h('thead', {}, h('tr', {}, columns.map((c) => h('th', {scope: 'col'}, c))));
}

// A focusable, labelled wrapper, so a keyboard can scroll a wide table too.
function tableWrap(label, table) {
  return h('div', {class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': label}, table);
}

/* ---------- Formatting ---------- */

const shortId = (id) => String(id ?? '').slice(0, 8);
const isNum = (n) => typeof n === 'number' && Number.isFinite(n);

function fmtTime(s) {
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? String(s ?? '') : d.toLocaleString();
}

function fmtNum(n, digits = 2) {
  return isNum(n) ? n.toLocaleString(undefined, {maximumFractionDigits: digits}) : '—';
}

function fmtUsd(n) {
  return isNum(n) ? '$' + n.toLocaleString(undefined, {minimumFractionDigits: 2, maximumFractionDigits: 4}) : '—';
}

function fmtBytes(n) {
  if (!isNum(n)) return '—';
  const units = ['B', 'kB', 'MB', 'GB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${fmtNum(n, i ? 1 : 0)} ${units[i]}`;
}

// A field's value as text: lists joined, objects as JSON, nothing as a dash.
function fmtValue(v) {
  if (v == null) return '—';
  if (Array.isArray(v)) return v.map(fmtValue).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function truncate(s, n) {
  s = String(s ?? '');
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

const isHttpUrl = (u) => typeof u === 'string' && /^https?:\/\//i.test(u);

// Only http(s) addresses become links (no javascript:, data: …); anything else stays text.
function urlLink(url, text) {
  const label = text ?? url ?? '';
  return isHttpUrl(url)
    ? h('a', {href: url, target: '_blank', rel: 'noopener noreferrer'}, label)
    : h('span', {class: 'url'}, label);
}

function sourceCell(title, url) {
  return [h('div', {class: 'src-title'}, title || 'Untitled'), h('div', {class: 'src-url'}, urlLink(url))];
}

function citeLink(n) {
  return h('a', {class: 'cite', href: `#cite-${n}`, dataset: {cite: n}}, `[${n}]`);
}

function citeLinks(list) {
  return (Array.isArray(list) ? list : []).flatMap((n, i) => (i ? [' ', citeLink(n)] : [citeLink(n)]));
}

function statusText(st) {
  if (st.cancelled) return 'cancelled';
  if (st.done) return 'done';
  return `${st.finished} of ${st.total} finished`;
}

function setProgress(el, st) {
  // max must be positive; an empty batch shows as an empty bar.
  el.max = Math.max(Number(st.total) || 0, 1);
  el.value = Math.min(Number(st.finished) || 0, el.max);
}

const readOnly = () => Boolean(state.me?.read_only);

/* ---------- Errors ---------- */

class ApiError extends Error {
  constructor(message, status = 0, code = '') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

// A mistake in the form, found before anything is sent; `field` gets the focus.
class FormError extends Error {
  constructor(message, field) {
    super(message);
    this.name = 'FormError';
    this.field = field;
  }
}

const isAbort = (e) => e?.name === 'AbortError';

// Shows an error in an alert element. Aborted requests (the view was left) and errors already
// dealt with (a 401 sends the user to sign in) are not errors for the user.
function showError(e, selector = '#error') {
  if (isAbort(e) || e?.handled) return;
  const el = $(selector) || $('#error');
  el.textContent = typeof e === 'string' ? e : e?.message || 'Something went wrong.';
  el.hidden = false;
}

function clearError(selector = '#error') {
  const el = $(selector);
  if (el) {
    el.textContent = '';
    el.hidden = true;
  }
}

/* ---------- API ---------- */

function setBusy(delta) {
  state.busy += delta;
  $('#loading').hidden = state.busy <= 0;
}

async function errorOf(res) {
  let message = '';
  let code = '';
  try {
    const body = await res.json();
    message = body?.error?.message || '';
    code = body?.error?.code || '';
  } catch {
    // Not the API's JSON (a proxy's page, say): the status line will do.
  }
  if (!message) message = `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`;
  return new ApiError(message, res.status, code);
}

// Every API call goes through here: it adds the token, turns an error body into an ApiError
// with the server's message, and sends the user back to sign in on a 401.
// `raw` returns the Response (for files and streams); `quiet` keeps the loading sign off.
async function api(path, {method = 'GET', body, headers = {}, signal, raw = false, quiet = false} = {}) {
  const init = {method, signal, headers: {...headers}, cache: 'no-store'};
  if (state.token) init.headers.Authorization = `Bearer ${state.token}`;
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (!quiet) setBusy(1);
  try {
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      if (isAbort(e)) throw e;
      throw new ApiError('Could not reach the trawl server. Check the connection and try again.', 0, 'network');
    }
    if (!res.ok) {
      const err = await errorOf(res);
      if (res.status === 401) {
        signedOut(err.message);
        err.handled = true;
      }
      throw err;
    }
    if (raw) return res;
    if (res.status === 204) return null;
    try {
      return await res.json();
    } catch (e) {
      if (isAbort(e)) throw e;
      throw new ApiError('The server sent an answer that could not be read.', res.status, 'bad_response');
    }
  } finally {
    if (!quiet) setBusy(-1);
  }
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// Server-sent events read from a fetch body (EventSource cannot send the Authorization header).
// Yields {event, data}; comment lines (keep-alives) are skipped; data lines join with "\n".
async function* sseEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data = [];
  let skipLF = false;
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      let chunk = decoder.decode(value, {stream: true});
      // A CRLF split across two chunks: its CR already ended the line.
      if (skipLF && chunk.startsWith('\n')) chunk = chunk.slice(1);
      skipLF = chunk.endsWith('\r');
      buffer += chunk;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === '') {
          if (data.length) yield {event: event || 'message', data: data.join('\n')};
          event = '';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// Follows a batch's event stream, calling onStatus(status, isDone) for each progress and the
// final done event. A stream that breaks before `done` is opened again after RETRY_MS, for as
// long as the view is shown. Resolves when the batch is done or the view is left.
async function streamBatch(view, id, onStatus) {
  let reported = false;
  while (view.alive) {
    try {
      const res = await api(`/v1/batches/${enc(id)}/events`, {
        signal: view.signal, raw: true, quiet: true, headers: {Accept: 'text/event-stream'},
      });
      for await (const ev of sseEvents(res.body)) {
        if (ev.event === 'progress' || ev.event === 'done') {
          const status = parseJson(ev.data);
          if (status && view.alive) onStatus(status, ev.event === 'done');
          if (ev.event === 'done') return;
        } else if (ev.event === 'error' && !reported) {
          reported = true; // once: the retries would repeat it every 2 seconds
          showError(`Live progress was interrupted: ${ev.data}`);
        }
      }
    } catch (e) {
      if (isAbort(e) || e.handled) return;
      // A 404 or 403 will not mend by asking again; a dropped connection or a 5xx may.
      if (e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429) {
        showError(e);
        return;
      }
    }
    await sleep(view, RETRY_MS);
  }
}

function sleep(view, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    view.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, {once: true});
  });
}

async function cancelBatch(view, id, button) {
  button.disabled = true;
  try {
    return await api(`/v1/batches/${enc(id)}`, {method: 'DELETE', signal: view.signal});
  } catch (e) {
    showError(e);
    return null;
  } finally {
    button.disabled = false;
  }
}

// crypto.randomUUID exists only in secure contexts (https, localhost); a server reached over
// plain http on the LAN still needs a key, and getRandomValues works everywhere.
function newUuid() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/* ---------- Session ---------- */

function storeToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage refused (private mode, quota): the token lasts until the page is reloaded.
  }
}

function loadToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

function updateSession() {
  const me = state.me;
  $('#session').hidden = !me;
  const who = $('#whoami');
  who.replaceChildren();
  if (me) who.append(me.name || shortId(me.id), ...(me.read_only ? [' ', h('span', {class: 'badge'}, 'read-only')] : []));
}

function forgetToken() {
  state.token = null;
  state.me = null;
  storeToken(null);
  updateSession();
}

// A 401 anywhere: the token was revoked or expired. The path stays, so signing in again
// continues where the user was.
function signedOut(message) {
  forgetToken();
  teardown();
  clearError();
  showSignin(message);
}

function showSignin(message) {
  mount('tpl-signin');
  document.title = 'Sign in — trawl';
  updateSession();
  if (message) showError(message, '#signin-error');
  const form = $('#signin');
  const input = $('#token');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    signIn(form, input);
  });
  input.focus();
}

async function signIn(form, input) {
  const token = input.value.trim();
  clearError('#signin-error');
  if (!token) {
    showError('Enter your API token.', '#signin-error');
    input.focus();
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  state.token = token;
  try {
    state.me = await api('/v1/token');
    storeToken(token);
    updateSession();
    render({focus: true}); // the path is unchanged: a deep link opens after signing in
  } catch (e) {
    if (e.handled) return; // a 401: signedOut has shown the form again, with the message
    state.token = null;
    showError(e, '#signin-error');
    button.disabled = false;
  }
}

/* ---------- Routing ---------- */

function route(path) {
  let m;
  if (path === '/') return {name: 'home'};
  if ((m = /^\/batches\/([^/]+)\/?$/.exec(path))) return {name: 'batch', id: decodeURIComponent(m[1])};
  if ((m = /^\/jobs\/([^/]+)\/?$/.exec(path))) return {name: 'report', id: decodeURIComponent(m[1])};
  return {name: 'notfound'};
}

// Each view gets an AbortController and its timers: leaving the view aborts its requests and
// streams and stops its polling, so a late answer never writes into the next view.
function newView() {
  const controller = new AbortController();
  const timers = new Set();
  const view = {
    signal: controller.signal,
    get alive() {
      return !controller.signal.aborted;
    },
    later(fn, ms) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (view.alive) fn();
      }, ms);
      timers.add(timer);
      return timer;
    },
    cancel(timer) {
      clearTimeout(timer);
      timers.delete(timer);
    },
    stop() {
      controller.abort();
      timers.forEach(clearTimeout);
      timers.clear();
    },
  };
  return view;
}

function teardown() {
  state.view?.stop();
  state.view = null;
  state.citeOpener = null;
}

function navigate(path) {
  // The same address again (the Batches link on the batches page) reloads without a new entry.
  const same = path === location.pathname + location.search + location.hash;
  history[same ? 'replaceState' : 'pushState'](null, '', path);
  window.scrollTo(0, 0);
  render({focus: true});
}

async function render({focus = false} = {}) {
  teardown();
  clearError();
  state.renderedPath = location.pathname;
  const view = (state.view = newView());
  if (!state.token) {
    showSignin();
    return;
  }
  if (!state.me) {
    try {
      state.me = await api('/v1/token', {signal: view.signal});
    } catch (e) {
      if (!isAbort(e) && !e.handled) showSignin(e.message);
      return;
    }
    updateSession();
  }
  if (!view.alive) return;
  const r = route(location.pathname);
  const show = {home: showHome, batch: showBatch, report: showReport, notfound: showNotFound}[r.name];
  // Each view mounts its template before its first await, so the heading is there to focus.
  show(view, r.id).catch((e) => showError(e));
  if (focus) {
    const heading = $('#view h1');
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({preventScroll: true});
    }
  }
}

// Internal links are real hrefs (middle-click and copy work); a plain click stays in the page.
function onLinkClick(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest?.('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || route(url.pathname).name === 'notfound') return;
  if (url.pathname === location.pathname && url.hash) return; // an anchor of this page
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}

function onPopState() {
  if (location.pathname === state.renderedPath) {
    onHash(); // only the fragment changed: the view stays
    return;
  }
  render({focus: true}).catch((e) => showError(e));
}

/* ---------- Home: submit form and batches list ---------- */

async function showHome(view) {
  mount('tpl-home');
  document.title = 'Batches — trawl';
  if (readOnly()) $('#submit-section').remove();
  else setupSubmit(view);
  await setupBatchList(view).load();
}

function setupSubmit(view) {
  const form = $('#submit-form');
  const fileInput = $('#file');
  const button = $('#submit');
  // One key per submission: kept while the form is unchanged, so a retry after an answer that
  // was lost (or a double click) returns the first batch instead of making a second.
  let idempotencyKey = null;
  const changed = () => { idempotencyKey = null; };
  form.addEventListener('input', changed);
  form.addEventListener('change', changed);
  fileInput.addEventListener('change', () => {
    const csv = isCsv(fileInput.files[0]);
    $('#template-hint').classList.toggle('required', csv);
    if (csv) $('#options').open = true; // the template is needed, and it lives in Options
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (button.disabled) return;
    clearError('#submit-error');
    button.disabled = true;
    try {
      const body = await readBatchForm();
      idempotencyKey = idempotencyKey || newUuid();
      // No abort signal: once sent, the batch may exist whether or not the user stays.
      const created = await api('/v1/batches', {method: 'POST', body, headers: {'Idempotency-Key': idempotencyKey}});
      idempotencyKey = null;
      if (view.alive) navigate(`/batches/${enc(created.batch_id)}`);
    } catch (err) {
      showError(err, '#submit-error');
      if (err instanceof FormError && err.field) {
        const details = err.field.closest('details');
        if (details) details.open = true;
        err.field.focus();
      }
    } finally {
      button.disabled = false;
    }
  });
}

const isCsv = (file) => Boolean(file && /\.csv$/i.test(file.name));

// A number input's value: undefined when empty; a FormError when it is not within bounds.
function numberInput(selector, {min, max, integer = false}, message) {
  const input = $(selector);
  if (input.validity.badInput) throw new FormError(message, input);
  const raw = input.value.trim();
  if (raw === '') return undefined;
  const n = Number(raw);
  const ok = Number.isFinite(n) && (!integer || Number.isInteger(n)) &&
    (min === undefined || n >= min) && (max === undefined || n <= max);
  if (!ok) throw new FormError(message, input);
  return n;
}

// The form as a BatchIn, with every empty or unset key left out.
async function readBatchForm() {
  const value = (selector) => $(selector).value.trim();
  const body = {};
  const questions = $('#questions').value.split(/\r\n|\r|\n/)
    .map((line) => line.trim()).filter(Boolean).map((query) => ({query}));
  if (questions.length) body.questions = questions;

  const file = $('#file').files[0];
  const template = value('#template');
  if (file && questions.length) {
    // A question without an id is numbered by its place: typed ones and the file's lines would
    // both start at 1.
    throw new FormError('Give the questions typed or as a file, not both in one batch.', $('#questions'));
  }
  if (file) {
    if (isCsv(file) && !template) {
      throw new FormError(
        'A CSV file needs a question template (under Options), such as "What is the capital of {country}?", where {country} names a column of the file.',
        $('#template'));
    }
    try {
      body.file = await file.text();
    } catch {
      throw new FormError(`Could not read the file ${file.name}.`, $('#file'));
    }
  }
  if (!body.questions && !file) throw new FormError('Enter at least one question, or choose a file.', $('#questions'));
  if (template) body.template = template;

  const options = {};
  const fields = value('#fields');
  if (fields) {
    let schema;
    try {
      schema = JSON.parse(fields);
    } catch (e) {
      throw new FormError(`Fields is not valid JSON: ${e.message}`, $('#fields'));
    }
    if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
      throw new FormError('Fields must be a JSON object: a JSON Schema such as {"type": "object", "properties": {…}}.', $('#fields'));
    }
    options.fields = schema;
  }
  const providers = value('#providers').split(',').map((p) => p.trim()).filter(Boolean);
  if (providers.length) options.providers = providers;
  const maxUrls = numberInput('#max-urls', {min: 1, max: 1000, integer: true}, 'Max URLs must be a whole number from 1 to 1000.');
  if (maxUrls !== undefined) options.max_urls = maxUrls;
  const reportType = $('#report-type').value;
  if (reportType) options.report_type = reportType;
  if (Object.keys(options).length) body.options = options;

  const budget = numberInput('#budget', {min: 0.01}, 'The budget must be a number of dollars, at least 0.01.');
  if (budget !== undefined) body.budget_usd = budget;
  const webhook = value('#webhook');
  if (webhook) {
    if (!isHttpUrl(webhook)) throw new FormError('The webhook must be an http:// or https:// address.', $('#webhook'));
    body.webhook = webhook;
  }
  return body;
}

function setupBatchList(view) {
  const tbody = $('#batches tbody');
  const more = $('#batches-more');
  const rows = new Map(); // batch_id → <tr>
  const waiting = []; // unfinished batches beyond MAX_STREAMS, polled until a stream frees up
  let streams = 0;
  let cursor = null;
  let pollTimer = null;

  const update = (status) => {
    const tr = rows.get(status.batch_id);
    if (tr) updateBatchRow(view, tr, status);
  };

  function watch(id) {
    if (streams >= MAX_STREAMS) {
      waiting.push(id);
      if (!pollTimer) pollTimer = view.later(poll, POLL_MS);
      return;
    }
    streams += 1;
    streamBatch(view, id, update).finally(() => {
      streams -= 1;
      const next = waiting.shift();
      if (next && view.alive) watch(next);
    });
  }

  async function poll() {
    pollTimer = null;
    for (const id of [...waiting]) { // one request at a time, for the same connection reason
      try {
        const status = await api(`/v1/batches/${enc(id)}`, {signal: view.signal, quiet: true});
        update(status);
        if (status.done && waiting.includes(id)) waiting.splice(waiting.indexOf(id), 1);
      } catch (e) {
        if (isAbort(e) || e.handled) return;
        // Anything else: the next round asks again.
      }
    }
    if (waiting.length && view.alive) pollTimer = view.later(poll, POLL_MS);
  }

  async function load() {
    more.disabled = true;
    try {
      const query = new URLSearchParams({limit: '20'});
      if (cursor) query.set('cursor', cursor);
      const page = await api(`/v1/batches?${query}`, {signal: view.signal});
      for (const status of page.batches || []) {
        if (rows.has(status.batch_id)) { // a batch made while paging can come twice
          update(status);
          continue;
        }
        const tr = batchRow(status);
        rows.set(status.batch_id, tr);
        tbody.append(tr);
        updateBatchRow(view, tr, status);
        if (!status.done) watch(status.batch_id);
      }
      cursor = page.next_cursor || null;
      more.hidden = !cursor;
      $('#batches-empty').hidden = rows.size > 0;
    } catch (e) {
      showError(e);
    } finally {
      more.disabled = false;
    }
  }

  more.addEventListener('click', load);
  return {load};
}

function batchRow(status) {
  const id = status.batch_id;
  return h('tr', {dataset: {batch: id}},
    h('td', {}, h('a', {class: 'batch-link', href: `/batches/${enc(id)}`},
      `${fmtTime(status.created_at)} · `, h('span', {class: 'mono'}, shortId(id)))),
    h('td', {}, h('progress', {class: 'batch-progress', 'aria-label': `Progress of batch ${shortId(id)}`})),
    h('td', {class: 'batch-state'}),
    h('td', {class: 'num batch-total'}),
    h('td', {class: 'num batch-cost'}),
    h('td', {class: 'batch-actions'}));
}

function updateBatchRow(view, tr, status) {
  setProgress($('.batch-progress', tr), status);
  $('.batch-state', tr).textContent = statusText(status);
  $('.batch-total', tr).textContent = fmtNum(status.total, 0);
  $('.batch-cost', tr).textContent = fmtUsd(status.cost_usd);
  const cell = $('.batch-actions', tr);
  const button = $('.cancel', cell);
  const cancellable = !readOnly() && !status.done && !status.cancelled;
  if (!cancellable) {
    button?.remove();
  } else if (!button) {
    const b = h('button', {type: 'button', class: 'cancel', 'aria-label': `Cancel batch ${shortId(status.batch_id)}`}, 'Cancel');
    b.addEventListener('click', async () => {
      const next = await cancelBatch(view, status.batch_id, b);
      if (next && view.alive) updateBatchRow(view, tr, next);
    });
    cell.append(b);
  }
}

/* ---------- Batch view ---------- */

async function showBatch(view, id) {
  mount('tpl-batch');
  document.title = `Batch ${shortId(id)} — trawl`;
  setText('#batch-id', id);
  const cancel = $('#cancel-batch');
  cancel.addEventListener('click', async () => {
    const status = await cancelBatch(view, id, cancel);
    if (status && view.alive) renderBatchStatus(status);
  });
  for (const format of ['md', 'jsonl', 'csv']) {
    const button = $(`#download-${format}`);
    button.addEventListener('click', () => downloadResults(view, id, format, button));
  }
  const jobs = setupJobs(view, id);
  jobs.load(true);

  let status;
  try {
    status = await api(`/v1/batches/${enc(id)}`, {signal: view.signal});
  } catch (e) {
    showError(e);
    return;
  }
  renderBatchStatus(status);
  $('#batch-detail').hidden = false;
  if (!status.done) {
    streamBatch(view, id, (next, done) => {
      renderBatchStatus(next);
      if (done) jobs.load(true);
    });
  }
}

function renderBatchStatus(status) {
  setProgress($('#batch-progress'), status);
  setText('#batch-state', statusText(status));
  setText('#batch-created', fmtTime(status.created_at));
  setText('#batch-cost', fmtUsd(status.cost_usd));
  $('#cancel-batch').hidden = readOnly() || status.done || status.cancelled;

  const counts = Object.entries(status.by_status || {}).filter(([, n]) => n > 0);
  const unfinished = (Number(status.total) || 0) - (Number(status.finished) || 0);
  if (unfinished > 0) counts.unshift(['not finished', unfinished]);
  $('#batch-counts').replaceChildren(...counts.map(([name, n]) =>
    h('li', {class: `count status-${name.replace(/\W+/g, '_')}`}, h('span', {class: 'count-name'}, name), ' ', h('strong', {}, fmtNum(n, 0)))));

  const unused = Object.entries(status.unused_sources || {}).filter(([, n]) => n > 0);
  const note = $('#batch-unused');
  note.textContent = unused.length
    ? `Sources not used: ${unused.map(([why, n]) => `${why.replace(/_/g, ' ')} ${fmtNum(n, 0)}`).join(', ')}.`
    : '';
  note.hidden = !unused.length;
}

function setupJobs(view, batchId) {
  const tbody = $('#jobs tbody');
  const more = $('#jobs-more');
  const filter = $('#job-filter');
  let cursor = null;
  let generation = 0; // a newer load (another filter) makes an older answer stale

  async function load(reset) {
    const mine = ++generation;
    const query = new URLSearchParams({limit: '100'});
    if (!reset && cursor) query.set('cursor', cursor);
    if (filter.value) query.set('status', filter.value);
    more.disabled = true;
    try {
      const page = await api(`/v1/batches/${enc(batchId)}/jobs?${query}`, {signal: view.signal});
      if (mine !== generation) return;
      if (reset) tbody.replaceChildren();
      tbody.append(...(page.jobs || []).map(jobRow));
      cursor = page.next_cursor || null;
      more.hidden = !cursor;
      $('#jobs-empty').hidden = tbody.rows.length > 0;
    } catch (e) {
      if (mine === generation) showError(e);
    } finally {
      if (mine === generation) more.disabled = false;
    }
  }

  filter.addEventListener('change', () => load(true));
  more.addEventListener('click', () => load(false));
  $('#jobs-refresh').addEventListener('click', () => load(true));
  return {load};
}

function jobRow(job) {
  const status = String(job.status ?? '');
  return h('tr', {dataset: {job: job.job_id}},
    h('td', {class: 'job-id mono'}, job.id),
    h('td', {}, h('a', {class: 'job-link', href: `/jobs/${enc(job.job_id)}`}, job.query || '(no question)')),
    h('td', {class: `job-status status-${status.replace(/\W+/g, '_')}`}, status));
}

async function downloadResults(view, id, format, button) {
  button.disabled = true;
  try {
    const res = await api(`/v1/batches/${enc(id)}/results?format=${format}`, {signal: view.signal, raw: true});
    const blob = await res.blob();
    saveBlob(blob, `batch-${id}.${format}`);
    // One page holds up to 1000 jobs; a longer batch says so with the next page's cursor.
    const note = $('#download-note');
    note.textContent = res.headers.get('X-Next-Cursor')
      ? 'This file holds the first 1000 questions only: use trawl results or the API (X-Next-Cursor) for the rest.'
      : '';
    note.hidden = !note.textContent;
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
  }
}

function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = h('a', {href: url, download: filename, hidden: true});
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked a little later: revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/* ---------- Report view ---------- */

async function showReport(view, jobId) {
  mount('tpl-report');
  document.title = 'Report — trawl';
  $('#report').addEventListener('click', onCiteClick);
  $('#citation-close').addEventListener('click', closeCitation);
  $('#report-refresh').addEventListener('click', () => loadReport(view, jobId));
  await loadReport(view, jobId);
}

async function loadReport(view, jobId) {
  if (view.reportLoading) return; // the Refresh button and the poll must not race
  view.reportLoading = true;
  view.cancel(view.pollTimer);
  let report;
  try {
    report = await api(`/v1/jobs/${enc(jobId)}/report`, {signal: view.signal, quiet: Boolean(view.polling)});
  } catch (e) {
    showError(e);
    // While pending, a dropped connection or a 5xx is worth another try; a 404 is not.
    if (view.polling && !(e.status >= 400 && e.status < 500)) view.pollTimer = view.later(() => loadReport(view, jobId), REPORT_POLL_MS);
    return;
  } finally {
    view.reportLoading = false;
  }
  if (!view.alive) return;
  renderReportHead(report);

  const pending = $('#report-pending');
  if (report.html == null) {
    view.polling = report.status === 'pending';
    pending.hidden = false;
    $('#report-refresh').hidden = !view.polling;
    setText('#report-pending-text', view.polling
      ? 'This question is still being researched; the page checks again every 3 seconds.'
      : 'No report was written for this question.');
    if (view.polling) view.pollTimer = view.later(() => loadReport(view, jobId), REPORT_POLL_MS);
    return;
  }
  view.polling = false;
  pending.hidden = true;
  renderAnswer(report.answer);
  // The server renders the report from markdown and sanitises it (src/render.rs): no raw HTML,
  // no images, links only to http(s) pages or to #cite-n. It is the one innerHTML in this app.
  const body = $('#report-body');
  body.innerHTML = report.html;
  body.hidden = false; // shown only with its content: "shown" means the report is there
  renderCitations(view, report.citations);
  const n = citeFromHash();
  if (n != null) openCitation(n, null, true);
  loadWorkProducts(view, jobId);
}

function renderReportHead(report) {
  setText('#report-query', report.query || '(no question)');
  document.title = `${truncate(report.query || 'Report', 60)} — trawl`;
  const status = setText('#report-status', report.status || '');
  status.className = `status-${String(report.status || '').replace(/\W+/g, '_')}`;
  setText('#report-qid', report.id != null ? `· question ${report.id}` : '');
  const back = $('#report-batch');
  if (report.batch_id) {
    back.href = `/batches/${enc(report.batch_id)}`;
    back.textContent = `Batch ${shortId(report.batch_id)}`;
  }
}

function renderAnswer(answer) {
  const slot = $('#answer-slot');
  const fields = Object.entries(answer?.fields || {});
  if (!fields.length) {
    slot.replaceChildren();
    return;
  }
  slot.replaceChildren(h('section', {'aria-labelledby': 'answer-h'},
    h('h3', {id: 'answer-h'}, 'Fields'),
    tableWrap('Answer fields', h('table', {id: 'answer'},
      thead(['Field', 'Value', 'Status', 'Sources', 'Quote']),
      h('tbody', {}, fields.map(([name, field]) => answerRow(name, field || {})))))));
}

function answerRow(name, field) {
  const status = String(field.status ?? '');
  const value = status === 'conflict' && Array.isArray(field.values)
    ? h('ul', {class: 'plain'}, field.values.map((v) => h('li', {}, fmtValue(v?.value), ' ', citeLinks(v?.sources))))
    : fmtValue(field.value);
  return h('tr', {dataset: {field: name}},
    h('th', {scope: 'row'}, name),
    h('td', {class: 'field-value'}, value),
    h('td', {class: `field-status status-${status.replace(/\W+/g, '_')}`}, status),
    h('td', {class: 'field-sources'}, citeLinks(field.sources)),
    h('td', {class: 'field-quote'}, field.quote || ''));
}

function renderCitations(view, citations) {
  const list = Array.isArray(citations) ? citations : [];
  view.citations = new Map(list.map((c) => [Number(c.n), c]));
  $('#citations').replaceChildren(...list.map((c) =>
    h('li', {id: `cite-${c.n}`, value: c.n, tabindex: -1},
      h('div', {class: 'src-title'}, c.title || 'Untitled'),
      h('div', {class: 'src-url'}, urlLink(c.url)),
      (c.quotes || []).map((q) => h('blockquote', {class: 'quote'}, q)))));
  $('#citations-section').hidden = !list.length;
}

function citeFromHash() {
  const m = /^#cite-(\d+)$/.exec(location.hash);
  return m ? Number(m[1]) : null;
}

function onHash() {
  if (!state.view?.citations) return; // the report is not shown (yet); it reads the hash when it is
  const n = citeFromHash();
  if (n != null) openCitation(n, null, true);
  else closeCitation();
}

function onCiteClick(e) {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // new tab: let it
  const a = e.target.closest?.('a[data-cite], a.cite, a[href^="#cite-"]');
  if (!a) return;
  const n = Number.parseInt(a.dataset.cite || (a.getAttribute('href') || '').slice('#cite-'.length), 10);
  if (!Number.isInteger(n)) return;
  e.preventDefault();
  // replaceState: the link is shareable, yet Back still leaves the report rather than the panel.
  history.replaceState(history.state, '', `${location.pathname}${location.search}#cite-${n}`);
  openCitation(n, a, false);
}

function openCitation(n, opener, scroll) {
  const panel = $('#citation');
  if (!panel) return;
  const citation = state.view?.citations?.get(n);
  setText('#citation-n', String(n));
  setText('#citation-title', citation ? citation.title || 'Untitled' : `Citation ${n} is not in this report's list`);
  const link = $('#citation-url');
  if (isHttpUrl(citation?.url)) link.href = citation.url;
  else link.removeAttribute('href');
  link.textContent = citation?.url || '';
  const first = citation?.quotes?.[0];
  const quote = setText('#citation-quote', first || 'No quote recorded');
  quote.classList.toggle('empty', !first);

  for (const li of document.querySelectorAll('#citations li.selected')) {
    li.classList.remove('selected');
    li.removeAttribute('aria-current');
  }
  const item = document.getElementById(`cite-${n}`);
  if (item) {
    item.classList.add('selected');
    item.setAttribute('aria-current', 'true');
    if (scroll) item.scrollIntoView({block: 'center'});
  }
  panel.hidden = false;
  state.citeOpener = opener || item || null;
  $('#citation-close').focus({preventScroll: true});
}

function closeCitation() {
  const panel = $('#citation');
  if (!panel || panel.hidden) return;
  panel.hidden = true;
  for (const li of document.querySelectorAll('#citations li.selected')) {
    li.classList.remove('selected');
    li.removeAttribute('aria-current');
  }
  if (citeFromHash() != null) history.replaceState(history.state, '', location.pathname + location.search);
  const opener = state.citeOpener;
  state.citeOpener = null;
  if (opener?.isConnected) opener.focus();
}

async function loadWorkProducts(view, jobId) {
  // Either file may be missing (a job that failed early has no sources): then no table.
  const get = (name) => api(`/v1/jobs/${enc(jobId)}/work-products/${name}`, {signal: view.signal})
    .catch((e) => {
      if (e.status !== 404) showError(e);
      return null;
    });
  const [sources, search] = await Promise.all([get('sources.json'), get('search.json')]);
  if (!view.alive) return;
  const slot = $('#work-products');
  slot.replaceChildren();
  if (Array.isArray(sources)) slot.append(sourcesSection(sources));
  if (search && typeof search === 'object') slot.append(searchSection(search));
}

function sourcesSection(sources) {
  return h('section', {class: 'work-product', 'aria-labelledby': 'sources-h'},
    h('h3', {id: 'sources-h'}, `Sources (${sources.length})`),
    tableWrap('Sources', h('table', {id: 'sources-table'},
      thead(['#', 'Source', 'Outcome', 'Cited as', 'Relevance', 'Level', 'Size']),
      h('tbody', {}, sources.map(sourceRow)))));
}

function sourceRow(s) {
  return h('tr', {dataset: {idx: s.idx}},
    h('td', {class: 'num'}, s.idx ?? '—'),
    h('td', {}, sourceCell(s.title, s.url)),
    h('td', {class: 'outcome'}, outcomeText(s.outcome)),
    h('td', {}, s.cited_as != null ? citeLink(s.cited_as) : '—'),
    h('td', {class: 'num'}, fmtNum(s.relevance, 2)),
    h('td', {class: 'num'}, s.level ?? '—'),
    h('td', {class: 'num'}, fmtBytes(s.bytes)));
}

function outcomeText(o) {
  if (!o) return '—';
  const parts = [o.outcome];
  if (o.level != null) parts.push(`level ${o.level}`);
  if (o.content_type) parts.push(o.content_type);
  if (o.reason) parts.push(o.reason);
  return parts.filter(Boolean).join(' · ');
}

function searchSection(s) {
  const analysis = s.analysis || {};
  const results = Array.isArray(s.results) ? s.results : [];
  const attempts = Array.isArray(s.attempts) ? s.attempts : [];
  const answers = (Array.isArray(s.answers) ? s.answers : [])
    .map((a) => (Array.isArray(a) ? `${a[0]}: ${a[1]}` : String(a)));
  return h('section', {class: 'work-product', 'aria-labelledby': 'search-h'},
    h('h3', {id: 'search-h'}, 'Search'),
    h('dl', {class: 'facts'},
      fact('Query', s.query),
      fact('Intent', analysis.intent),
      fact('Language', analysis.language),
      fact('Data points', Array.isArray(analysis.target_data_points) ? analysis.target_data_points.join(', ') : null)),
    textList('Sub-queries', 'sub-queries', analysis.sub_queries),
    textList('Notes', 'search-notes', s.notes),
    textList('Answers from the providers', 'provider-answers', answers),
    h('h4', {}, `Results (${results.length})`),
    tableWrap('Search results', h('table', {id: 'search-table'},
      thead(['Provider', 'Position', 'Result', 'Score', 'Selected', 'Reason']),
      h('tbody', {}, results.map(searchRow)))),
    attempts.length ? [
      h('h4', {}, 'Attempts'),
      tableWrap('Search attempts', h('table', {id: 'attempts-table'},
        thead(['Provider', 'Query', 'Page', 'Outcome', 'Detail']),
        h('tbody', {}, attempts.map((a) => h('tr', {},
          h('td', {}, a.provider ?? ''), h('td', {}, a.query ?? ''), h('td', {class: 'num'}, a.page ?? ''),
          h('td', {}, a.outcome ?? ''), h('td', {}, a.detail ?? '')))))),
    ] : null);
}

function searchRow(r) {
  const result = r.result || {};
  return h('tr', {class: r.selected ? 'selected' : null},
    h('td', {}, result.provider ?? '—'),
    h('td', {class: 'num'}, result.position ?? '—'),
    h('td', {}, sourceCell(r.title || result.title, r.url || result.url),
      result.snippet ? h('div', {class: 'snippet'}, result.snippet) : null),
    h('td', {class: 'num'}, fmtNum(r.score, 3)),
    h('td', {}, r.selected ? 'yes' : 'no'),
    h('td', {}, r.reason || ''));
}

function fact(term, value) {
  return value == null || value === '' ? null : [h('dt', {}, term), h('dd', {}, String(value))];
}

function textList(title, id, items) {
  const list = (Array.isArray(items) ? items : []).filter((x) => x != null && x !== '');
  if (!list.length) return null;
  return [h('h4', {}, title), h('ul', {id}, list.map((x) => h('li', {}, typeof x === 'string' ? x : JSON.stringify(x))))];
}

/* ---------- Not found ---------- */

async function showNotFound() {
  mount('tpl-notfound');
  document.title = 'Not found — trawl';
}

/* ---------- Start ---------- */

function start() {
  document.addEventListener('click', onLinkClick);
  window.addEventListener('popstate', onPopState);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && $('#citation')?.hidden === false) closeCitation();
  });
  $('#signout').addEventListener('click', () => {
    forgetToken();
    navigate('/');
  });
  state.token = loadToken();
  render().catch((e) => showError(e));
}

start();
