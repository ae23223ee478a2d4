package pipboy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Hello is the content of message type 1 ("Type 1: New Connection" in the Pip-Boy PROTOCOL.md).
type Hello struct {
	Lang    string `json:"lang"`
	Version string `json:"version"`
}

// Append appends the JSON of h followed by a newline, as the real game sends it.
func (h Hello) Append(b []byte) ([]byte, error) {
	j, err := json.Marshal(h)
	if err != nil {
		return b, err
	}
	b = append(b, j...)
	return append(b, '\n'), nil
}

// ParseHello parses the content of a type 1 message. The version must be a version
// number (digits and dots), which the official app checks too.
func ParseHello(content []byte) (Hello, error) {
	var h Hello
	if err := strictUnmarshal(content, &h); err != nil {
		return Hello{}, fmt.Errorf("pipboy: %s: %w: %w", TypeNewConnection, ErrBadJSON, err)
	}
	if !isVersion(h.Version) {
		return Hello{}, fmt.Errorf("pipboy: %s: %w: field \"version\" is %q, not a version number", TypeNewConnection, ErrBadJSON, h.Version)
	}
	return h, nil
}

func isVersion(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

// strictUnmarshal decodes one JSON object (trailing whitespace allowed) into v.
func strictUnmarshal(content []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(content))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("data after the JSON value at byte %d", d.InputOffset())
	}
	return nil
}

// CommandType is the "type" of a command request ("Type 5: Command Request").
type CommandType int

// Command types of the spec's table.
const (
	CmdUseItem            CommandType = 0
	CmdDropItem           CommandType = 1
	CmdSetFavorite        CommandType = 2
	CmdToggleComponentTag CommandType = 3
	CmdCycleSearchMode    CommandType = 4
	CmdToggleQuestMarker  CommandType = 5
	CmdPlaceCustomMarker  CommandType = 6
	CmdRemoveCustomMarker CommandType = 7
	CmdFastTravel         CommandType = 9
	CmdToggleRadio        CommandType = 12
	CmdToggleLocalMap     CommandType = 13
	CmdRefresh            CommandType = 14
)

// Command is the content of message type 5. ID is assigned by the sender
// (Client.Send numbers commands from 1 upwards).
type Command struct {
	Type CommandType `json:"type"`
	Args []any       `json:"args"`
	ID   int         `json:"id"`
}

// Append appends the JSON of c.
func (c Command) Append(b []byte) ([]byte, error) {
	if c.Args == nil {
		c.Args = []any{}
	}
	j, err := json.Marshal(c)
	if err != nil {
		return b, fmt.Errorf("pipboy: %s: %w", TypeCommandRequest, err)
	}
	return append(b, j...), nil
}

// ParseCommand parses the content of a type 5 message. Numbers among Args are
// json.Number, so 32-bit handle ids survive exactly.
func ParseCommand(content []byte) (Command, error) {
	var raw struct {
		Type *int  `json:"type"`
		Args []any `json:"args"`
		ID   *int  `json:"id"`
	}
	if err := strictUnmarshal(content, &raw); err != nil {
		return Command{}, fmt.Errorf("pipboy: %s: %w: %w", TypeCommandRequest, ErrBadJSON, err)
	}
	if raw.Type == nil || raw.ID == nil {
		return Command{}, fmt.Errorf("pipboy: %s: %w: missing field \"type\" or \"id\"", TypeCommandRequest, ErrBadJSON)
	}
	if raw.Args == nil {
		raw.Args = []any{}
	}
	return Command{Type: CommandType(*raw.Type), Args: raw.Args, ID: *raw.ID}, nil
}

// CommandResponse is the content of message type 6 ("Type 6: Command Response").
type CommandResponse struct {
	Allowed bool `json:"allowed"`
	ID      int  `json:"id"`
	Success bool `json:"success"`
}

