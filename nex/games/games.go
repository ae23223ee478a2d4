// Package games is a table of public facts about NEX games: the game server
// id, the access key, the PRUDP dialect and, where published, the NEX version,
// each row with the source of its values. A revival starts from a game: the
// table gives gamewire serve, login, connect and decode what they need to speak
// to that game's clients.
package games

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/prudp"
)

// Game is one row of the table.
type Game struct {
	Name      string
	Platform  string // "3ds", "wiiu", "switch"
	ServerID  uint32 // the game server id
	AccessKey string
	Dialect   prudp.Dialect
	// NEXVersion is major*10000 + minor*100 + patch, 0 when not published;
	// Build says where it was read from.
	NEXVersion int
	Build      string
	// Source names the public pages the row's values come from.
	Source string
	Note   string
}

// ID is the game server id as the lists print it (8 hex digits).
func (g Game) ID() string { return fmt.Sprintf("%08X", g.ServerID) }

// Version prints the NEX version ("3.8.13"), or "" when not published.
func (g Game) Version() string {
	if g.NEXVersion == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", g.NEXVersion/10000, g.NEXVersion/100%100, g.NEXVersion%100)
}

// FriendsServerID is the game server id of the 3DS and Wii U friends server
// (nintendo-wiki "Game Servers List"): serve --game friends runs the friends
// server (nex/friends) on it.
const FriendsServerID uint32 = 0x00003200

// Sources of the table's values.
const (
	srcServers = "nintendo-wiki Game Servers List (github.com/PretendoNetwork/nintendo-wiki)"
	srcWiiU    = "Wii U NEX server list (kinnay.github.io/view.html?page=nexwiiu, data/nexwiiu.json: id, key, build name)"
	srcNCEx    = "NintendoClients examples/"
)

// fromBuild reads the NEX version out of a server build name of the Wii U list
// ("build:3_8_13_2004_0" is NEX 3.8.13).
func fromBuild(build string) int {
	f := strings.Split(strings.TrimPrefix(build, "build:"), "_")
	if len(f) < 3 {
		return 0
	}
	v := 0
	for _, s := range f[:3] {
		n, err := strconv.Atoi(s)
		if err != nil || n > 99 {
			return 0
		}
		v = v*100 + n
	}
	return v
}

func wiiu(name string, id uint32, key, build string) Game {
	return Game{Name: name, Platform: "wiiu", ServerID: id, AccessKey: key, Dialect: prudp.NEXV1,
		NEXVersion: fromBuild(build), Build: build, Source: srcWiiU}
}

func n3ds(name string, id uint32, key string) Game {
	return Game{Name: name, Platform: "3ds", ServerID: id, AccessKey: key, Dialect: prudp.NEXV0, Source: srcServers}
}

func nx(name string, id uint32, key string) Game {
	return Game{Name: name, Platform: "switch", ServerID: id, AccessKey: key, Dialect: prudp.NEXLite, Source: srcServers}
}

