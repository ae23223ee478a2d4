-- The decoder of the generated tables above: PRUDP V1 and V0 over UDP (as
-- `gamewire decode --write-decrypted` writes it: payloads in plaintext behind
-- their PRUDP headers), reliable fragments joined per connection, direction and
-- substream, and RMC requests and responses decoded by description.

local nex = Proto("nexrmc", "NEX RMC (gamewire descriptions)")
local pf = {
  dialect = ProtoField.string("nexrmc.prudp", "PRUDP packet"),
  kind = ProtoField.string("nexrmc.kind", "Kind"),
  protocol_id = ProtoField.uint16("nexrmc.protocol_id", "Protocol id"),
  protocol = ProtoField.string("nexrmc.protocol", "Protocol"),
  method_id = ProtoField.uint32("nexrmc.method_id", "Method id"),
  method = ProtoField.string("nexrmc.method", "Method"),
  call_id = ProtoField.uint32("nexrmc.call_id", "Call id"),
  result = ProtoField.string("nexrmc.result", "Result"),
  value = ProtoField.string("nexrmc.value", "Value"),
  err = ProtoField.string("nexrmc.error", "Not decoded"),
}
nex.fields = { pf.dialect, pf.kind, pf.protocol_id, pf.protocol, pf.method_id, pf.method, pf.call_id, pf.result, pf.value, pf.err }
nex.prefs.nex_version = Pref.uint("NEX version", 0, "NEX version of the structures (30500 is 3.5); 0: 3.5 with structure headers, 3.4 without")
nex.prefs.pid_size = Pref.uint("PID size", 4, "bytes of a PID: 4 (3DS, Wii U) or 8 (Switch)")
nex.prefs.access_key = Pref.string("Access key (V0)", "", "PRUDP V0 (3DS) access key: V0 packets have no magic and are found by their checksum under it")
nex.prefs.variant = Pref.string("Game variant", "", "a game's variant of the protocols: mk8, mk8d, smm, smm2, mhxx, miitopia3ds, eagle, nx")

local band, rshift = bit32.band, bit32.rshift

-- Per connection state, filled on the first pass (frames in order).
local conns = {}    -- key -> {minor = {}, buf = {}, next = {}}
local done = {}     -- frame number .. ":" .. index -> ByteArray of a whole message
local seen = {}     -- frame number .. ":" .. index -> true once handled on the first pass

local function conn_of(pinfo)
  local a = tostring(pinfo.src) .. ":" .. pinfo.src_port
  local b = tostring(pinfo.dst) .. ":" .. pinfo.dst_port
  local key, dir = a .. "|" .. b, 0
  if b < a then key, dir = b .. "|" .. a, 1 end
  local c = conns[key]
  if not c then c = { minor = {}, buf = {}, next = {} } conns[key] = c end
  return c, dir
end

-- The reader: a Tvb range, an offset, the settings, and the first error.
local R = {}
R.__index = R
local function reader(tvb, hdr, pid, ver)
  return setmetatable({ tvb = tvb, off = 0, limit = tvb:len(), hdr = hdr, pid = pid, ver = ver }, R)
end
function R:fail(path, msg)
  if not self.err then self.err = string.format("%s at offset %d: %s", path, self.off, msg) end
end
function R:need(path, n)
  if self.err then return nil end
  if self.limit - self.off < n then
    self:fail(path, string.format("truncated (need %d bytes, have %d)", n, self.limit - self.off))
    return nil
  end
  local r = self.tvb(self.off, n)
  self.off = self.off + n
  return r
end
function R:uint(path, n)
  local r = self:need(path, n)
  if not r then return 0 end
  if n == 8 then return r:le_uint64() end
  return r:le_uint()
end
function R:int(path, n)
  local r = self:need(path, n)
  if not r then return 0 end
  if n == 8 then return r:le_int64() end
  return r:le_int()
end

local sizes = { u8 = 1, u16 = 2, u32 = 4, u64 = 8, s8 = 1, s16 = 2, s32 = 4, s64 = 8, bool = 1, result = 4, datetime = 8, f32 = 4, f64 = 8 }