// Append appends the JSON of r.
func (r CommandResponse) Append(b []byte) ([]byte, error) {
	j, err := json.Marshal(r)
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// ParseCommandResponse parses the content of a type 6 message.
func ParseCommandResponse(content []byte) (CommandResponse, error) {
	var raw struct {
		Allowed bool `json:"allowed"`
		ID      *int `json:"id"`
		Success bool `json:"success"`
	}
	if err := strictUnmarshal(content, &raw); err != nil {
		return CommandResponse{}, fmt.Errorf("pipboy: %s: %w: %w", TypeCommandResponse, ErrBadJSON, err)
	}
	if raw.ID == nil {
		return CommandResponse{}, fmt.Errorf("pipboy: %s: %w: missing field \"id\"", TypeCommandResponse, ErrBadJSON)
	}
	return CommandResponse{Allowed: raw.Allowed, ID: *raw.ID, Success: raw.Success}, nil
}

// Typed helpers for the command table of the Pip-Boy PROTOCOL.md. The returned Command has
// ID 0; Client.Send assigns the next id.

// UseItem uses (equips, consumes) the item with the given HandleID.
func UseItem(handleID uint32, inventoryVersion int64) Command {
	return Command{Type: CmdUseItem, Args: []any{handleID, 0, inventoryVersion}}
}

// DropItem drops count instances of an item; stackIDs is the item's whole StackID list.
func DropItem(handleID uint32, count int, inventoryVersion int64, stackIDs []int64) Command {
	return Command{Type: CmdDropItem, Args: []any{handleID, count, inventoryVersion, nonNil(stackIDs)}}
}

// SetFavorite puts an item on favourite slot position (0-5 left to right, 6-11 north to south).
func SetFavorite(handleID uint32, stackIDs []int64, position int, inventoryVersion int64) Command {
	return Command{Type: CmdSetFavorite, Args: []any{handleID, nonNil(stackIDs), position, inventoryVersion}}
}

// ToggleComponentTag toggles "tag for search" on a crafting component.
func ToggleComponentTag(componentFormID uint32, inventoryVersion int64) Command {
	return Command{Type: CmdToggleComponentTag, Args: []any{componentFormID, inventoryVersion}}
}

// CycleSearchMode cycles the search mode of an inventory page
// (0 weapons, 1 apparel, 2 aid, 3 misc, 4 junk, 5 mods, 6 ammo).
func CycleSearchMode(page int) Command {
	return Command{Type: CmdCycleSearchMode, Args: []any{page}}
}

// ToggleQuestMarker toggles the map marker of a quest; the meaning of the two other
// arguments is unknown (the spec writes them ??), so they are passed through.
func ToggleQuestMarker(questID uint32, arg2, arg3 any) Command {
	return Command{Type: CmdToggleQuestMarker, Args: []any{questID, arg2, arg3}}
}

// PlaceCustomMarker places the custom map marker at world coordinates x, y.
func PlaceCustomMarker(x, y float64) Command {
	return Command{Type: CmdPlaceCustomMarker, Args: []any{x, y, false}}
}

// RemoveCustomMarker removes the custom map marker.
func RemoveCustomMarker() Command { return Command{Type: CmdRemoveCustomMarker, Args: []any{}} }

// FastTravel travels to the location whose value id in the database is locationID.
// The game answers it with a type 6 response.
func FastTravel(locationID uint32) Command {
	return Command{Type: CmdFastTravel, Args: []any{locationID}}
}

// ToggleRadio toggles the radio station whose value id in the database is stationID
// (an element of $.Radio).
func ToggleRadio(stationID uint32) Command {
	return Command{Type: CmdToggleRadio, Args: []any{stationID}}
}

// ToggleLocalMap asks for (or stops) local map frames; apps poll with it.
func ToggleLocalMap() Command { return Command{Type: CmdToggleLocalMap, Args: []any{}} }

// Refresh is sent by the app when it changes tab; it has no response.
func Refresh() Command { return Command{Type: CmdRefresh, Args: []any{}} }

func nonNil(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

// ArgUint returns args[i] as a uint32 if it is a whole number in range.
func ArgUint(args []any, i int) (uint32, bool) {
	if i < 0 || i >= len(args) {
		return 0, false
	}
	switch x := args[i].(type) {
	case json.Number:
		var v uint64
		if _, err := fmt.Sscan(string(x), &v); err == nil && v <= 0xFFFFFFFF {
			return uint32(v), true
		}
	case uint32:
		return x, true
	case int:
		if x >= 0 && int64(x) <= 0xFFFFFFFF {
			return uint32(x), true
		}
	case float64:
		if x >= 0 && x <= 0xFFFFFFFF && x == float64(uint32(x)) {
			return uint32(x), true
		}
	}
	return 0, false
}
