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
  const MARKER_HOVER_PX = 8;
  const colour = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const $ = (id) => document.getElementById(id);

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

  async function api(path) {
    const headers = { Accept: "application/json" };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(path, { headers, cache: "no-store" });
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
        if (entry.plot) entry.plot.destroy();
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
    const chart = document.createElement("div");
    chart.className = "chart";
    const reason = document.createElement("p");
    reason.className = "reason";
    card.append(title, chart, reason);
    return { stream, card, facts, chart, reason, rows: [], lastT: null, plot: null, top: 1 };
  }

  // Operators needed = ceil(filtered / (capacity x utilisation)) without a backlog: the
  // threshold lines sit at n times that volume.
  function unitVolume(stream) {
    const policy = stream.config.policy;
    return policy.capacity * (policy.utilisation ?? 1);
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
      last ? `t ${formatT(last.t)}` : "no sample yet",
    ];
    entry.facts.textContent = parts.filter(Boolean).join(" · ");
  }

  async function refresh(entry) {
    const { stream } = entry;
    if (entry.lastT === null && stream.t === null) {
      draw(entry);
      return;
    }
    let since = entry.lastT ?? stream.t - state.window;
    const fresh = [];
    do {
      const query = new URLSearchParams({ limit: String(HISTORY_PAGE), since: String(since) });
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
    entry.rows = entry.rows.concat(fresh);
    if (entry.rows.length) {
      entry.lastT = entry.rows[entry.rows.length - 1].t;
      const start = entry.lastT - state.window;
      const first = entry.rows.findIndex((row) => row.t > start);
      entry.rows = entry.rows.slice(Math.max(first, entry.rows.length - MAX_POINTS));
    }
    describe(entry);
    draw(entry);
  }

  function columns(rows) {
    const running = rows.map((row) => (row.running ?? null));
    return [
      rows.map((row) => row.t),
      rows.map((row) => row.volume),
      rows.map((row) => row.filtered),
      rows.map((row) => row.operators),
      running,
    ];
  }

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
    const unit = unitVolume(entry.stream);
    let top = 0;
    for (const row of rows) {
      top = Math.max(top, row.volume * 1.05, row.filtered * 1.05, (row.operators + 0.5) * unit);
      if (row.running != null) top = Math.max(top, (row.running + 0.5) * unit);
    }
    entry.top = top;
    const data = columns(rows);
    if (entry.plot) {
      entry.plot.setData(data);
    } else {
      entry.chart.replaceChildren();
      entry.plot = new uPlot(chartOptions(entry), data, entry.chart);
    }
    card.dataset.drawn = String(rows.length);
  }

  function chartOptions(entry) {
    const unit = unitVolume(entry.stream);
    const epoch = entry.rows[0].t > 1e9; // seconds since 1970: a time axis
    const stepped = uPlot.paths.stepped({ align: 1 });
    return {
      width: Math.max(300, entry.chart.clientWidth || 560),
      height: 240,
      cursor: { drag: { x: true, y: false }, points: { size: 5 } },
      legend: { live: true },
      scales: {
        x: { time: epoch },
        v: { range: () => [0, entry.top] },
        n: { range: () => [0, entry.top / unit] },
      },
      axes: [
        { label: epoch ? null : "t (s)", labelSize: epoch ? 0 : 18 },
        { scale: "v", label: "tuples/s", size: 55 },
        {
          scale: "n",
          side: 1,
          label: "operators",
          size: 40,
          grid: { show: false },
          splits: (u) => thresholds(u, entry).map((k) => k),
          values: (u, splits) => splits.map((k) => String(k)),
        },
      ],
      series: [
        { label: "t", value: (u, t) => (t == null ? "–" : formatT(t)) },
        { label: "raw", scale: "v", stroke: colour("--raw"), width: 1, value: numberValue },
        { label: "filtered", scale: "v", stroke: colour("--filtered"), width: 2, value: numberValue },
        { label: "decided", scale: "n", stroke: colour("--decided"), width: 2, paths: stepped },
        {
          label: "running",
          scale: "n",
          stroke: colour("--running"),
          width: 2,
          dash: [6, 4],
          paths: stepped,
        },
      ],
      hooks: {
        drawAxes: [(u) => drawThresholds(u, entry)],
        draw: [(u) => drawMarkers(u, entry)],
        setCursor: [(u) => hover(u, entry)],
      },
    };
  }

  function numberValue(u, value) {
    return value == null ? "–" : value.toFixed(value >= 100 ? 0 : 1);
  }

  function formatT(t) {
    return t > 1e9 ? new Date(t * 1000).toLocaleTimeString() : String(+t.toFixed(3));
  }

  // n = 1, 2, ... up to the top of the chart, every step-th when there are more than 10.
  function thresholds(u, entry) {
    const most = Math.floor(entry.top / unitVolume(entry.stream));
    const step = Math.max(1, Math.ceil(most / 10));
    const counts = [];
    for (let k = step; k <= most; k += step) counts.push(k);
    return counts;
  }

  function drawThresholds(u, entry) {
    const unit = unitVolume(entry.stream);
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = colour("--threshold");
    ctx.lineWidth = devicePixelRatio;
    ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.beginPath();
    for (const k of thresholds(u, entry)) {
      const y = Math.round(u.valToPos(k * unit, "v", true)) + 0.5;
      ctx.moveTo(bbox.left, y);
      ctx.lineTo(bbox.left + bbox.width, y);
    }
    ctx.stroke();
    ctx.restore();
  }

  // A triangle on the decided step at each scaling operation: up, or down.
  function drawMarkers(u, entry) {
    const { ctx, bbox } = u;
    const size = 5 * devicePixelRatio;
    ctx.save();
    for (const row of entry.rows) {
      if (row.action === "none") continue;
      const x = u.valToPos(row.t, "x", true);
      if (x < bbox.left || x > bbox.left + bbox.width) continue;
      const y = u.valToPos(row.operators, "n", true);
      const tip = row.action === "up" ? -size : size;
      ctx.fillStyle = colour(row.action === "up" ? "--decided" : "--filtered");
      ctx.beginPath();
      ctx.moveTo(x, y + tip);
      ctx.lineTo(x - size, y - tip);
      ctx.lineTo(x + size, y - tip);
      ctx.closePath();
      ctx.fill();
    }
    ctx.restore();
  }

  // Under the chart, the reason of the decision under the cursor; near a scaling operation's
  // marker, a tooltip with that operation's reason.
  function hover(u, entry) {
    const tooltip = $("tooltip");
    const { left, top, idx } = u.cursor;
    if (left == null || left < 0 || idx == null) {
      tooltip.hidden = true;
      entry.reason.textContent = "";
      return;
    }
    const row = entry.rows[idx];
    if (row) entry.reason.textContent = `t ${formatT(row.t)}: ${row.reason}`;
    let nearest = null;
    let distance = MARKER_HOVER_PX;
    for (const candidate of entry.rows) {
      if (candidate.action === "none") continue;
      const away = Math.abs(u.valToPos(candidate.t, "x") - left);
      if (away <= distance) {
        nearest = candidate;
        distance = away;
      }
    }
    if (!nearest) {
      tooltip.hidden = true;
      return;
    }
    const arrow = nearest.action === "up" ? "▲ up" : "▼ down";
    const heading = document.createElement("b");
    heading.textContent = `${arrow} ${nearest.previous} → ${nearest.operators} at t ${formatT(nearest.t)}`;
    tooltip.replaceChildren(heading, document.createElement("br"), nearest.reason);
    const box = u.over.getBoundingClientRect();
    tooltip.style.left = `${Math.min(box.left + left + 12, innerWidth - 340)}px`;
    tooltip.style.top = `${box.top + top + 12}px`;
    tooltip.hidden = false;
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
    for (const entry of state.charts.values()) {
      if (entry.plot) entry.plot.destroy();
    }
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
      if (entry.plot) entry.plot.setSize({ width: entry.chart.clientWidth, height: 240 });
    }
  });

  state.pageSize = Number($("page-size").value);
  state.window = Number($("window").value);
  setInterval(() => {
    if ($("live").checked) tick();
  }, REFRESH_MS);
  if (state.tokens && !sessionStorage.getItem(TOKEN_KEY)) {
    askForToken();
    status("needs a token", true);
  } else {
    tick();
  }
  window.steadyscaleDashboard = { state, tick };
})();
