// One stream's chart (uPlot): volumes on the left axis in tuples/s, operator counts on the right
// axis, scaled so that count n sits on the threshold line n x capacity; a triangle on each
// scaling operation, its reason in a tooltip when the cursor is near it.
"use strict";
window.steadyscale = window.steadyscale || {};
window.steadyscale.chart = (() => {
  const MARKER_HOVER_PX = 8;
  const HEIGHT = 240;
  const colour = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  // Operators needed = ceil(filtered / capacity) without a backlog: the threshold lines sit
  // at n times that volume.
  function unitVolume(policy) {
    return policy.capacity;
  }

  function formatT(t) {
    return t > 1e9 ? new Date(t * 1000).toLocaleTimeString() : String(+t.toFixed(3));
  }

  function numberValue(u, value) {
    return value == null ? "–" : value.toFixed(value >= 100 ? 0 : 1);
  }

  // The top of the chart: every volume, and one half-step above every count.
  function top(unit, rows) {
    let highest = unit;
    for (const row of rows) {
      highest = Math.max(highest, row.volume * 1.05, row.filtered * 1.05);
      highest = Math.max(highest, (row.operators + 0.5) * unit);
      if (row.running != null) highest = Math.max(highest, (row.running + 0.5) * unit);
    }
    return highest;
  }

  // n = 1, 2, ... up to the top of the chart, every step-th when there are more than 10.
  function thresholds(view) {
    const most = Math.floor(view.top / view.unit);
    const step = Math.max(1, Math.ceil(most / 10));
    const counts = [];
    for (let k = step; k <= most; k += step) counts.push(k);
    return counts;
  }

  function drawThresholds(u, view) {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = colour("--threshold");
    ctx.lineWidth = devicePixelRatio;
    ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.beginPath();
    for (const k of thresholds(view)) {
      const y = Math.round(u.valToPos(k * view.unit, "v", true)) + 0.5;
      ctx.moveTo(bbox.left, y);
      ctx.lineTo(bbox.left + bbox.width, y);
    }
    ctx.stroke();
    ctx.restore();
  }

  // A triangle on the decided step at each scaling operation: up, or down.
  function drawMarkers(u, view) {
    const { ctx, bbox } = u;
    const size = 5 * devicePixelRatio;
    ctx.save();
    for (const row of view.rows) {
      if (row.action === "none") continue;
      const x = u.valToPos(row.t, "x", true);
      if (x < bbox.left || x > bbox.left + bbox.width) continue;
      const y = u.valToPos(row.operators, "n", true);
      const tip = row.action === "up" ? -size : size;
      ctx.fillStyle = view.markers ?? colour(row.action === "up" ? "--decided" : "--filtered");
      ctx.beginPath();
      ctx.moveTo(x, y + tip);
      ctx.lineTo(x - size, y - tip);
      ctx.lineTo(x + size, y - tip);
      ctx.closePath();
      ctx.fill();
    }
    ctx.restore();
  }

  // The expected cost of the count chosen and of one more and one fewer, from a decision's
  // record (only a stream that reports its backlog has them): "why not n+1?" in numbers.
  function costLines(explain) {
    const rows = explain && Array.isArray(explain.candidates) ? explain.candidates : [];
    if (!rows.length) return "";
    return rows
      .map((row) => `${row.operators}: ${Math.round(row.total)} (${row.late_seconds} late s)`)
      .join(" · ");
  }

  // Under the chart, the reason of the decision under the cursor; near a scaling operation's
  // marker, a tooltip with that operation's reason.
  function hover(u, view) {
    const tooltip = document.getElementById("tooltip");
    const { left, top: y, idx } = u.cursor;
    if (left == null || left < 0 || idx == null) {
      tooltip.hidden = true;
      view.reason.textContent = "";
      return;
    }
    const row = view.rows[idx];
    if (row) view.reason.textContent = `t ${formatT(row.t)}: ${row.code}: ${row.reason}`;
    let nearest = null;
    let distance = MARKER_HOVER_PX;
    for (const candidate of view.rows) {
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
    heading.textContent =
      `${arrow} ${nearest.previous} → ${nearest.operators} at t ${formatT(nearest.t)}: ${nearest.code}`;
    tooltip.replaceChildren(heading, document.createElement("br"), nearest.reason);
    const costs = costLines(nearest.explain);
    if (costs) tooltip.append(document.createElement("br"), costs);
    const box = u.over.getBoundingClientRect();
    tooltip.style.left = `${Math.min(box.left + left + 12, innerWidth - 340)}px`;
    tooltip.style.top = `${box.top + y + 12}px`;
    tooltip.hidden = false;
  }

  // view: {unit, top, rows (the decisions marked, one per x), reason (an element), markers
  // (a colour, or null for up/down colours), series: [{label, scale: "v"|"n", stroke (a CSS
  // variable), width, dash, stepped}]}; data: [t, ...one column per series].
  function create(container, view, data) {
    const epoch = data[0][0] > 1e9; // seconds since 1970: a time axis
    const stepped = uPlot.paths.stepped({ align: 1 });
    const options = {
      width: Math.max(300, container.clientWidth || 560),
      height: HEIGHT,
      cursor: { drag: { x: true, y: false }, points: { size: 5 } },
      legend: { live: true },
      scales: {
        x: { time: epoch },
        v: { range: () => [0, view.top] },
        n: { range: () => [0, view.top / view.unit] },
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
          splits: () => thresholds(view),
          values: (u, splits) => splits.map((k) => String(k)),
        },
      ],
      series: [
        { label: "t", value: (u, t) => (t == null ? "–" : formatT(t)) },
        ...view.series.map((line) => ({
          label: line.label,
          scale: line.scale,
          stroke: colour(line.stroke),
          width: line.width ?? 1,
          dash: line.dash,
          paths: line.stepped ? stepped : undefined,
          value: line.scale === "v" ? numberValue : undefined,
        })),
      ],
      hooks: {
        drawAxes: [(u) => drawThresholds(u, view)],
        draw: [(u) => drawMarkers(u, view)],
        setCursor: [(u) => hover(u, view)],
      },
    };
    container.replaceChildren();
    return new uPlot(options, data, container);
  }

  function fit(plot, container) {
    plot.setSize({ width: container.clientWidth, height: HEIGHT });
  }

  return { create, fit, formatT, top, unitVolume, colour };
})();
