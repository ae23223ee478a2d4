// Pip-Boy dashboard: renders the State pushed over /ws and sends commands back.
"use strict";
let socket = null;
let state = null;
let selectedCategory = null;
let lastMapSeq = -1;
let tagSeq = 0;
const pending = {}; // tag -> label of the action waiting for its result
const lastSection = {};
const SVGNS = "http://www.w3.org/2000/svg";
const W = 1000; // the world map's width in SVG units; its height is W * aspect

// Inventory pages of command 4 (sort), by category.
const PAGES = { Weapons: 0, Apparel: 1, Aid: 2, Misc: 3, Junk: 4, Mods: 5, Ammo: 6 };

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

// rebuild replaces a container's children, keeping the keyboard focus on the element
// with the same data-key (a list rebuilt after an action keeps its place).
function rebuild(container, children) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : null;
  container.replaceChildren(...children);
  if (key) {
    const again = container.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}

// actionButton makes a button that sends a command, or, when the game would refuse
// it (reason set), stays focusable but is marked disabled and says why when pressed.
function actionButton(label, reason, key, onPress) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.dataset.key = key;
  if (reason) {
    b.setAttribute("aria-disabled", "true");
    b.className = "disabled";
    b.title = reason;
    b.onclick = () => say(`${label}: not possible: ${reason}`);
  } else {
    b.onclick = onPress;
  }
  return b;
}

function say(msg) { text("command-status", msg); }

function render(st) {
  state = st;
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
  if ((st.components || []).length) cats.push("Components");
  if (!selectedCategory || !cats.includes(selectedCategory)) selectedCategory = cats[0] || null;
  if (changed("inventory", [inv, st.components, st.freeFavorite, selectedCategory])) renderInventory(st, cats);
  text("sort-mode", `sort mode ${st.sortMode}`);
  if (changed("quests", st.quests)) renderQuests(st);
  if (changed("radio", st.radio)) renderRadio(st);
  renderMap(st.map);
  renderWorld(st.world);
}

function renderInventory(st, cats) {
  const inv = st.inventory || {};
  rebuild($("inventory-tabs"), cats.map((c) => {
    const b = document.createElement("button");
    b.type = "button";
    const n = c === "Components" ? st.components.length : inv[c].length;
    b.textContent = `${c} (${n})`;
    b.dataset.key = "tab-" + c;
    b.className = c === selectedCategory ? "selected" : "";
    b.setAttribute("aria-pressed", c === selectedCategory);
    b.onclick = () => { selectedCategory = c; renderInventory(state, cats); lastSection.inventory = null; };
    return b;
  }));
  const sort = $("inventory-sort");
  const page = PAGES[selectedCategory];
  if (page === undefined) {
    sort.setAttribute("aria-disabled", "true");
    sort.className = "disabled";
    sort.title = "the game has no inventory page for " + selectedCategory;
    sort.onclick = () => say("sort: not possible: " + sort.title);
  } else {
    sort.removeAttribute("aria-disabled");
    sort.className = "";
    sort.title = "cycle the sort mode of the " + selectedCategory + " page (command 4)";
    sort.onclick = () => sendCommand({ type: 4, args: [page] }, `sort ${selectedCategory}`);
  }
  if (selectedCategory === "Components") {
    rebuild($("inventory"), st.components.map((c) => {
      const li = document.createElement("li");
      const name = document.createElement("span");
      name.textContent = c.name + (c.count > 1 ? " ×" + c.count : "");
      const b = actionButton(c.tagged ? "untag" : "tag", "", "tag-" + c.formID,
        () => sendCommand({ type: 3, args: [c.formID, state.inventoryVersion] }, `${c.tagged ? "untag" : "tag"} ${c.name}`));
      b.setAttribute("aria-pressed", c.tagged);
      li.append(name, b);
      return li;
    }));
    return;
  }
  rebuild($("inventory"), (inv[selectedCategory] || []).map((it) => {
    const li = document.createElement("li");
    if (it.equipped) li.className = "equipped";
    const name = document.createElement("span");
    name.textContent = it.name + (it.count > 1 ? " ×" + it.count : "") + (it.favorite ? ` ★${it.favoriteSlot}` : "");
    const acts = document.createElement("span");
    acts.className = "actions";
    const use = it.equipped ? "unequip" : (selectedCategory === "Aid" ? "use" : "equip");
    acts.append(
      actionButton(use, it.useBlocked, "use-" + it.handleID,
        () => sendCommand({ type: 0, args: [it.handleID, it.stackIDs[0] || 0, state.inventoryVersion] }, `${use} ${it.name}`)),
      actionButton("drop", "", "drop-" + it.handleID,
        () => sendCommand({ type: 1, args: [it.handleID, 1, state.inventoryVersion, it.stackIDs] }, `drop ${it.name}`)),
      actionButton("fav", it.favBlocked, "fav-" + it.handleID,
        () => sendCommand({ type: 2, args: [it.handleID, it.stackIDs, state.freeFavorite, state.inventoryVersion] }, `favourite ${it.name} (slot ${state.freeFavorite})`)));
    li.append(name, acts);
    return li;
  }));
}

