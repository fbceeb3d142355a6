// The steadyscale dashboard: every stream from GET /v1/streams, a chart for each one in view
// from GET /v1/streams/{id}/history, refreshed every few seconds. Nothing is loaded from
// anywhere but this service (its Content-Security-Policy says so to the browser).
"use strict";
(() => {
  const TOKEN_KEY = "steadyscale.token";
  const REFRESH_MS = 5000; // charts in view: new decisions since the last one drawn
  const LIST_MS = 30000; // the stream list (new and deleted streams, counts)
  const LIST_PAGE = 1000; // the most GET /v1/streams answers at once
  const HISTORY_PAGE = 10000;
  const MAX_POINTS = 20000; // per chart; a longer window shows its last MAX_POINTS decisions
  const $ = (id) => document.getElementById(id);
  const { chart, whatIf } = window.steadyscale;

  const state = {
    streams: [],
    query: "",
    page: 0,
    pageSize: 8,
    window: 900,
    charts: new Map(), // stream id -> chart entry, for the streams in view only
    listedAt: 0,
    busy: false,
    again: false, // asked to update while it was: once more when done
    tokens: document.body.dataset.tokens === "required",
  };

  class Unauthorized extends Error {}

  // GET (or, with options, POST) one of the service's JSON routes, with the token if any.
  async function api(path, options = {}) {
    const headers = { Accept: "application/json" };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(path, { ...options, headers, cache: "no-store" });
    if (response.status === 401) throw new Unauthorized("the token was refused");
    if (!response.ok) {
      let detail = response.statusText;
      try {
        detail = (await response.json()).detail;
      } catch (_) {
        // not a Problem body: the status text says enough
      }
      const error = new Error(`${response.status}: ${detail}`);
      error.status = response.status;
      throw error;
    }
    return response.json();
  }

  async function loadStreams() {
    const streams = [];
    let after = null;
    do {
      const query = new URLSearchParams({ limit: String(LIST_PAGE) });
      if (after !== null) query.set("after", after);
      const page = await api("/v1/streams?" + query);
      streams.push(...page.streams);
      after = page.next_after;
    } while (after !== null);
    state.streams = streams;
    state.listedAt = Date.now();
    // PUT ?reset=true puts another stream under the same id and forgets the history: its
    // chart is drawn again from the start.
    const listed = new Map(streams.map((stream) => [stream.id, stream]));
    for (const [id, entry] of state.charts) {
      const stream = listed.get(id);
      if (stream && replaced(entry, stream)) {
        forget(entry);
        state.charts.delete(id);
      }
    }
  }

  function matching() {
    const query = state.query.trim().toLowerCase();
    return query ? state.streams.filter((s) => s.id.toLowerCase().includes(query)) : state.streams;
  }

  // The streams of the current page get a card and a chart; every other chart is destroyed,
  // so that the page costs the same with 10 streams or 10,000.
  function render() {
    const found = matching();
    const pages = Math.max(1, Math.ceil(found.length / state.pageSize));
    state.page = Math.min(state.page, pages - 1);
    const inView = found.slice(state.page * state.pageSize, (state.page + 1) * state.pageSize);
    const total = state.streams.length;
    const shown = inView.length
      ? `${state.page * state.pageSize + 1}–${state.page * state.pageSize + inView.length}`
      : "none";
    $("page-info").textContent =
      `page ${state.page + 1} of ${pages} · streams ${shown} of ${found.length}` +
      (found.length === total ? "" : ` matching (${total} in all)`);
    $("previous").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;

    const ids = new Set(inView.map((s) => s.id));
    for (const [id, entry] of state.charts) {
      if (!ids.has(id)) {
        forget(entry);
        state.charts.delete(id);
      }
    }
    const cards = inView.map((stream) => {
      let entry = state.charts.get(stream.id);
      if (!entry) {
        entry = newEntry(stream);
        state.charts.set(stream.id, entry);
      }
      entry.stream = stream;
      entry.view.unit = chart.unitVolume(stream.config.policy);
      describe(entry);
      return entry.card;
    });
    $("streams").replaceChildren(...cards);
    if (!inView.length) {
      const empty = document.createElement("p");
      empty.className = "empty";
      empty.textContent = total ? "No stream matches." : "No stream yet: PUT /v1/streams/{id}.";
      $("streams").append(empty);
    }
  }

  // A stream listed (just now) with another configuration, or with no sample or an older last
  // sample than the chart drew, was replaced since the chart's rows were read.
  function replaced(entry, stream) {
    if (JSON.stringify(entry.stream.config) !== JSON.stringify(stream.config)) return true;
    return entry.lastT !== null && (stream.t === null || stream.t < entry.lastT);
  }

  function forget(entry) {
    if (entry.plot) entry.plot.destroy();
    whatIf.close(entry);
  }

  function newEntry(stream) {
    const card = document.createElement("section");
    card.className = "stream";
    card.dataset.stream = stream.id;
    const title = document.createElement("h2");
    const name = document.createElement("span");
    name.textContent = stream.id;
    const facts = document.createElement("span");
    facts.className = "facts";
    title.append(name, facts);
    const plot = document.createElement("div");
    plot.className = "chart";
    const reason = document.createElement("p");
    reason.className = "reason";
    card.append(title, plot, reason);
    const entry = { stream, card, facts, chart: plot, reason, rows: [], lastT: null, since: null };
    entry.plot = null;
    entry.view = { unit: chart.unitVolume(stream.config.policy), top: 1, rows: [], reason };
    entry.view.series = SERIES;
    title.append(whatIf.button(entry, api));
    return entry;
  }

  function describe(entry) {
    const { stream, rows } = entry;
    const last = rows.length ? rows[rows.length - 1] : null;
    const running = rows.findLast((row) => row.running !== null && row.running !== undefined);
    const filter = stream.config.filter ? stream.config.filter.name : "default";
    const parts = [
      `decided ${last ? last.operators : stream.operators}`,
      running ? `running ${running.running}` : null,
      `capacity ${stream.config.policy.capacity} tuples/s`,
      `filter ${filter}`,
      last ? `t ${chart.formatT(last.t)}` : "no sample yet",
      sourceFact(stream.source_health),
    ];
    entry.facts.textContent = parts.filter(Boolean).join(" · ");
  }

  // A polled stream's source (docs/pull.md): fine, or failing and why, and the fallback.
  function sourceFact(health) {
    if (!health) return null;
    if (!health.failures) return health.last_success === null ? "source: no poll yet" : "source ok";
    const fallback = health.fallback === null ? "" : `, fallback ${health.fallback}`;
    return `source failing ×${health.failures}${fallback}: ${health.last_error}`;
  }

  async function refresh(entry) {
    const { stream } = entry;
    // First the window before the stream's last sample as listed (all of it before any).
    let since = entry.lastT ?? (stream.t === null ? null : stream.t - state.window);
    if (entry.lastT === null) entry.since = since;
    const fresh = [];
    do {
      const query = new URLSearchParams({ limit: String(HISTORY_PAGE) });
      if (since !== null) query.set("since", String(since));
      const path = `/v1/streams/${encodeURIComponent(stream.id)}/history?${query}`;
      let page;
      try {
        page = await api(path);
      } catch (error) {
        if (error.status === 404) {
          state.listedAt = 0; // deleted: the next refresh lists the streams again
          return;
        }
        throw error;
      }
      fresh.push(...page.decisions);
      since = page.next_since;
    } while (since !== null && fresh.length < MAX_POINTS);
    if (!fresh.length && entry.plot) return;
    const rows = entry.rows.concat(fresh);
    if (rows.length) {
      entry.lastT = rows[rows.length - 1].t;
      const start = entry.lastT - state.window;
      const cut = Math.max(rows.findIndex((row) => row.t > start), rows.length - MAX_POINTS);
      // The rows drawn are exactly those with t > since: what a what-if replays.
      if (cut > 0) entry.since = rows[cut - 1].t;
      entry.rows = rows.slice(cut);
    }
    describe(entry);
    draw(entry);
  }

  function columns(rows) {
    return [
      rows.map((row) => row.t),
      rows.map((row) => row.volume),
      rows.map((row) => row.filtered),
      rows.map((row) => row.operators),
      rows.map((row) => row.running ?? null),
    ];
  }

  const SERIES = [
    { label: "raw", scale: "v", stroke: "--raw" },
    { label: "filtered", scale: "v", stroke: "--filtered", width: 2 },
    { label: "decided", scale: "n", stroke: "--decided", width: 2, stepped: true },
    { label: "running", scale: "n", stroke: "--running", width: 2, dash: [6, 4], stepped: true },
  ];

  function draw(entry) {
    const { rows, card } = entry;
    if (state.charts.get(entry.stream.id) !== entry) return; // left the page meanwhile
    card.dataset.points = String(rows.length);
    card.dataset.scalings = String(rows.filter((row) => row.action !== "none").length);
    card.dataset.running = String(rows.filter((row) => row.running != null).length);
    if (!rows.length) {
      if (!entry.chart.firstChild) {
        const empty = document.createElement("p");
        empty.className = "empty";
        empty.textContent = "No sample yet.";
        entry.chart.append(empty);
      }
      return;
    }
    entry.view.rows = rows;
    entry.view.top = chart.top(entry.view.unit, rows);
    if (entry.plot) {
      entry.plot.setData(columns(rows));
    } else {
      entry.plot = chart.create(entry.chart, entry.view, columns(rows));
    }
    card.dataset.drawn = String(rows.length);
  }

  function status(text, error = false) {
    $("status").textContent = text;
    $("status").classList.toggle("error", error);
  }

  function askForToken(message) {
    $("token-form").hidden = false;
    $("token-error").textContent = message || "";
    $("token").focus();
  }

  async function tick() {
    if (!$("token-form").hidden) return;
    if (state.busy) {
      state.again = true;
      return;
    }
    state.busy = true;
    try {
      if (Date.now() - state.listedAt > LIST_MS) {
        await loadStreams();
        render();
      }
      await Promise.all([...state.charts.values()].map(refresh));
      status(`${state.streams.length} streams · updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (error instanceof Unauthorized) {
        sessionStorage.removeItem(TOKEN_KEY);
        askForToken("That token was refused.");
        status("needs a token", true);
      } else {
        status(`could not update: ${error.message}`, true);
      }
    } finally {
      state.busy = false;
      if (state.again) {
        state.again = false;
        tick();
      }
    }
  }

  function reshow() {
    render();
    tick();
  }

  $("search").addEventListener("input", (event) => {
    state.query = event.target.value;
    state.page = 0;
    reshow();
  });
  $("previous").addEventListener("click", () => {
    state.page -= 1;
    reshow();
  });
  $("next").addEventListener("click", () => {
    state.page += 1;
    reshow();
  });
  $("page-size").addEventListener("change", (event) => {
    state.pageSize = Number(event.target.value);
    state.page = 0;
    reshow();
  });
  $("window").addEventListener("change", (event) => {
    state.window = Number(event.target.value);
    for (const entry of state.charts.values()) forget(entry);
    state.charts.clear();
    reshow();
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $("token").value = "";
    $("token-form").hidden = true;
    state.listedAt = 0;
    tick();
  });
  addEventListener("resize", () => {
    for (const entry of state.charts.values()) {
      if (entry.plot) chart.fit(entry.plot, entry.chart);
      whatIf.fit(entry);
    }
  });

  state.pageSize = Number($("page-size").value);
  state.window = Number($("window").value);
  // A tab in the background asks nothing.
  setInterval(() => {
    if ($("live").checked && !document.hidden) tick();
  }, REFRESH_MS);
  if (state.tokens && !sessionStorage.getItem(TOKEN_KEY)) {
    askForToken();
    status("needs a token", true);
  } else {
    tick();
  }
  window.steadyscaleDashboard = { state, tick };
})();