local function fmt_datetime(v)
  local n = tonumber(tostring(v))
  local s, mi, h = n % 64, math.floor(n / 64) % 64, math.floor(n / 4096) % 32
  local d, mo, y = math.floor(n / 131072) % 32, math.floor(n / 4194304) % 16, math.floor(n / 67108864)
  return string.format("%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, s)
end

local decode

local function add(tree, path, name, text, r, start)
  if tree then
    local len = r.off - start
    if len > 0 then
      tree:add(pf.value, r.tvb(start, len), name .. ": " .. text):set_text(name .. ": " .. text)
    else
      tree:add(pf.value, name .. ": " .. text):set_text(name .. ": " .. text)
    end
  end
end

local function holds(f, ver, rev)
  return ver >= f[3] and (f[4] == 0 or ver < f[4]) and rev >= f[5]
end

local function maxrev(s, ver)
  local m = 0
  for _, f in ipairs(s.f) do
    if f[5] > m and ver >= f[3] and (f[4] == 0 or ver < f[4]) then m = f[5] end
  end
  return m
end

local function chain(s)
  local out = {}
  while s do table.insert(out, 1, s) s = s.parent and S[s.parent] or nil end
  return out
end

-- struct decodes the levels of structure s into tree; the text summary it returns
-- is "{a=1 b=2}".
local function struct(r, s, tree, path, depth)
  local parts = {}
  local lv = chain(s)
  if lv[1].data and r.hdr then
    r:need(path, 5) -- the Data level: an empty structure
  end
  for _, st in ipairs(lv) do
    local limit, rev = r.limit, maxrev(st, r.ver)
    if r.hdr then
      local h = r:need(path, 5)
      if not h then return "{}" end
      rev = h(0, 1):uint()
      local n = h(1, 4):le_uint()
      if r.limit - r.off < n then r:fail(path, "structure content of " .. n .. " bytes: truncated") return "{}" end
      r.limit = r.off + n
    end
    for _, f in ipairs(st.f) do
      if holds(f, r.ver, rev) then
        local t = decode(r, f[2], tree, path .. "." .. f[1], f[1], depth + 1)
        if r.err then break end
        parts[#parts + 1] = f[1] .. "=" .. t
      end
    end
    if r.hdr and not r.err then r.off = r.limit end
    r.limit = limit
    if r.err then break end
  end
  return "{" .. table.concat(parts, " ") .. "}"
end

-- decode reads one value of type t, adds it to tree as name and returns its text.
decode = function(r, t, tree, path, name, depth)
  if r.err then return "" end
  if depth > 48 then r:fail(path, "values nest too deep") return "" end
  local start = r.off
  local text
  if type(t) == "string" then
    local n = sizes[t]
    if t == "bool" then
      text = (r:uint(path, 1) ~= 0) and "true" or "false"
    elseif t == "f32" or t == "f64" then
      local g = r:need(path, n)
      text = g and tostring(g:le_float()) or "0"
    elseif t == "datetime" then
      text = fmt_datetime(r:uint(path, 8))
    elseif t == "result" then
      local v = r:uint(path, 4)
      text = string.format("0x%08X", v)
      if band(v, 0x80000000) == 0 then text = "success (" .. text .. ")" end
    elseif t:sub(1, 1) == "s" and n then
      text = tostring(r:int(path, n))
    elseif n then
      text = tostring(r:uint(path, n))
    elseif t == "pid" then
      text = tostring(r:uint(path, r.pid))
    elseif t == "string" or t == "stationurl" then
      local n = r:uint(path, 2)
      if n == 0 then text = '""' else
        local g = r:need(path, n)
        text = (g and n > 1) and ('"' .. g(0, n - 1):string() .. '"') or '""'
      end
    elseif t == "buffer" or t == "qbuffer" then
      local n = r:uint(path, t == "buffer" and 4 or 2)
      if n > r.limit - r.off then r:fail(path, "length " .. n .. ": truncated") return "" end
      local g = n > 0 and r:need(path, n)
      text = g and g:bytes():tohex(true) or '""'
      if #text > 64 then text = text:sub(1, 64) .. "...(" .. n .. " bytes)" end
    elseif t == "quuid" then
      local g = r:need(path, 16)
      text = g and g:bytes():tohex(true) or ""
    elseif t == "variant" then
      local k = r:uint(path, 1)
      if k == 0 then text = "none"
      elseif k == 1 then text = tostring(r:int(path, 8))
      elseif k == 2 then local g = r:need(path, 8) text = g and tostring(g:le_float()) or ""
      elseif k == 3 then text = (r:uint(path, 1) ~= 0) and "true" or "false"
      elseif k == 4 then text = decode(r, "string", nil, path, name, depth + 1)
      elseif k == 5 then text = fmt_datetime(r:uint(path, 8))
      elseif k == 6 then text = tostring(r:uint(path, 8))
      else r:fail(path, "unknown variant type " .. k) return "" end
    elseif t == "data" then
      if r.hdr then r:need(path, 5) end
      text = "{}"
    else
      r:fail(path, "unknown type " .. t)
      return ""
    end
    add(tree, path, name, text, r, start)
    return text
  end
  if t.k == "enum" then
    local v = (t.base:sub(1, 1) == "s") and r:int(path, sizes[t.base]) or r:uint(path, sizes[t.base])
    local vn = E[t.e] and E[t.e][tonumber(tostring(v))]
    text = vn and (vn .. "(" .. tostring(v) .. ")") or tostring(v)
    add(tree, path, name, text, r, start)
    return text
  end
  local sub = tree and tree:add(pf.value, name)
  if t.k == "list" or t.k == "map" then
    local n = r:uint(path, 4)
    if n > r.limit - r.off then r:fail(path, "list count " .. n .. ": only " .. (r.limit - r.off) .. " bytes left") return "" end
    local parts = {}
    for i = 0, n - 1 do
      local p = path .. "[" .. i .. "]"
      if t.k == "list" then
        parts[#parts + 1] = decode(r, t.e, sub, p, "[" .. i .. "]", depth + 1)
      else
        local kt = decode(r, t.key, nil, p, "key", depth + 1)
        parts[#parts + 1] = kt .. ":" .. decode(r, t.e, sub, p, kt, depth + 1)
      end
      if r.err then break end
    end
    text = (t.k == "list" and "[" or "{") .. table.concat(parts, " ") .. (t.k == "list" and "]" or "}")
  elseif t.k == "struct" then
    text = struct(r, S[t.s], sub, path, depth)
  elseif t.k == "any" then
    local class = decode(r, "string", nil, path, name, depth + 1)
    class = class:sub(2, -2)
    local outer, inner = r:uint(path, 4), r:uint(path, 4)
    if r.err then return "" end
    if outer ~= inner + 4 or inner > r.limit - r.off then r:fail(path, "AnyDataHolder lengths " .. outer .. " and " .. inner) return "" end
    local cls = C[class]
    if cls then
      local limit = r.limit
      r.limit = r.off + inner
      text = class .. struct(r, S[cls], sub, path, depth)
      if not r.err and r.off ~= r.limit then r:fail(path, (r.limit - r.off) .. " bytes after the object's fields") end
      r.limit = limit
    else
      local g = inner > 0 and r:need(path, inner)
      text = class .. "(" .. (g and g:bytes():tohex(true) or "") .. ")"
    end
  end
  if sub then
    sub:set_text(name .. ": " .. (#text > 200 and text:sub(1, 200) .. "..." or text))
  end
  return text or ""
end

local function settings(c)
  local minor = 0
  if c.minor[0] and c.minor[1] then minor = math.min(c.minor[0], c.minor[1])
  else minor = c.minor[0] or c.minor[1] or 0 end
  local hdr = minor >= 3
  local ver = nex.prefs.nex_version
  if ver == 0 then ver = hdr and 30500 or 30400 end
  return hdr, nex.prefs.pid_size, ver
end

-- rmc decodes one whole RMC message.
local function rmc(msg, pinfo, tree, c, dir)
  local n = msg:len()
  if n < 13 or msg(0, 4):le_uint() ~= n - 4 then return end
  local t = tree:add(nex, msg(), "NEX RMC")
  local pb = msg(4, 1):uint()
  local request = band(pb, 0x80) ~= 0
  local pid, off = band(pb, 0x7f), 5
  if pid == 0x7f then pid, off = msg(5, 2):le_uint(), 7 end
  local call, method, body, kind
  if request then
    kind = "request"
    call, method = msg(off, 4):le_uint(), msg(off + 4, 4):le_uint()
    body = off + 8
  elseif msg(off, 1):uint() == 1 then
    kind = "response"
    call, method = msg(off + 1, 4):le_uint(), band(msg(off + 5, 4):le_uint(), 0x7fff)
    body = off + 9
  else
    kind = "error"
    call = msg(off + 5, 4):le_uint()
  end
  t:add(pf.kind, msg(4, 1), kind)
  t:add(pf.protocol_id, msg(4, off - 4), pid)
  if call then t:add(pf.call_id, call) end
  local variant = V[string.lower(nex.prefs.variant or "")]
  local p = (variant and variant[pid]) or P[pid]
  local m
  if kind == "error" then
    local code = msg(off + 1, 4):le_uint()
    t:add(pf.result, msg(off + 1, 4), string.format("0x%08X", bit32.bor(code, 0x80000000)))
    local req = c.calls and c.calls[(1 - dir) .. ":" .. call]
    if req then m, method = req, req.id end
  elseif p then
    m = p.m[method]
    if request and m and c then
      c.calls = c.calls or {}
      c.calls[dir .. ":" .. call] = m
    end
  end
  if method then t:add(pf.method_id, method) end
  local label = "RMC " .. kind .. " " .. pid .. "." .. tostring(method or "?")
  if p then
    t:add(pf.protocol, p.name)
    label = "RMC " .. kind .. " " .. p.name .. "." .. (m and m.name or tostring(method))
  end
  if m then t:add(pf.method, m.name) end
  pinfo.cols.protocol = "NEX"
  pinfo.cols.info:append(" " .. label)
  t:set_text(label .. " call " .. tostring(call))
  if m and not m.opaque and body then
    local fields = request and m.p or m.r
    local hdr, pidsz, ver = settings(c)
    if body >= n then
      if #fields > 0 then t:add(pf.err, "no parameters where " .. #fields .. " are described") end
      return
    end
    local r = reader(msg(body):tvb(), hdr, pidsz, ver)
    local parts = {}
    for _, f in ipairs(fields) do
      local txt = decode(r, f[2], t, f[1], f[1], 0)
      if r.err then break end
      parts[#parts + 1] = f[1] .. "=" .. txt
    end
    if not r.err and r.off ~= r.limit then r:fail("end of parameters", (r.limit - r.off) .. " bytes left") end
    if r.err then t:add(pf.err, r.err) end
    if #parts > 0 then
      local s = table.concat(parts, " ")
      if #s > 300 then s = s:sub(1, 300) .. "..." end
      pinfo.cols.info:append(" " .. s)
    end
  end
end

local TYPES = { [0] = "SYN", "CONNECT", "DATA", "DISCONNECT", "PING" }

-- data joins the payload of one DATA packet into its message (reliable packets
-- per direction and substream, in sequence; a retransmission or a gap is left
-- out) and decodes the message its last fragment completes.
local function data(tvb, pinfo, t, c, dir, key, flags, sub, seq, frag, payload)
  if not pinfo.visited and not seen[key] then
    seen[key] = true
    if band(flags, 0x002) == 0 then
      done[key] = payload:bytes()
    else
      local sk = dir .. ":" .. sub
      local want = c.next[sk]
      if want == nil or seq == want then
        c.next[sk] = (seq + 1) % 65536
        c.buf[sk] = c.buf[sk] or ByteArray.new()
        c.buf[sk]:append(payload:bytes())
        if frag == 0 then
          done[key] = c.buf[sk]
          c.buf[sk] = nil
        end
      end
    end
  end
  if done[key] then
    rmc(done[key]:tvb("NEX RMC message"), pinfo, t, c, dir)
  end
end

-- v1 dissects the PRUDP V1 packets of a datagram.
local function v1(tvb, pinfo, tree)
  local len, off, idx = tvb:len(), 0, 0
  local c, dir = conn_of(pinfo)
  pinfo.cols.protocol = "PRUDP"
  while len - off >= 30 and tvb(off, 2):uint() == 0xead0 and tvb(off + 2, 1):uint() == 1 do
    local optlen, size = tvb(off + 3, 1):uint(), tvb(off + 4, 2):le_uint()
    if len - off < 30 + optlen + size then break end
    local tf = tvb(off + 8, 2):le_uint()
    local typ, flags = band(tf, 0xf), rshift(tf, 4)
    local sub, seq = tvb(off + 11, 1):uint(), tvb(off + 12, 2):le_uint()
    local frag = 0
    local o = off + 30
    while o < off + 30 + optlen - 1 do
      local id, n = tvb(o, 1):uint(), tvb(o + 1, 1):uint()
      if id == 2 and n == 1 then frag = tvb(o + 2, 1):uint() end
      if id == 0 and n == 4 and (typ == 0 or typ == 1) then c.minor[dir] = band(tvb(o + 2, 4):le_uint(), 0xff) end
      o = o + 2 + n
    end
    local t = tree:add(pf.dialect, tvb(off, 30 + optlen + size),
      string.format("PRUDP V1 %s flags=0x%03x substream=%d seq=%d frag=%d len=%d", TYPES[typ] or tostring(typ), flags, sub, seq, frag, size))
    if typ == 2 and band(flags, 0x201) == 0 and size > 0 then
      data(tvb, pinfo, t, c, dir, pinfo.number .. ":" .. idx, flags, sub, seq, frag, tvb(off + 30 + optlen, size))
    end
    off, idx = off + 30 + optlen + size, idx + 1
  end
  return off
end

-- PRUDP V0 (3DS): no magic; a datagram is taken for V0 when its 1-byte checksum
-- verifies under the access key preference ("Checksum" in NintendoClients wiki
-- "PRUDP Protocol": the key's byte sum, the bytes after the last whole word and
-- the four bytes of the sum of the little-endian words).
local function keysum(k)
  local s = 0
  for i = 1, #k do s = s + k:byte(i) end
  return s
end

local function checksum1(tvb, n, base)
  local s, c = 0, base
  local words = n - n % 4
  for i = 0, words - 4, 4 do s = (s + tvb(i, 4):le_uint()) % 4294967296 end
  for i = words, n - 1 do c = c + tvb(i, 1):uint() end
  c = c + band(s, 0xff) + band(rshift(s, 8), 0xff) + band(rshift(s, 16), 0xff) + rshift(s, 24)
  return c % 256
end

-- v0parse returns the fields of the V0 packet that fills tvb, or nil.
local function v0parse(tvb)
  local len = tvb:len()
  local key = nex.prefs.access_key or ""
  if key == "" or len < 12 then return nil end
  local tf = tvb(2, 2):le_uint()
  local typ, flags = band(tf, 0xf), rshift(tf, 4)
  if typ > 4 then return nil end
  local seq, off, frag = tvb(9, 2):le_uint(), 11, 0
  if typ == 0 or typ == 1 then off = off + 4 end
  if typ == 2 then
    if len < off + 2 then return nil end
    frag = tvb(off, 1):uint()
    off = off + 1
  end
  local stop = len - 1
  if band(flags, 0x008) ~= 0 then
    if len < off + 3 then return nil end
    stop = off + 2 + tvb(off, 2):le_uint()
    off = off + 2
    if stop ~= len - 1 then return nil end
  end
  if stop < off or checksum1(tvb, stop, keysum(key)) ~= tvb(stop, 1):uint() then return nil end
  return typ, flags, seq, frag, off, stop - off
end

local function v0(tvb, pinfo, tree)
  local typ, flags, seq, frag, off, size = v0parse(tvb)
  if not typ then return 0 end
  local c, dir = conn_of(pinfo)
  pinfo.cols.protocol = "PRUDP"
  local t = tree:add(pf.dialect, tvb(),
    string.format("PRUDP V0 %s flags=0x%03x seq=%d frag=%d len=%d", TYPES[typ] or tostring(typ), flags, seq, frag, size))
  if typ == 2 and band(flags, 0x201) == 0 and size > 0 then
    data(tvb, pinfo, t, c, dir, pinfo.number .. ":0", flags, 0, seq, frag, tvb(off, size))
  end
  return tvb:len()
end

function nex.dissector(tvb, pinfo, tree)
  if tvb:len() >= 30 and tvb(0, 2):uint() == 0xead0 and tvb(2, 1):uint() == 1 then
    return v1(tvb, pinfo, tree)
  end
  return v0(tvb, pinfo, tree)
end

local function heuristic(tvb, pinfo, tree)
  if tvb:len() >= 30 and tvb(0, 2):uint() == 0xead0 and tvb(2, 1):uint() == 1 then
    v1(tvb, pinfo, tree)
    return true
  end
  if v0parse(tvb) then
    v0(tvb, pinfo, tree)
    return true
  end
  return false
end
nex:register_heuristic("udp", heuristic)