function renderQuests(st) {
  rebuild($("quests"), (st.quests || []).map((q) => {
    const li = document.createElement("li");
    const name = document.createElement("span");
    name.textContent = (q.active ? "▶ " : "") + q.name;
    if (q.active) li.className = "active";
    const b = actionButton(q.active ? "unmark" : "mark", q.blocked, "quest-" + q.id,
      () => sendCommand({ type: 5, args: [q.formID, q.instance, q.type] }, `${q.active ? "unmark" : "mark"} quest ${q.name}`));
    b.setAttribute("aria-pressed", q.active);
    b.classList.add("toggle-quest");
    li.append(name, b);
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
    b.type = "button";
    b.textContent = r.active ? "on" : "off";
    b.className = "toggle-radio" + (r.active ? " on" : "");
    b.dataset.id = r.id;
    b.setAttribute("aria-label", `${r.name}: ${r.active ? "on" : "off"}`);
    b.onclick = () => sendCommand({ type: 12, args: [r.id] }, `radio ${r.name}`);
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
  let help;
  if (m.seq > 0) {
    help = `${m.width}×${m.height}, frame ${m.seq}` + (m.blank ? " (blank: the game has no local map here)" : "");
  } else if (m.poll > 0) {
    help = `No frame yet. The dashboard asks the game for one (command 13) every ${fmt(m.poll)} s while this page is open; the game answers while the player is in its world.`;
  } else {
    help = "No frame yet. The dashboard does not poll (--map-interval); request a frame with command 13 below.";
  }
  text("map-help", help);
}

// ---- world map -------------------------------------------------------------

const view = { x: 0, y: 0, w: W, aspect: 1 }; // the visible part, in SVG units; aspect: the map's
let selectedLocation = null;
let worldFitted = false;

function H() { return W * view.aspect; }

// ratio is the map element's height over its width: the view has the same shape,
// so the map fills the element at any size.
function ratio() {
  const r = $("world-svg").getBoundingClientRect();
  return r.width > 0 && r.height > 0 ? r.height / r.width : view.aspect;
}
function viewH() { return view.w * ratio(); }
function maxW() { return Math.max(W, H() / ratio()); }

function setView(x, y, w) {
  w = Math.min(maxW(), Math.max(W / 64, w));
  const h = w * ratio();
  view.w = w;
  view.x = Math.min(W - w / 2, Math.max(-w / 2, x));
  view.y = Math.min(H() - h / 2, Math.max(-h / 2, y));
  $("world-svg").setAttribute("viewBox", `${view.x} ${view.y} ${w} ${h}`);
  placeMarkers();
}

// showAll shows the whole map, centred.
function showAll() {
  const w = maxW();
  setView((W - w) / 2, (H() - w * ratio()) / 2, w);
}

// fit shows the box around the given map positions (u, v), with a margin.
function fit(points) {
  if (!points.length) { showAll(); return; }
  const xs = points.map((p) => p.u * W), ys = points.map((p) => p.v * H());
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const w = Math.max(W / 12, (x1 - x0) * 1.3, (y1 - y0) * 1.3 / ratio());
  setView((x0 + x1) / 2 - w / 2, (y0 + y1) / 2 - w * ratio() / 2, w);
}

// zoomAt zooms by factor around SVG point (px, py), which stays put.
function zoomAt(factor, px, py) {
  const w = Math.min(maxW(), Math.max(W / 64, view.w / factor));
  const k = w / view.w;
  setView(px - (px - view.x) * k, py - (py - view.y) * k, w);
}

function centreOn(px, py) { setView(px - view.w / 2, py - viewH() / 2, view.w); }
function centre() { return [view.x + view.w / 2, view.y + viewH() / 2]; }

// markerScale converts screen pixels to SVG units, so markers keep their size.
function markerScale() {
  const r = $("world-svg").getBoundingClientRect();
  return r.width > 0 ? view.w / r.width : 1;
}

function placeMarkers() {
  const k = markerScale();
  // Far out, names would pile up: they show when zoomed in (and in the list).
  $("world-svg").classList.toggle("far", k > 1.2);
  document.querySelectorAll("#world-svg [data-u]").forEach((g) => {
    const x = +g.dataset.u * W, y = +g.dataset.v * H();
    const rot = g.dataset.rot ? ` rotate(${g.dataset.rot})` : "";
    g.setAttribute("transform", `translate(${x} ${y}) scale(${k})${rot}`);
  });
  const c = $("world-crosshair");
  const [cx, cy] = centre();
  c.setAttribute("transform", `translate(${cx} ${cy}) scale(${k})`);
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// locationGlyph: the game's icon art is not shipped; settlements the player owns
// and vaults get a glyph, other types show their number in the details.
function locationGlyph(l) {
  if (l.workshop) return "⌂";
  if (l.type === 15) return "V";
  return "";
}

function locationState(l) {
  return l.discovered ? (l.cleared ? "cleared" : "discovered") : "not discovered";
}

function renderWorld(w) {
  const world = $("world");
  world.classList.toggle("available", w.available);
  if (!w.available) return;
  if (view.aspect !== w.aspect || !worldFitted) {
    view.aspect = w.aspect;
    for (const id of ["world-bg", "world-image"]) {
      $(id).setAttribute("width", W);
      $(id).setAttribute("height", H());
    }
    if (changed("grid", w.aspect)) {
      const grid = $("world-grid");
      const lines = [];
      for (let i = 1; i < 8; i++) {
        lines.push(svgEl("line", { x1: i * W / 8, y1: 0, x2: i * W / 8, y2: H() }));
        lines.push(svgEl("line", { x1: 0, y1: i * H() / 8, x2: W, y2: i * H() / 8 }));
      }
      grid.replaceChildren(...lines);
    }
    worldFitted = true;
    // First show where the player has been: the discovered places and the player.
    fit([...w.locations.filter((l) => l.discovered), w.player]);
  }
  const img = $("world-image");
  if (w.image && img.getAttribute("href") !== "world-map") img.setAttribute("href", "world-map");
  img.setAttribute("visibility", w.image ? "visible" : "hidden");

  if (changed("locations", w.locations)) renderLocations(w);
  if (changed("world-quests", w.quests)) {
    rebuild($("world-quests"), w.quests.map((q) => {
      const g = svgEl("g", { class: "quest", "data-u": q.u, "data-v": q.v, "data-key": "q-" + q.id });
      const t = svgEl("title");
      t.textContent = "quest target: " + q.name;
      g.append(t, svgEl("path", { d: "M0,-9 L7,0 L0,9 L-7,0 Z" }));
      return g;
    }));
  }
  const player = $("world-player");
  player.dataset.u = w.player.u;
  player.dataset.v = w.player.v;
  player.dataset.rot = w.rotation;
  player.dataset.x = w.player.x;
  player.dataset.y = w.player.y;
  const custom = $("world-custom");
  custom.dataset.u = w.custom.u;
  custom.dataset.v = w.custom.v;
  custom.setAttribute("visibility", w.custom.visible ? "visible" : "hidden");
  const armor = $("world-armor");
  armor.dataset.u = w.powerArmor.u;
  armor.dataset.v = w.powerArmor.v;
  armor.setAttribute("visibility", w.powerArmor.visible ? "visible" : "hidden");
  const remove = $("marker-remove");
  if (w.custom.visible) remove.removeAttribute("aria-disabled");
  else remove.setAttribute("aria-disabled", "true");
  remove.className = w.custom.visible ? "" : "disabled";
  remove.title = w.custom.visible ? "remove the custom marker (command 7)" : "no custom marker is placed";
  placeMarkers();
  renderDetails();
}

function renderLocations(w) {
  const locs = w.locations;
  rebuild($("world-locations"), locs.map((l) => {
    const g = svgEl("g", {
      id: "loc-" + l.id, class: "loc " + (l.discovered ? "discovered" : "undiscovered") + (l.cleared ? " cleared" : "") + (l.workshop ? " workshop" : ""),
      tabindex: "0", role: "button", "data-u": l.u, "data-v": l.v, "data-id": l.id, "data-name": l.name, "data-key": "loc-" + l.id,
      "aria-label": `${l.name}, ${locationState(l)}`,
    });
    const t = svgEl("title");
    t.textContent = `${l.name} (${locationState(l)})`;
    g.append(t, svgEl("circle", { r: 7 }));
    if (l.cleared) g.append(svgEl("circle", { r: 10, class: "ring" }));
    const glyph = locationGlyph(l);
    if (glyph) {
      const gt = svgEl("text", { y: 4, class: "glyph" });
      gt.textContent = glyph;
      g.append(gt);
    }
    if (l.discovered) {
      const label = svgEl("text", { x: 11, y: 4, class: "label" });
      label.textContent = l.name;
      g.append(label);
    }
    g.addEventListener("click", (ev) => { if (!dragged) select(l.id, false); ev.stopPropagation(); });
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); select(l.id, true); }
    });
    return g;
  }));
  const sorted = [...locs].sort((a, b) => (b.discovered - a.discovered) || a.name.localeCompare(b.name));
  rebuild($("locations"), sorted.map((l) => {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link" + (l.discovered ? "" : " out");
    b.textContent = l.name;
    b.dataset.key = "list-" + l.id;
    b.setAttribute("aria-label", `${l.name}, ${locationState(l)}: show on the map`);
    b.onclick = () => { select(l.id, true); centreOn(l.u * W, l.v * H()); };
    const s = document.createElement("span");
    s.className = "status";
    s.textContent = locationState(l);
    li.append(b, s);
    return li;
  }));
  text("locations-count", `${locs.filter((l) => l.discovered).length} discovered, ${locs.length} on the map`);
}