// Table is every game gamewire knows, 3DS, then Wii U, then Switch. The dialect
// follows the platform: 3DS games speak PRUDP V0 (NintendoClients' 3ds.cfg),
// the friends server V0 with its own signatures (friends.cfg), Wii U games V1,
// Switch games PRUDP Lite.
var Table = func() []Game {
	t := []Game{
		{Name: "Friends", Platform: "3ds", ServerID: 0x00003200, AccessKey: "ridfebb9", Dialect: prudp.NEXV0Friends,
			NEXVersion: 20000, Source: srcServers + "; NEX version: " + srcNCEx + "wiiu/friends.py",
			Note: "the 3DS and Wii U friends server"},
		n3ds("Mario Kart 7", 0x0001DB00, "6181dff1"),
		n3ds("Kid Icarus Uprising", 0x00030000, "58a7e494"),
		n3ds("Pokemon X/Y", 0x00055D01, "876138df"),
		n3ds("Luigi's Mansion 2", 0x00076400, "3861a9f8"),
		n3ds("Animal Crossing: New Leaf", 0x00086200, "d6f08b40"),
		n3ds("Pokemon Bank", 0x000C9B00, "9a2961d8"),
		n3ds("Badge Arcade", 0x00134600, "82d5962d"),
		n3ds("Metroid Prime: Federation Force", 0x0016CE00, "f79fb3c5"),
		n3ds("The Legend of Zelda: Tri Force Heroes", 0x00176E00, "c1621b84"),

		wiiu("TEKKEN TAG 2 Wii U EDITION", 269485568, "0f037f64", "build:3_4_13_3_0"),
		wiiu("MARIO & SONIC SOCHI 2014", 269510912, "585214a5", "build:3_4_13_3_0"),
		wiiu("WARRIORS OROCHI 3 Hyper", 269543936, "d74bb27d", "build:3_4_13_3_0"),
		wiiu("MARIO KART 8", 269544192, "25dbf96a", "build:3_5_16_2011_0"),
		wiiu("Puddle", 269548288, "afcffb5c", "build:3_4_13_3_0"),
		wiiu("Nano Assault Neo", 269549824, "7e484a8e", "build:3_4_13_3_0"),
		wiiu("NINJA GAIDEN 3: Razor's Edge", 269551872, "f857b4bd", "build:3_4_13_3_0"),
		wiiu("Super Smash Bros.", 269553152, "2869ba38", "build:3_6_35_2000_0"),
		wiiu("Injustice: Gods Among Us", 269555456, "65e9f4d6", "build:3_4_13_3_0"),
		wiiu("RTK 12", 269556736, "bfede098", "build:3_4_13_3_0"),
		wiiu("Sonic Transformed", 269557504, "b26a3421", "build:3_4_13_3_0"),
		wiiu("Trine 2", 269558272, "f9c35adc", "build:3_4_13_3_0"),
		wiiu("BIOHAZARD REVELATIONS UE", 269562112, "59d539a9", "build:3_4_13_3_0"),
		wiiu("Zen Pinball 2", 269563904, "2ff15f7e", "build:3_4_13_3_0"),
		wiiu("XenobladeX", 269574400, "59d7be84", "build:3_5_16_1220_0"),
		wiiu("FotNS: Ken's Rage 2", 269575680, "9994e29c", "build:3_4_13_3_0"),
		wiiu("Runner2", 269594368, "1084452a", "build:3_4_13_3_0"),
		wiiu("DuckTales: Remastered", 269651968, "1294a96c", "build:3_4_13_3_0"),
		wiiu("SONIC LOST WORLD", 269660416, "69a9fc95", "build:3_4_13_3_0"),
		wiiu("PIKMIN 3", 269663232, "f6accfc1", "build:3_4_13_3_0"),
		wiiu("FAST Racing NEO", 269676544, "811aa39f", "build:3_9_19_2005_0"),
		wiiu("Wii Sports Club", 269676800, "4d324052", "build:3_4_24_4_0"),
		wiiu("Star Wars Pinball", 269691392, "ecd0e530", "build:3_4_13_3_0"),
		wiiu("DKC: Tropical Freeze", 269764608, "7fcf384a", "build:3_4_13_3_0"),
		wiiu("Animal Crossing Plaza", 269768192, "7b9b09cb", "build:3_5_16_1000_0"),
		wiiu("\u5f79\u6e80 \u9cf3\u51f0 (Yakuman Houou)", 269784832, "23aab2d3", "build:3_6_21_2002_0"),
		wiiu("PUYOPUYOTETRIS", 269801728, "4eb0ca36", "build:3_5_16_1000_0"),
		wiiu("Splatoon", 269888256, "6f599f81", "build:3_8_15_2004_0"),
		wiiu("SI2", 269955840, "44adeb87", "build:3_6_16_2000_0"),
		wiiu("Hyrule Warriors", 269995264, "7fcc1f7c", "build:3_8_13_2004_0"),
		wiiu("Super Mario Maker", 270064384, "9f2b4678", "build:3_8_29_3022_0"),
		wiiu("Mario & Sonic Rio 2016", 270074624, "63fecb0f", "build:3_9_19_2005_0"),
		wiiu("Legend of Kay", 270086912, "478232f3", "build:3_8_13_2004_0"),
		wiiu("Terraria", 270110464, "3d37fbdb", "build:3_8_13_2004_0"),
		wiiu("Mario Tennis: Ultra Smash", 270110720, "c69b92a0", "build:3_9_19_2005_0"),
		wiiu("OlliOlli", 270163456, "60e5df12", "build:3_6_16_2000_0"),
		wiiu("Nova-111", 270273024, "bafe9856", "build:3_8_13_2004_0"),
		wiiu("POKKEN TOURNAMENT", 270292992, "6ef3adf1", "build:3_10_22_2006_0"),
		wiiu("Mighty No. 9", 270293504, "bb980c2e", "build:3_9_19_2005_0"),
		wiiu("Minecraft: Wii U Edition", 270376192, "f1b61c8e", "build:3_10_22_2006_0"),
		wiiu("Axiom Verge", 270498048, "24e0a63b", "build:3_10_22_2006_0"),

		nx("Luigi's Mansion 3", 0x20DE2100, "aab95246"),
		nx("Super Mario Maker 2", 0x22306D00, "fdf6617f"),
		nx("Super Mario Bros. 35", 0x21F12900, "0a69c592"),
		nx("Super Smash Bros. Ultimate", 0x23380901, "9587602b"),
		nx("Mario Tennis Aces", 0x23932A00, "29f267b9"),
		nx("Tetris 99", 0x23BDA200, "cdd6114d"),
		nx("NES Online", 0x240B0700, "01677bca"),
		nx("Splatoon 2", 0x2DF33D01, "4eb18d39"),
		nx("Lego Worlds", 0x24FD5300, "4d3b08ce"),
		nx("Pokemon Let's Go Pikachu/Eevee", 0x250F8F00, "38ee5943"),
		nx("Cadence of Hyrule", 0x25246E00, "6bdc2209"),
		nx("Super Mario Odyssey", 0x255BA201, "afef0ecf"),
		nx("ARMS", 0x25C08801, "b6b34c51"),
		nx("NEX Sample Demo", 0x27851C01, "3893e1b7"),
		nx("Super Kirby Clash", 0x28F1F500, "e51e3902"),
		nx("Mario Kart 8 Deluxe", 0x2B309E01, "09c1c475"),
		nx("Cave Story", 0x2BA73000, "c2a631ad"),
		nx("Dragon Quest Builders", 0x2CD9DB00, "e720a303"),
		nx("PAC-MAN 99", 0x2E471600, "1e6b25ec"),
		nx("Game Builder Garage", 0x2E99DD00, "97b08aad"),
		nx("Animal Crossing: New Horizons", 0x2EE2E300, "v43a10em"),
	}
	// NEX versions NintendoClients' examples configure their clients with.
	for i := range t {
		switch t[i].ServerID {
		case 0x1010EB00: // MARIO KART 8 (examples/wiiu/mariokart.py)
			t[i].NEXVersion, t[i].Source = 30504, t[i].Source+"; NEX version: "+srcNCEx+"wiiu/mariokart.py"
		case 0x10144800: // DKC: Tropical Freeze (examples/wiiu/donkeykong.py)
			t[i].NEXVersion, t[i].Source = 30400, t[i].Source+"; NEX version: "+srcNCEx+"wiiu/donkeykong.py"
		case 0x22306D00:
			t[i].NEXVersion, t[i].Source = 40605, t[i].Source+"; NEX version: "+srcNCEx+"switch/smm2_level.py"
			t[i].Note = "main server; the list has four more (210A9200, 83110300, 83110400, 8930141A)"
		case 0x2EE2E300:
			t[i].NEXVersion, t[i].Source = 40604, t[i].Source+"; NEX version: "+srcNCEx+"switch/animalcrossing.py"
		case 0x2DF33D01:
			t[i].Note = "main server; Testfire 24E30D00 (f25e0f69), World Premiere 2C4BFF00 (f73d3ebe)"
		}
	}
	return t
}()

