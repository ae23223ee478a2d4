package desc

import "strings"

// initialisms are the words GoName writes in capitals, as Go names do.
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "pid": "PID", "pids": "PIDs", "gid": "GID", "gids": "GIDs",
	"url": "URL", "urls": "URLs", "uid": "UID", "utc": "UTC", "nex": "NEX", "nnid": "NNID",
	"ip": "IP", "udp": "UDP", "tcp": "TCP", "http": "HTTP", "api": "API", "mii": "Mii",
	"sql": "SQL", "rvcid": "RVCID", "cid": "CID", "nat": "NAT", "uuid": "UUID",
}

// GoName returns the exported Go name of a description name: snake_case words
// joined in CamelCase with Go's initialisms (game_mode -> GameMode, pids -> PIDs,
// m_urlRegularProtocols -> MURLRegularProtocols is avoided by callers: descriptions
// use snake_case). A name already in CamelCase keeps its inner capitals; a name
// starting with a digit gets an X in front.
func GoName(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if w == "" {
			continue
		}
		if up, ok := initialisms[strings.ToLower(w)]; ok && (w == strings.ToLower(w) || w == up) {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "X" + s
	}
	return s
}