function select(id, focusAction) {
  selectedLocation = id;
  document.querySelectorAll("#world-locations .loc.selected").forEach((e) => e.classList.remove("selected"));
  const g = $("loc-" + id);
  if (g) g.classList.add("selected");
  lastSection.details = null;
  renderDetails();
  if (focusAction) $("travel").focus();
}

function renderDetails() {
  const w = state && state.world;
  const l = w && (w.locations || []).find((x) => x.id === selectedLocation);
  if (!l || !changed("details", l)) return;
  const d = $("world-details");
  const h = document.createElement("h3");
  h.textContent = l.name;
  const p = document.createElement("p");
  p.textContent = `${locationState(l)} · marker type ${l.type}` + (l.workshop ? ` · settlement, ${l.population} settlers` : "");
  const b = actionButton("Fast travel", l.travelBlocked, "travel",
    () => sendCommand({ type: 9, args: [l.id] }, `fast travel to ${l.name}`));
  b.id = "travel";
  b.classList.add("travel");
  d.replaceChildren(h, p, b);
  if (l.travelBlocked) {
    const why = document.createElement("p");
    why.className = "reason";
    why.textContent = "Not possible: " + l.travelBlocked;
    d.append(why);
  }
}

// toWorld converts a pointer position to world coordinates (and SVG units).
function toWorld(clientX, clientY) {
  const svg = $("world-svg");
  const pt = new DOMPoint(clientX, clientY).matrixTransform(svg.getScreenCTM().inverse());
  return worldAt(pt.x, pt.y);
}