// Find returns the game named by s: a game server id in hex (with or without
// 0x), or a name, matched case-insensitively as a whole or, failing that, as a
// part of exactly one name.
func Find(s string) (Game, error) {
	q := strings.ToLower(strings.TrimSpace(s))
	if q == "" {
		return Game{}, fmt.Errorf("games: no game named")
	}
	if id, err := strconv.ParseUint(strings.TrimPrefix(q, "0x"), 16, 32); err == nil && len(strings.TrimPrefix(q, "0x")) == 8 {
		for _, g := range Table {
			if g.ServerID == uint32(id) {
				return g, nil
			}
		}
	}
	var part []Game
	for _, g := range Table {
		n := strings.ToLower(g.Name)
		if n == q {
			return g, nil
		}
		if strings.Contains(n, q) {
			part = append(part, g)
		}
	}
	switch len(part) {
	case 1:
		return part[0], nil
	case 0:
		return Game{}, fmt.Errorf("games: no game %q (gamewire games lists them)", s)
	}
	names := make([]string, len(part))
	for i, g := range part {
		names[i] = g.Name
	}
	return Game{}, fmt.Errorf("games: %q names %d games: %s", s, len(part), strings.Join(names, ", "))
}

// Filter returns the games whose name, platform, server id, access key or
// dialect contains s (case-insensitive); all of them for "".
func Filter(s string) []Game {
	q := strings.ToLower(s)
	var out []Game
	for _, g := range Table {
		hay := strings.ToLower(strings.Join([]string{g.Name, g.Platform, g.ID(), g.AccessKey, g.Dialect.String()}, " "))
		if strings.Contains(hay, q) {
			out = append(out, g)
		}
	}
	return out
}
