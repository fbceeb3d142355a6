// A card's "what if" panel: the samples in view through another configuration, beside what
// the stream decided. A dry run: POST /v1/streams/{id}/what-if stores nothing.
"use strict";
window.steadyscale = window.steadyscale || {};
window.steadyscale.whatIf = (() => {
  const { chart } = window.steadyscale;

  const SERIES = [
    { label: "raw", scale: "v", stroke: "--raw" },
    { label: "filtered", scale: "v", stroke: "--filtered" },
    { label: "what-if filtered", scale: "v", stroke: "--what-if", width: 2 },
    { label: "decided", scale: "n", stroke: "--decided", width: 2, stepped: true },
    { label: "what-if decided", scale: "n", stroke: "--what-if", width: 2, dash: [6, 3], stepped: true },
  ];

  function button(entry, api) {
    const open = document.createElement("button");
    open.type = "button";
    open.className = "what-if-open";
    open.textContent = "what if…";
    open.title = "The samples in view through another configuration: a dry run, nothing is stored.";
    open.addEventListener("click", () => (entry.whatIf ? close(entry) : show(entry, api)));
    return open;
  }

  function element(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text) made.textContent = text;
    return made;
  }

  function show(entry, api) {
    const panel = element("div", "what-if");
    const label = element(
      "label",
      null,
      "What if this stream had this configuration (as PUT takes it)? The samples in view are " +
        "replayed from the first, with the filter's state empty; nothing is stored.",
    );
    const spec = element("textarea");
    spec.rows = 7;
    spec.spellcheck = false;
    spec.setAttribute("aria-label", "configuration to replay the samples through");
    const { filter, policy, guards } = entry.stream.config;
    const operators = entry.rows.length ? entry.rows[0].previous : entry.stream.config.operators;
    spec.value = JSON.stringify({ filter, policy, guards, operators }, null, 2);
    const run = element("button", "what-if-run", "replay");
    run.type = "button";
    const summary = element("p", "what-if-summary");
    const container = element("div", "chart");
    const reason = element("p", "reason");
    panel.append(label, spec, run, summary, container, reason);
    entry.card.append(panel);
    entry.whatIf = { panel, spec, summary, container, reason, plot: null };
    run.addEventListener("click", () => replay(entry, api));
  }

  // Operator-seconds: each decision's count held until the next sample.
  function operatorSeconds(rows) {
    let total = 0;
    for (let i = 0; i + 1 < rows.length; i += 1) {
      total += rows[i].operators * (rows[i + 1].t - rows[i].t);
    }
    return Math.round(total);
  }

  async function replay(entry, api) {
    const panel = entry.whatIf;
    panel.summary.classList.remove("error");
    let config;
    try {
      config = JSON.parse(panel.spec.value);
    } catch (error) {
      panel.summary.textContent = `Not JSON: ${error.message}`;
      panel.summary.classList.add("error");
      return;
    }
    if (!entry.rows.length) {
      panel.summary.textContent = "No sample in view to replay.";
      return;
    }
    const query = new URLSearchParams({ limit: String(entry.rows.length) });
    if (entry.since !== null) query.set("since", String(entry.since));
    const path = `/v1/streams/${encodeURIComponent(entry.stream.id)}/what-if?${query}`;
    let answer;
    try {
      answer = await api(path, { method: "POST", body: JSON.stringify(config) });
    } catch (error) {
      panel.summary.textContent = `Refused: ${error.message}`;
      panel.summary.classList.add("error");
      return;
    }
    if (entry.whatIf !== panel) return; // closed meanwhile
    draw(entry, config, answer);
  }

  function draw(entry, config, answer) {
    const panel = entry.whatIf;
    const decisions = answer.decisions;
    const decided = new Map(entry.rows.map((row) => [row.t, row]));
    const same = decisions.map((d) => decided.get(d.t)).filter(Boolean);
    const unit = chart.unitVolume(config.policy ?? entry.stream.config.policy);
    const view = {
      unit,
      top: Math.max(chart.top(unit, decisions), chart.top(unit, same)),
      rows: decisions,
      reason: panel.reason,
      markers: chart.colour("--what-if"),
      series: SERIES,
    };
    const data = [
      decisions.map((d) => d.t),
      decisions.map((d) => d.volume),
      decisions.map((d) => decided.get(d.t)?.filtered ?? null),
      decisions.map((d) => d.filtered),
      decisions.map((d) => decided.get(d.t)?.operators ?? null),
      decisions.map((d) => d.operators),
    ];
    if (panel.plot) panel.plot.destroy();
    panel.plot = decisions.length ? chart.create(panel.container, view, data) : null;
    const actual = same.filter((row) => row.action !== "none").length;
    panel.summary.textContent =
      `Over these ${decisions.length} samples — what if: ${answer.scaling_operations} scaling ` +
      `operations, ${operatorSeconds(decisions)} operator-seconds; as decided: ${actual} and ` +
      `${operatorSeconds(same)}.`;
    panel.panel.dataset.points = String(decisions.length);
    panel.panel.dataset.scalings = String(answer.scaling_operations);
  }

  function close(entry) {
    if (!entry.whatIf) return;
    if (entry.whatIf.plot) entry.whatIf.plot.destroy();
    entry.whatIf.panel.remove();
    entry.whatIf = null;
  }

  function fit(entry) {
    if (entry.whatIf && entry.whatIf.plot) chart.fit(entry.whatIf.plot, entry.whatIf.container);
  }

  return { button, close, fit };
})();