// worldAt converts SVG units to world coordinates through the extents.
function worldAt(sx, sy) {
  const w = state.world;
  const u = sx / W, v = sy / H();
  return {
    x: w.nw.x + u * (w.ne.x - w.nw.x) + v * (w.sw.x - w.nw.x),
    y: w.nw.y + u * (w.ne.y - w.nw.y) + v * (w.sw.y - w.nw.y),
  };
}

function placeCustomMarker(p) {
  sendCommand({ type: 6, args: [p.x, p.y, false] }, `custom marker at ${Math.round(p.x)}, ${Math.round(p.y)}`);
}

function removeCustomMarker() {
  if (!state.world.custom.visible) { say("remove custom marker: not possible: no custom marker is placed"); return; }
  sendCommand({ type: 7, args: [] }, "remove custom marker");
}

let drag = null;
let dragged = false;

function setupWorld() {
  const world = $("world");
  const svg = $("world-svg");
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, k: markerScale() };
    dragged = false;
  });
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 4) dragged = true;
    if (dragged) setView(drag.vx - dx * drag.k, drag.vy - dy * drag.k, view.w);
  });
  window.addEventListener("pointerup", () => { drag = null; });
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const pt = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(svg.getScreenCTM().inverse());
    zoomAt(ev.deltaY < 0 ? 1.25 : 0.8, pt.x, pt.y);
  }, { passive: false });
  svg.addEventListener("contextmenu", (ev) => {
    ev.preventDefault();
    if (!state || !state.world.available) return;
    if (ev.target.closest("#world-custom")) removeCustomMarker();
    else placeCustomMarker(toWorld(ev.clientX, ev.clientY));
  });
  world.addEventListener("keydown", (ev) => {
    if (!state || !state.world.available) return;
    const step = view.w / 8;
    const [cx, cy] = centre();
    switch (ev.key) {
      case "ArrowLeft": setView(view.x - step, view.y, view.w); break;
      case "ArrowRight": setView(view.x + step, view.y, view.w); break;
      case "ArrowUp": setView(view.x, view.y - step, view.w); break;
      case "ArrowDown": setView(view.x, view.y + step, view.w); break;
      case "+": case "=": zoomAt(1.5, cx, cy); break;
      case "-": zoomAt(1 / 1.5, cx, cy); break;
      case "0": showAll(); break;
      case "m": case "M": placeCustomMarker(worldAt(cx, cy)); break;
      case "Delete": case "Backspace": removeCustomMarker(); break;
      default: return;
    }
    ev.preventDefault();
  });
  $("zoom-in").onclick = () => zoomAt(1.5, ...centre());
  $("zoom-out").onclick = () => zoomAt(1 / 1.5, ...centre());
  $("zoom-reset").onclick = showAll;
  $("find-player").onclick = () => {
    if (!state) return;
    if (view.w > W / 4) view.w = W / 4;
    centreOn(state.world.player.u * W, state.world.player.v * H());
  };
  $("marker-here").onclick = () => { if (state && state.world.available) placeCustomMarker(worldAt(...centre())); };
  $("marker-remove").onclick = () => { if (state) removeCustomMarker(); };
  $("map-request").onclick = () => sendCommand({ type: 13, args: [] }, "request a local map frame");
  window.addEventListener("resize", () => {
    // Keep the centre of the view where it was; its shape follows the element's.
    const vb = $("world-svg").viewBox.baseVal;
    const w = Math.min(view.w, maxW());
    setView(vb.x + vb.width / 2 - w / 2, vb.y + vb.height / 2 - w * ratio() / 2, w);
  });
}

