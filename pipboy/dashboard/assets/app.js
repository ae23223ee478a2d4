// Pip-Boy dashboard: renders the State pushed over /ws and sends commands back.
"use strict";
let socket = null;
let selectedCategory = null;
let lastMapSeq = -1;
const lastSection = {};

// changed reports whether a section's data differs from what was last drawn, so
// lists are rebuilt only when needed (a button being clicked is not replaced under
// the pointer by an unrelated push).
function changed(name, data) {
  const j = JSON.stringify(data);
  if (lastSection[name] === j) return false;
  lastSection[name] = j;
  return true;
}
const $ = (id) => document.getElementById(id);
const fmt = (n) => (Math.round(n * 10) / 10).toString();

function text(id, value) {
  const el = $(id);
  if (el.textContent !== String(value)) el.textContent = value;
}

function render(st) {
  text("status", st.connected ? `connected · game ${st.game.version} (${st.game.lang})` : `disconnected ${st.error || ""}`);
  const p = st.player;
  text("player-name", p.name);
  text("player-level", p.level);
  text("hp", fmt(p.hp)); text("max-hp", fmt(p.maxHP));
  text("ap", fmt(p.ap)); text("max-ap", fmt(p.maxAP));
  text("xp", Math.round(p.xpProgress * 100) + "% to next level");
  text("caps", p.caps);
  text("weight", fmt(p.weight)); text("max-weight", fmt(p.maxWeight));

  const special = $("special");
  if (changed("special", st.special)) special.replaceChildren(...(st.special || []).map((s) => {
    const tr = document.createElement("tr");
    tr.innerHTML = "<th></th><td></td>";
    tr.children[0].textContent = s.name;
    tr.children[1].textContent = s.value + (s.modifier ? ` (${s.modifier > 0 ? "+" : ""}${s.modifier})` : "");
    return tr;
  }));

  const inv = st.inventory || {};
  const cats = Object.keys(inv);
  if (!selectedCategory || !inv[selectedCategory]) selectedCategory = cats[0] || null;
  if (changed("inventory", [inv, selectedCategory])) renderInventory(st, inv, cats);
  if (changed("quests", st.quests)) renderQuests(st);
  if (changed("radio", st.radio)) renderRadio(st);
  renderMap(st.map);
}

function renderInventory(st, inv, cats) {
  $("inventory-tabs").replaceChildren(...cats.map((c) => {
    const b = document.createElement("button");
    b.textContent = `${c} (${inv[c].length})`;
    b.className = c === selectedCategory ? "selected" : "";
    b.onclick = () => { selectedCategory = c; if (changed("inventory", [inv, c])) renderInventory(st, inv, cats); };
    return b;
  }));
  $("inventory").replaceChildren(...(inv[selectedCategory] || []).map((it) => {
    const li = document.createElement("li");
    li.textContent = it.name;
    if (it.equipped) li.className = "equipped";
    const n = document.createElement("span");
    n.textContent = it.count > 1 ? "×" + it.count : "";
    li.append(n);
    return li;
  }));
}

function renderQuests(st) {
  $("quests").replaceChildren(...(st.quests || []).map((q) => {
    const li = document.createElement("li");
    li.textContent = (q.active ? "▶ " : "") + q.name;
    if (q.active) li.className = "active";
    return li;
  }));
}

function renderRadio(st) {
  $("radio").replaceChildren(...(st.radio || []).map((r) => {
    const li = document.createElement("li");
    li.id = "station-" + r.id;
    li.className = r.inRange ? "" : "out";
    const name = document.createElement("span");
    name.textContent = `${r.name} (${fmt(r.frequency)})`;
    const b = document.createElement("button");
    b.textContent = r.active ? "on" : "off";
    b.className = "toggle-radio" + (r.active ? " on" : "");
    b.dataset.id = r.id;
    b.onclick = () => sendCommand({ type: 12, args: [r.id] });
    li.append(name, b);
    return li;
  }));
}

function renderMap(m) {
  const map = $("map");
  map.classList.toggle("has-frame", m.seq > 0 && !m.blank);
  map.classList.toggle("on-map", m.onMap);
  if (m.seq !== lastMapSeq && m.seq > 0) {
    lastMapSeq = m.seq;
    $("map-img").src = "map.png?seq=" + m.seq;
  }
  const marker = $("map-marker");
  marker.style.left = (m.u * 100) + "%";
  marker.style.top = (m.v * 100) + "%";
  marker.style.transform = `translate(-50%, -50%) rotate(${m.rotation}deg)`;
}

function sendCommand(cmd) {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    text("command-status", "not connected");
    return;
  }
  socket.send(JSON.stringify({ command: cmd }));
}

function connect() {
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + location.pathname.replace(/[^/]*$/, "") + "ws";
  socket = new WebSocket(url);
  socket.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.state) render(msg.state);
    if (msg.sent !== undefined) text("command-status", `command ${msg.sent} sent`);
    if (msg.error) text("command-status", "error: " + msg.error);
  };
  socket.onclose = () => {
    text("status", "dashboard connection lost; retrying…");
    setTimeout(connect, 1000);
  };
}
connect();
