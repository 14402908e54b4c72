// SPDX-License-Identifier: BSD-3-Clause
// The viewer page served at GET /: plain HTML + JavaScript, no network resources. It keeps a
// playout buffer, starts (and restarts after a stall) with latency x fps frames as the sender's
// target, plays at a fixed rate, reports its buffer level, position and frames received four
// times a second (the flow-control feedback), and draws image frames (PNG, or raw 2-D arrays
// through the same colour map as codec.cpp) and 1-D frames as line plots (log axes for names with
// "spectrum"). It says in its hello that it decodes raw and PNG only: the server sends zstd/lz4
// frames to it as raw (transcode.hpp).
#include "toru/stream/server.hpp"

namespace toru::stream {

std::string_view viewer_page() {
  static constexpr std::string_view page = R"PAGE(<!doctype html>
<html><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
body{font-family:sans-serif;margin:8px;background:#f4f4f4;color:#222}
header{font-size:18px;margin-bottom:6px}
#controls,#state{margin:4px 0;font-size:14px}
#timeline{width:60%;vertical-align:middle}
.panel{display:inline-block;margin:4px;padding:4px;background:#fff;border:1px solid #ccc;vertical-align:top}
.panel div{font-size:13px;margin-bottom:2px}
canvas{display:block;background:#fff}
#bufbar{display:inline-block;width:120px;height:10px;border:1px solid #888;vertical-align:middle}
#buflevel{display:block;height:100%;width:0;background:#3a7}
</style></head>
<body>
<header><b>@TITLE@</b> &mdash; <span id="conn">connecting</span></header>
<div id="controls">
<button id="play">pause</button> <button id="live">live</button>
<input id="timeline" type="range" min="0" max="0" value="0"> <span id="pos">-</span>
</div>
<div id="state">buffer <span id="bufbar"><span id="buflevel"></span></span> <span id="buf">0</span> frames
| received <span id="count">0</span> | played <span id="played">0</span> | skipped <span id="skipped">0</span>
| decimation <span id="dec">1</span> | resolution <span id="res">1/1</span> | stalls <span id="stalls">0</span> | not drawn <span id="undrawn">0</span> | policy <span id="policy">-</span>
| <span id="mode">live</span></div>
<div id="panels"></div>
<script>
'use strict';
const q = new URLSearchParams(location.search);
const fps = +(q.get('fps') || 10), low = +(q.get('low') || 3), high = +(q.get('high') || 10);
const policy = q.get('policy'), latency = +(q.get('latency') || 1);
const startFrames = Math.min(high - 1, Math.max(low, Math.ceil(latency * fps - 1e-9)));
let ws = null, buffer = [], playing = true, started = false, received = 0, played = 0, stalls = 0, connReceived = 0;
let position = 0, dragging = false, status = {}, undrawn = 0;
const $ = id => document.getElementById(id);
const anchors = [[68,1,84],[71,44,122],[59,81,139],[44,113,142],[33,144,141],[39,173,129],[92,200,99],[170,220,50],[253,231,37]];
const cmap = [];
for (let i = 0; i < 256; i++) {
  const x = i / 255 * 8, k = Math.min(7, Math.floor(x)), f = x - k;
  cmap.push(anchors[k].map((a, c) => Math.round(a * (1 - f) + anchors[k + 1][c] * f)));
}
const panels = {};
function panel(name, w, h) {
  if (!panels[name]) {
    const d = document.createElement('div'); d.className = 'panel';
    const t = document.createElement('div'); const c = document.createElement('canvas');
    c.width = w; c.height = h; d.appendChild(t); d.appendChild(c); $('panels').appendChild(d);
    panels[name] = {title: t, canvas: c};
  }
  return panels[name];
}
function parse(buf) {
  const dv = new DataView(buf);
  if (buf.byteLength < 8 || dv.getUint32(0, true) !== 0x31465254) throw new Error('bad frame');
  const hl = dv.getUint32(4, true);
  const h = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, hl)));
  h.payload = new Uint8Array(buf, 8 + hl);
  return h;
}
function typed(h) {
  const b = h.payload.slice().buffer;
  return h.dtype === 'f32' ? new Float32Array(b) : h.dtype === 'f64' ? new Float64Array(b)
       : h.dtype === 'i32' ? new Int32Array(b) : new Uint8Array(b);
}
function label(p, h, extra) {
  p.title.textContent = h.name + '  step ' + h.step + '  t = ' + (+h.time).toFixed(4) + '  [' + h.shape.join('x') + ']'
    + (h.downscale > 1 ? '  (1/' + h.downscale + ' resolution)' : '') + (extra || '');
}
async function draw(h) {
  if (h.codec === 'png') {
    const p = panel(h.name, 512, 512);
    const bmp = await createImageBitmap(new Blob([h.payload], {type: 'image/png'}));
    const ctx = p.canvas.getContext('2d'); ctx.imageSmoothingEnabled = false;
    ctx.drawImage(bmp, 0, 0, p.canvas.width, p.canvas.height);
    label(p, h, '  range ' + (+h.min).toPrecision(3) + ' .. ' + (+h.max).toPrecision(3));
  } else if (h.codec !== 'raw') {  // not sent to this page (its hello accepts raw and png)
    const p = panel(h.name, 320, 40);
    p.canvas.getContext('2d').fillText('cannot draw ' + h.codec + ' frames', 4, 20);
    label(p, h);
    $('undrawn').textContent = ++undrawn;
  } else if (h.shape.length === 2) {
    const a = typed(h), rows = h.shape[0], cols = h.shape[1];
    let lo = Infinity, hi = -Infinity;
    for (const v of a) if (isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    const img = new ImageData(cols, rows), s = hi > lo ? 255 / (hi - lo) : 0;
    for (let i = 0; i < a.length; i++) {
      const c = cmap[Math.max(0, Math.min(255, Math.round((a[i] - lo) * s))) | 0];
      img.data[4*i] = c[0]; img.data[4*i+1] = c[1]; img.data[4*i+2] = c[2]; img.data[4*i+3] = 255;
    }
    const p = panel(h.name, 512, 512), off = new OffscreenCanvas(cols, rows);
    off.getContext('2d').putImageData(img, 0, 0);
    const ctx = p.canvas.getContext('2d'); ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, 0, 0, p.canvas.width, p.canvas.height);
    label(p, h);
  } else {
    const a = Array.from(typed(h)), p = panel(h.name, 512, 300), ctx = p.canvas.getContext('2d');
    const logy = /spectrum/i.test(h.name);
    const pts = a.map((v, i) => [logy ? Math.log10(Math.max(i, 1)) : i, logy ? (v > 0 ? Math.log10(v) : NaN) : v])
                 .filter(([x, y]) => isFinite(y) && (!logy || a[Math.round(Math.pow(10, x))] !== undefined));
    const W = p.canvas.width, H = p.canvas.height, m = 30;
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.strokeStyle = '#888'; ctx.strokeRect(m, 5, W - m - 5, H - m);
    if (pts.length > 1) {
      const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
      const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
      const X = x => m + (x - x0) / (x1 - x0 || 1) * (W - m - 5), Y = y => 5 + (1 - (y - y0) / (y1 - y0 || 1)) * (H - m);
      ctx.strokeStyle = '#2a6'; ctx.lineWidth = 2; ctx.beginPath();
      pts.forEach(([x, y], i) => i ? ctx.lineTo(X(x), Y(y)) : ctx.moveTo(X(x), Y(y))); ctx.stroke();
      ctx.fillStyle = '#222'; ctx.font = '11px sans-serif';
      ctx.fillText((logy ? '1e' : '') + y1.toPrecision(3), 2, 14); ctx.fillText((logy ? '1e' : '') + y0.toPrecision(3), 2, H - m);
    }
    label(p, h, logy ? '  (log-log)' : '');
  }
}
function show() {
  $('buf').textContent = buffer.length; $('count').textContent = received; $('played').textContent = played;
  $('buflevel').style.width = Math.min(100, 100 * buffer.length / high) + '%';
  $('skipped').textContent = status.skipped ?? 0; $('dec').textContent = status.decimation ?? 1;
  $('res').textContent = '1/' + (status.scale ?? 1);
  $('policy').textContent = status.policy ?? '-'; $('stalls').textContent = stalls;
  $('mode').textContent = status.live === false ? 'replay' : 'live';
  if (status.end !== undefined) $('timeline').max = Math.max(0, status.end - 1);
  if (!dragging) $('timeline').value = position;
  $('pos').textContent = 'frame ' + position + ' of ' + (status.end ?? 0);
  document.title = 'toru-view: ' + played + ' frames';
}
function connect() {
  ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => {
    $('conn').textContent = 'connected';
    connReceived = 0;
    const hello = {type: 'hello', from: 'live', fps, low_water: low, high_water: high, latency, accept: ['raw', 'png']};
    if (policy) hello.policy = policy;
    ws.send(JSON.stringify(hello));
  };
  ws.onmessage = e => {
    if (typeof e.data === 'string') { status = JSON.parse(e.data); show(); return; }
    try { buffer.push(parse(e.data)); received++; connReceived++; } catch (err) { console.log(err); }
  };
  ws.onclose = () => { $('conn').textContent = 'disconnected, retrying'; buffer = []; started = false; setTimeout(connect, 1000); };
}
setInterval(() => {
  if (!playing) return;
  if (!started) { if (buffer.length >= (status.live === false ? low : startFrames)) started = true; else return; }
  if (!buffer.length) { stalls++; started = false; show(); return; }
  const h = buffer.shift(); position = h.seq; played++;
  draw(h).catch(err => console.log(err)); show();
}, 1000 / fps);
setInterval(() => {
  if (ws && ws.readyState === 1)
    ws.send(JSON.stringify({type: 'report', buffer: buffer.length, position, fps, received: connReceived}));
}, 250);
$('play').onclick = () => {
  playing = !playing; $('play').textContent = playing ? 'pause' : 'play';
  if (ws && ws.readyState === 1) ws.send(JSON.stringify({type: playing ? 'play' : 'pause'}));
};
$('live').onclick = () => { buffer = []; started = false; ws.send(JSON.stringify({type: 'live'})); };
$('timeline').oninput = () => { dragging = true; };
$('timeline').onchange = () => {
  dragging = false; buffer = []; started = false; position = +$('timeline').value;
  ws.send(JSON.stringify({type: 'seek', seq: position}));
};
if (q.get('hold')) {  // headless tests: keep the load event (and --dump-dom) waiting while frames play
  const img = document.createElement('img');
  img.src = '/hold?ms=' + (+q.get('hold')); img.style.display = 'none'; document.body.appendChild(img);
}
connect(); show();
</script></body></html>
)PAGE";
  return page;
}

}  // namespace toru::stream
