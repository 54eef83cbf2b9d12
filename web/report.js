// kloop report --html: draws the page's charts from the JSON in #kloop-data with Chart.js (inlined
// before this script). Everything else on the page is static HTML written by kloop
// (lib/Optimize/HtmlReport.cpp). Text from the journal reaches the DOM only as Chart.js labels,
// which are drawn on canvases, never parsed as HTML. docs/report.md describes the page.
(function () {
  'use strict';
  var BASE = '#4e79a7', CAND = '#f28e2b', ROOF = '#59a14f';
  var OUTCOME_COLOURS = {
    accepted: '#59a14f', rejected: '#e15759', refused: '#b07aa1', crashed: '#000000',
    failed_verification: '#ff9da7', build_failed: '#9c755f', apply_failed: '#76b7b2'
  };

  function fail(message) {
    var banner = document.getElementById('kloop-chart-error');
    banner.textContent = 'The charts could not be drawn: ' + message;
    banner.hidden = false;
    throw new Error(message);
  }

  function canvas(id) {
    var c = document.getElementById(id);
    if (!c) fail('no canvas #' + id);
    return c;
  }

  // Shared bins of both sides' durations: counts per bin, labelled by the bin's lower edge in ns.
  function histogram(base, cand, bins) {
    var all = base.concat(cand);
    var lo = Math.min.apply(null, all), hi = Math.max.apply(null, all);
    var width = hi > lo ? (hi - lo) / bins : 1;
    function count(xs) {
      var c = new Array(bins).fill(0);
      xs.forEach(function (x) { c[Math.min(bins - 1, Math.floor((x - lo) / width))] += 1; });
      return c;
    }
    var labels = [];
    for (var i = 0; i < bins; ++i) labels.push(Math.round(lo + i * width));
    return { labels: labels, base: count(base), cand: count(cand) };
  }

  function distributionChart(d) {
    var h = histogram(d.base, d.cand, 30);
    return new Chart(canvas(d.canvas), {
      type: 'bar',
      data: {
        labels: h.labels,
        datasets: [
          { label: 'baseline (' + d.base.length + ' launches)', data: h.base, backgroundColor: BASE + 'b0' },
          { label: 'accepted (' + d.cand.length + ' launches)', data: h.cand, backgroundColor: CAND + 'b0' }
        ]
      },
      options: {
        animation: false, responsive: false, grouped: true,
        scales: {
          x: { title: { display: true, text: 'launch duration, ns (bin start)' } },
          y: { title: { display: true, text: 'launches' }, beginAtZero: true }
        }
      }
    });
  }

  function rooflineChart(r) {
    var datasets = [];
    if (r.ceilings) {
      var knee = r.ceilings.fma_gflops / r.ceilings.copy_gbps, roof = [];
      [r.x_min, knee, r.x_max].forEach(function (x) {
        roof.push({ x: x, y: Math.min(r.ceilings.fma_gflops, x * r.ceilings.copy_gbps) });
      });
      datasets.push({ type: 'line', label: 'roofline of ' + r.ceilings.device, data: roof, borderColor: ROOF,
                      pointRadius: 0, fill: false });
    }
    datasets.push({ label: 'baseline', data: r.base, backgroundColor: BASE, pointRadius: 5 });
    datasets.push({ label: 'accepted', data: r.cand, backgroundColor: CAND, pointRadius: 5, pointStyle: 'triangle' });
    return new Chart(canvas('roofline-chart'), {
      type: 'scatter',
      data: { datasets: datasets },
      options: {
        animation: false, responsive: false,
        scales: {
          x: { type: 'logarithmic', min: r.x_min, max: r.x_max,
               title: { display: true, text: 'arithmetic intensity, flop/byte (.kloop.yaml flops / bytes)' } },
          y: { type: 'logarithmic', title: { display: true, text: 'attained GFLOP/s (flops / median duration)' } }
        },
        plugins: { tooltip: { callbacks: { label: function (c) { return c.raw.label || c.dataset.label; } } } }
      }
    });
  }

  function timelineChart(t) {
    var byOutcome = {};
    t.forEach(function (p) {
      (byOutcome[p.outcome] = byOutcome[p.outcome] || []).push(
        { x: p.t_s, y: p.speedup === null ? 0 : p.speedup, label: 'round ' + p.round + ': ' + p.outcome });
    });
    var datasets = Object.keys(byOutcome).map(function (o) {
      return { label: o, data: byOutcome[o], backgroundColor: OUTCOME_COLOURS[o] || '#bab0ac', pointRadius: 6 };
    });
    return new Chart(canvas('timeline-chart'), {
      type: 'scatter',
      data: { datasets: datasets },
      options: {
        animation: false, responsive: false,
        scales: {
          x: { title: { display: true, text: 'seconds since the run started' }, beginAtZero: true },
          y: { title: { display: true, text: 'worst median speed-up (0: not timed)' }, beginAtZero: true }
        },
        plugins: { tooltip: { callbacks: { label: function (c) { return c.raw.label; } } } }
      }
    });
  }

  if (typeof Chart !== 'function') fail('the charting library (Chart.js) did not load');
  var data = JSON.parse(document.getElementById('kloop-data').textContent);
  var drawn = 0;
  data.distributions.forEach(function (d) { distributionChart(d); drawn += 1; });
  if (data.roofline) { rooflineChart(data.roofline); drawn += 1; }
  if (data.timeline.length) { timelineChart(data.timeline); drawn += 1; }
  document.body.setAttribute('data-charts-drawn', String(drawn));
})();