// ---- commands ----------------------------------------------------------------

function sendCommand(cmd, label) {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    say(`${label}: not connected`);
    return;
  }
  const tag = String(++tagSeq);
  pending[tag] = label;
  say(`${label}: sent…`);
  socket.send(JSON.stringify({ command: cmd, tag }));
}

function showResult(msg) {
  const label = pending[msg.tag] || "command";
  delete pending[msg.tag];
  if (msg.error) { say(`${label}: error: ${msg.error}`); return; }
  const r = msg.result;
  if (r.response) {
    const a = r.response;
    const verdict = a.allowed && a.success ? "done" : (a.allowed ? "allowed but failed" : "refused by the game");
    say(`${label}: ${verdict} (command ${r.sent}: allowed ${a.allowed}, success ${a.success})`);
  } else {
    say(`${label}: sent as command ${r.sent} (the game does not answer this command; its change shows here when the game makes it)`);
  }
}

function connect() {
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + location.pathname.replace(/[^/]*$/, "") + "ws";
  socket = new WebSocket(url);
  socket.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.state) render(msg.state);
    if (msg.result || msg.error) showResult(msg);
  };
  socket.onclose = () => {
    text("status", "dashboard connection lost; retrying…");
    setTimeout(connect, 1000);
  };
}
setupWorld();
connect();
